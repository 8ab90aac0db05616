"""Fisher's z test of zero partial correlation, for Gaussian data."""
from __future__ import annotations

import numpy as np
from scipy import special

from .base import ASYMPTOTIC, CITest, results_table

__all__ = ["FisherZ"]


class FisherZ(CITest):
    """Fisher's z transform of the partial correlation of x and y given z.

    The statistic is ``sqrt(n - |z| - 3) * atanh(r)``, two-sided normal
    p-value. Batched: y and all candidates are residualized on [1, z] by one
    QR decomposition.
    """

    name = "fisher_z"
    method = "Fisher's Z test of zero partial correlation"
    statistic_name = "z"
    kind = "continuous"
    joint_x = False

    def check(self, tester, columns) -> None:
        tester.dataset.require_numeric(columns, self.name)

    def batch(self, tester, xs, y, z):
        if any(len(xk) != 1 for xk in xs):
            raise ValueError("test 'fisher_z' takes single variables as x, not sets")
        values = tester.dataset.numeric()
        n = tester.n
        design = np.column_stack([np.ones(n), values[:, list(z)]])
        q, _ = np.linalg.qr(design)
        block = values[:, [y] + [xk[0] for xk in xs]]
        resid = block - q @ (q.T @ block)
        norms = np.sqrt(np.einsum("ij,ij->j", resid, resid))
        with np.errstate(invalid="ignore", divide="ignore"):
            r = (resid[:, 1:].T @ resid[:, 0]) / (norms[1:] * norms[0])
        r = np.clip(np.nan_to_num(r), -1.0, 1.0)
        dof = n - len(z) - 3
        if dof < 1:
            raise ValueError(f"fisher_z needs more than |z| + 3 = {len(z) + 3} rows; got {n}")
        with np.errstate(divide="ignore"):
            stat = np.sqrt(dof) * np.arctanh(r)
            log_p = np.log(2.0) + special.log_ndtr(-np.abs(stat))
            mi = -0.5 * np.log1p(-(r**2))
        return results_table(len(xs), statistic=stat, df=np.nan,
                             pvalue=np.minimum(np.exp(log_p), 1.0),
                             log_pvalue=np.minimum(log_p, 0.0), mi=mi, calibration=ASYMPTOTIC)
