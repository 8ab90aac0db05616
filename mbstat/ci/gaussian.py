"""Fisher's z test of zero partial correlation, for Gaussian data."""
from __future__ import annotations

import numpy as np
from scipy import special

from .base import ASYMPTOTIC, SKIPPED, CITest, results_table
from .mixed import _FLAT

__all__ = ["FisherZ"]


class FisherZ(CITest):
    """Fisher's z transform of the partial correlation of x and y given z.

    The statistic is ``sqrt(n - |z| - 3) * atanh(r)``, two-sided normal
    p-value. Batched: y and all candidates are residualized on [1, z] by one
    QR decomposition. An x (or y) constant given z (its residual sd below 1e-12
    of its root mean square, whatever its units: a constant column, or an exact
    linear function of z) carries no evidence: r = 0, p = 1, as an exact constant
    (reading: scipy's pearsonr returns NaN there, R's cor.test NA; a learner
    needs a p-value, and 1 is the one that adds nothing).
    """

    name = "fisher_z"
    method = "Fisher's Z test of zero partial correlation"
    statistic_name = "z"
    kind = "continuous"
    joint_x = False

    def check(self, tester, columns) -> None:
        tester.dataset.require_numeric(columns, self.name)

    #: Honours ``na="pairwise"``: each test's correlation over its own complete rows.
    pairwise = True
    #: Runs on a data set in partitions (Dask): tables or sufficient statistics per partition.
    partitioned = True

    def batch(self, tester, xs, y, z):
        if any(len(xk) != 1 for xk in xs):
            raise ValueError("test 'fisher_z' takes single variables as x, not sets")
        ds = tester.dataset
        xcols = [xk[0] for xk in xs]
        if ds.partitioned:  # sufficient statistics (sums, cross-products) per partition
            from .counting import partitioned_moments

            r, n = partial_correlations_from_moments(partitioned_moments(ds, xcols, y, z),
                                                     len(z))
        elif ds.missing is not None and ds.missing_columns[[y, *z, *xcols]].any():
            r, n = pairwise_partial_correlations(ds.numeric(), ds.missing, y, xcols, z)
        else:
            r = partial_correlations(ds.numeric(), y, xcols, z)
            n = np.full(len(xs), float(tester.n))
        dof = n - len(z) - 3
        rows_column = getattr(tester, "rows_column", False)
        if not rows_column and (dof < 1).any():
            raise ValueError(f"fisher_z needs more than |z| + 3 = {len(z) + 3} rows; "
                             f"got {int(n.min())}")
        with np.errstate(divide="ignore", invalid="ignore"):
            stat = np.sqrt(np.maximum(dof, 0.0)) * np.arctanh(r)
            log_p = np.log(2.0) + special.log_ndtr(-np.abs(stat))
            mi = -0.5 * np.log1p(-(r**2))
        short = dof < 1  # na="pairwise": too few complete rows for this test
        stat[short], log_p[short], mi[short] = 0.0, 0.0, 0.0
        table = results_table(len(xs), extra=("n",) if rows_column else (),
                              statistic=stat, df=np.nan, pvalue=np.minimum(np.exp(log_p), 1.0),
                              log_pvalue=np.minimum(log_p, 0.0), mi=mi,
                              calibration=np.where(short, SKIPPED, ASYMPTOTIC))
        if rows_column:
            table["n"] = n
        return table


def partial_correlations(values, y: int, xcols, z) -> np.ndarray:
    """Partial correlations of the columns ``xcols`` of ``values`` with column y given the
    columns z: y and the candidates residualized on [1, z] by one QR decomposition."""
    n = values.shape[0]
    design = np.column_stack([np.ones(n), values[:, list(z)]])
    q, _ = np.linalg.qr(design)
    block = values[:, [y, *xcols]]
    resid = block - q @ (q.T @ block)
    ss = np.einsum("ij,ij->j", resid, resid)
    flat = _flat(ss, np.einsum("ij,ij->j", block, block))
    norms = np.sqrt(ss)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (resid[:, 1:].T @ resid[:, 0]) / (norms[1:] * norms[0])
    r[flat[1:] | flat[0]] = 0.0
    return np.clip(np.nan_to_num(r), -1.0, 1.0)


def _flat(resid_ss, raw_ss):
    """Whether a column is constant given z: its residual sum of squares ``resid_ss`` at most
    1e-12 squared of its raw sum of squares ``raw_ss`` (rounding leaves about 1e-16 of the
    column's magnitude in the residual of a constant: 1e8 less its mean is not 0 in floating
    point, and its correlation with y would be noise, a uniform p-value)."""
    return resid_ss <= _FLAT ** 2 * raw_ss


def pairwise_partial_correlations(values, miss, y: int, xcols, z):
    """Partial correlations (k,) and rows (k,) of the columns ``xcols`` with y given z, each
    over the rows complete for its own x, y and z (test-wise deletion; ``miss`` marks the
    missing cells). The candidates complete on the rows complete for y and z share those
    rows: one batched :func:`partial_correlations`; the others one each. Only the columns
    of a test are copied (never the whole matrix per candidate)."""
    z = list(z)
    xcols = np.asarray(xcols, dtype=np.intp)
    base = ~miss[:, [y, *z]].any(axis=1)
    r, n = np.zeros(len(xcols)), np.empty(len(xcols))
    shared = ~miss[np.ix_(base, xcols)].any(axis=0)
    n[shared] = base.sum()
    local_z = list(range(1, len(z) + 1))
    if shared.any() and n[shared][0] > len(z) + 1:
        block = values[np.ix_(base, [y, *z, *xcols[shared]])]
        r[shared] = partial_correlations(block, 0, range(len(z) + 1, block.shape[1]), local_z)
    for i in np.flatnonzero(~shared):
        kept = base & ~miss[:, xcols[i]]
        n[i] = kept.sum()
        if n[i] > len(z) + 1:
            block = values[np.ix_(kept, [y, *z, xcols[i]])]
            r[i] = partial_correlations(block, 0, [len(z) + 1], local_z)[0]
    return r, n


def partial_correlations_from_moments(moments, m: int):
    """Partial correlations (k,) and rows (k,) from each candidate's moments (k, m+3, m+3)
    of the columns [z (m columns), y, x] over its rows: entry (0, 0) the rows, the rest
    of row 0 the means, the lower-right block the centred cross-products (the sufficient
    statistics of a data set in partitions, merged by
    :func:`~mbstat.ci.counting.merge_moments`). y and x are residualized on z through
    the normal equations of the centred data (least squares where they are singular)."""
    moments = np.asarray(moments, dtype=np.float64)
    k = moments.shape[0]
    r = np.zeros(k)
    for i, g in enumerate(moments):
        c = g[1:, 1:]
        zz, zo, oo = c[:m, :m], c[:m, m:], c[m:, m:]
        s = oo - zo.T @ np.linalg.lstsq(zz, zo, rcond=None)[0] if m else oo
        if _flat(np.diag(s), np.diag(oo) + g[0, 0] * g[0, m + 1:] ** 2).any():
            continue  # y or x constant given z: r = 0
        with np.errstate(invalid="ignore", divide="ignore"):
            r[i] = s[0, 1] / np.sqrt(s[0, 0] * s[1, 1])
    return np.clip(np.nan_to_num(r), -1.0, 1.0), moments[:, 0, 0].copy()
