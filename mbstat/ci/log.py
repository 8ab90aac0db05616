"""The log of a tester's tests: a compact store (:class:`LogBuilder`), a DataFrame when called."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .result import _CALIBRATION, CALIBRATIONS, FIELDS, SKIPPED, _set_label, decide

__all__ = ["LogBuilder", "empty_log"]


@dataclass(frozen=True, eq=False)
class LogBuilder:
    """The compact store of a tester's tests (see :meth:`CITester.log_builder`); called,
    the log as a DataFrame. Picklable."""

    names: tuple
    entries: tuple  # (x keys, y, z key, first row, phase) per batch
    matrix: np.ndarray
    alpha: float
    columns: tuple

    def __call__(self) -> pd.DataFrame:
        columns, k = self.columns, len(self.matrix)
        if not k:
            return empty_log(tuple(c for c in columns if c not in FIELDS))
        names = np.array(self.names, dtype=object)
        x = np.empty(k, dtype=object)
        y = np.empty(k, dtype=np.int64)
        z = np.empty(k, dtype=object)
        phase = np.empty(k, dtype=object)
        z_labels = {}
        for i, (todo, yi, zkey, first, ph) in enumerate(self.entries):
            last = self.entries[i + 1][3] if i + 1 < len(self.entries) else k
            if isinstance(todo, np.ndarray):
                x[first:last] = names[todo]
            else:
                x[first:last] = [_set_label(names[list(xk)].tolist()) for xk in todo]
            y[first:last] = yi
            label = z_labels.get(zkey)
            if label is None:
                label = z_labels[zkey] = ", ".join(names[list(zkey)].tolist())
            z[first:last] = label
            phase[first:last] = ph
        matrix = self.matrix
        codes = matrix[:, _CALIBRATION].astype(np.intp)
        data = {"x": pd.array(x, dtype="str"), "y": pd.array(names[y], dtype="str"),
                "z": pd.array(z, dtype="str")}
        data.update((name, matrix[:, j].copy()) for j, name in enumerate(columns)
                    if name != "calibration")
        data.update(independent=decide(matrix[:, 2], matrix[:, _CALIBRATION], self.alpha),
                    skipped=codes == SKIPPED,
                    calibration=pd.array(np.array(CALIBRATIONS, dtype=object)[codes],
                                         dtype="str"),
                    phase=pd.array(phase, dtype="str"))
        return pd.DataFrame(data, index=pd.RangeIndex(1, k + 1, name="test"))


def empty_log(extra=()) -> pd.DataFrame:
    """A tests log with no rows, with the columns and dtypes of :attr:`CITester.log`."""
    names = ("x", "y", "z", *(f for f in (*FIELDS, *extra) if f != "calibration"),
             "independent", "skipped", "calibration", "phase")
    dtypes = {name: str if name in ("x", "y", "z", "calibration", "phase") else
              bool if name in ("independent", "skipped") else float for name in names}
    frame = pd.DataFrame(columns=list(names), index=pd.RangeIndex(1, 1, name="test"))
    return frame.astype(dtypes)
