"""Benchmark data: Bayesian networks, synthetic generators and small real data sets.

* :func:`load_network` / :func:`sample_network` — the discrete benchmark
  networks of the bnlearn repository shipped with the package
  (:func:`list_networks`).
* :func:`make_parity` — the near-parity domains of Margaritis (2009).
* :func:`make_corral` — CorrAL, CorrAL-46 and CorrAL-47 as in Liu et al.
* :func:`make_wide_binary` — a THROMBIN-shaped wide set of sparse binary features
  with a known Markov blanket.
* :func:`make_mixed_network` — a conditional Gaussian network (discrete and continuous
  variables) with known Markov blankets.
* :func:`load_wine`, :func:`load_wdbc`, :func:`load_diabetes` — scikit-learn's
  bundled copies of the UCI data sets, as DataFrames.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ._validation import check_choice, check_int, check_number, check_seed
from .bn import BayesianNetwork, random_dag, read_bif

__all__ = [
    "DATA_DIR",
    "NETWORK_DIR",
    "list_networks",
    "load_diabetes",
    "load_network",
    "load_wdbc",
    "load_wine",
    "make_corral",
    "make_linear_gaussian",
    "make_mixed_network",
    "make_parity",
    "make_wide_binary",
    "sample_network",
]

#: Data shipped inside the package.
DATA_DIR = Path(__file__).resolve().parent / "data"
#: The benchmark networks, one gzip-compressed BIF file each.
NETWORK_DIR = DATA_DIR / "networks"

_SUFFIXES = (".bif.gz", ".bif")


# ---------------------------------------------------------------------------
# Bayesian networks
# ---------------------------------------------------------------------------


def list_networks() -> tuple:
    """Names of the networks shipped with the package, sorted.

    Returns
    -------
    tuple of str
        E.g. ``("alarm", "asia", ...)``; each is accepted by :func:`load_network`.
    """
    names = set()
    for suffix in _SUFFIXES:
        names.update(p.name[: -len(suffix)] for p in NETWORK_DIR.glob(f"*{suffix}"))
    return tuple(sorted(names))


@lru_cache(maxsize=None)
def _load_shipped(name: str) -> BayesianNetwork:
    for suffix in _SUFFIXES:
        path = NETWORK_DIR / f"{name}{suffix}"
        if path.is_file():
            return read_bif(path, name=name)
    raise FileNotFoundError(path)  # unreachable: name comes from list_networks()


def load_network(name) -> BayesianNetwork:
    """Load a benchmark network by name, or any BIF file by path.

    Parameters
    ----------
    name : str or os.PathLike
        A name from :func:`list_networks` (case-insensitive), or the path to
        a ``.bif`` or ``.bif.gz`` file.

    Returns
    -------
    BayesianNetwork
        Shipped networks are parsed once and cached; the object is immutable,
        so the cached copy is shared safely.

    Raises
    ------
    ValueError
        If ``name`` is neither a shipped network nor an existing file; the
        message lists the available networks.

    Examples
    --------
    >>> load_network("asia")
    <BayesianNetwork asia: 8 nodes, 8 arcs>
    """
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(f"name must be a network name or a path; got {type(name).__name__}")
    available = list_networks()
    if isinstance(name, str) and name.lower() in available:
        return _load_shipped(name.lower())
    path = Path(os.fspath(name))
    if path.is_file():
        return read_bif(path)
    if path.suffix.lower() in (".bif", ".gz") or len(path.parts) > 1:  # meant as a path
        why = "is a folder" if path.is_dir() else "does not exist"
        raise ValueError(f"name: the file {os.fspath(name)!r} {why}; give the path to a "
                         f".bif/.bif.gz file or one of {', '.join(available)}")
    raise ValueError(
        f"name must be one of {', '.join(available)} or the path to a .bif/.bif.gz file; "
        f"got {os.fspath(name)!r}"
    )


def sample_network(name, n: int, seed=None) -> pd.DataFrame:
    """Draw ``n`` rows from a network.

    Parameters
    ----------
    name : str, os.PathLike or BayesianNetwork
        As in :func:`load_network`, or a network object.
    n : int
        Number of rows.
    seed : None, int or numpy.random.Generator

    Returns
    -------
    DataFrame
        Categorical columns in the network's topological node order; see
        :meth:`BayesianNetwork.sample`.
    """
    net = name if isinstance(name, BayesianNetwork) else load_network(name)
    return net.sample(n, seed=seed)


# ---------------------------------------------------------------------------
# Synthetic data
# ---------------------------------------------------------------------------


def make_parity(n_vars: int, n_samples: int, noise: float = 0.1, bit_p: float = 0.6,
                seed=None, *, distractor_p=None) -> pd.DataFrame:
    """Near-parity domain of Margaritis (2009, Section 5).

    ``X2, X3, X4`` are independent Bernoulli(``bit_p``) bits and
    ``X1 = X2 xor X3 xor X4``, inverted with probability ``noise``;
    ``X5 .. Xn`` are independent distractors. The Markov boundary of ``X1``
    is ``{X2, X3, X4}``, and with ``bit_p = 0.5`` each of them is independent
    of ``X1`` given any proper subset of the other two, so it only shows up
    when all three are considered together.

    Parameters
    ----------
    n_vars : int
        Total number of variables (>= 4); the paper uses 10 to 100.
    n_samples : int
        Number of rows (>= 1).
    noise : float, default 0.1
        Probability that ``X1`` is inverted, in [0, 1] (the paper: 0.1 in
        Fig. 1 and 0 to 0.4 in Fig. 2).
    bit_p : float, default 0.6
        ``P(Xi = 1)`` for ``X2, X3, X4``, in [0, 1] (the paper's 0.60).
    seed : None, int or numpy.random.Generator
    distractor_p : float or array-like, optional
        ``P(Xi = 1)`` of the distractors ``X5 .. Xn``: one number for all or
        one per distractor. By default each distractor gets its own
        probability drawn uniformly from (0, 1).

    Returns
    -------
    DataFrame
        Columns ``"X1" .. "Xn"`` of int64 zeros and ones.

    Notes
    -----
    The paper says the four variables are "related through a near-parity
    relation with bit probability 0.60", the target ``X1`` "was perturbed
    (inverted) by noise", and the distractors "had randomly assigned
    probabilities". We read "bit probability" as the success probability of
    the three input bits, the noise as flipping the parity value, and the
    distractor probabilities as independent Uniform(0, 1) draws (the range is
    not given in the paper; pass ``distractor_p=bit_p`` for distractors
    distributed like the inputs). With ``bit_p != 0.5`` each input bit is
    weakly dependent on ``X1`` on its own (hence *near* parity).

    References
    ----------
    D. Margaritis, "Toward provably correct feature selection in arbitrary
    domains", NIPS 2009.
    """
    n_vars = check_int("n_vars", n_vars, low=4)
    n_samples = check_int("n_samples", n_samples, low=1)
    noise = check_number("noise", noise, low=0.0, high=1.0)
    bit_p = check_number("bit_p", bit_p, low=0.0, high=1.0)
    rng = check_seed(seed)
    n_dis = n_vars - 4
    if distractor_p is None:
        dis_p = rng.random(n_dis)
    else:
        dis_p = np.asarray(distractor_p, dtype=np.float64)
        if not (np.isfinite(dis_p).all() and (dis_p >= 0).all() and (dis_p <= 1).all()):
            raise ValueError(f"distractor_p must lie in [0, 1]; got {distractor_p!r}")
        if dis_p.ndim == 0:
            dis_p = np.full(n_dis, float(dis_p))
        if dis_p.shape != (n_dis,):
            raise ValueError(
                f"distractor_p must be a number or have one entry per distractor "
                f"({n_dis}); got shape {dis_p.shape}"
            )
    bits = (rng.random((n_samples, 3)) < bit_p).astype(np.int64)
    flip = (rng.random(n_samples) < noise).astype(np.int64)
    x1 = np.bitwise_xor.reduce(bits, axis=1) ^ flip
    dis = (rng.random((n_samples, n_dis)) < dis_p).astype(np.int64)
    values = np.column_stack([x1, bits, dis])
    return pd.DataFrame(values, columns=[f"X{i + 1}" for i in range(n_vars)])


_CORRAL_KINDS = ("corral", "corral46", "corral47")


def make_corral(kind: str = "corral", seed=None, n_samples: int = 1024) -> pd.DataFrame:
    """CorrAL, CorrAL-46 or CorrAL-47 as in Liu et al. (Section V-A).

    Every row holds four independent relevant bits ``A0, A1, B0, B1`` and the
    class ``(A0 and A1) or (B0 and B1)``; the 16 combinations of the four bits
    occur equally often (``n_samples / 16`` times each), in random row order.

    * ``"corral"`` — 6 features ``A0, A1, B0, B1, I, R``: ``I`` is uniformly
      random (irrelevant) and ``R`` equals the class on exactly 75% of the
      rows (redundant given the four relevant bits).
    * ``"corral47"`` — 47 features: ``A0, A1, B0, B1, R``; 14 irrelevant
      ones: ``I1, I2`` uniformly random and copies ``I1_1 .. I1_6`` of ``I1``
      and ``I2_1 .. I2_6`` of ``I2``; and 28 redundant ones ``A0_k, A1_k,
      B0_k, B1_k`` (``k = 0 .. 6``), each a copy of its relevant bit with
      exactly ``k/16`` of the rows inverted.
    * ``"corral46"`` — CorrAL-47 without ``R`` (46 features).

    Parameters
    ----------
    kind : {"corral", "corral46", "corral47"}
    seed : None, int or numpy.random.Generator
    n_samples : int, default 1024
        Number of rows, a positive multiple of 16 (the paper uses 1024), so
        that the combinations are balanced and the stated agreement rates
        hold exactly.

    Returns
    -------
    DataFrame
        int64 0/1 feature columns in the order listed above, then the
        ``"class"`` column.

    Notes
    -----
    The paper says the 12 extra irrelevant features are each "completely
    correlated" with ``I1`` or ``I2``; we read this as exact copies, six of
    each, matching the names ``I1_1 .. I1_6`` and ``I2_1 .. I2_6`` in its
    Table I. Mismatching rows are chosen uniformly without replacement.

    References
    ----------
    Y. Liu, F. Tang, Z. Zeng, "Feature selection based on dependency margin",
    IEEE Trans. Cybernetics 45(6), 2015.
    """
    check_choice("kind", kind, _CORRAL_KINDS)
    n = check_int("n_samples", n_samples, low=16)
    if n % 16:
        raise ValueError(f"n_samples must be a positive multiple of 16; got {n_samples!r}")
    rng = check_seed(seed)
    combos = (np.arange(16)[:, None] >> np.arange(3, -1, -1)) & 1  # 16 x 4 truth table
    rows = np.repeat(combos, n // 16, axis=0)[rng.permutation(n)]
    a0, a1, b0, b1 = rows.T
    target = (a0 & a1) | (b0 & b1)

    def mismatch(x, count):
        """``x`` with exactly ``count`` rows inverted."""
        out = x.copy()
        out[rng.choice(n, size=count, replace=False)] ^= 1
        return out

    def coin():
        return rng.integers(0, 2, size=n, dtype=np.int64)

    cols = {"A0": a0, "A1": a1, "B0": b0, "B1": b1}
    if kind == "corral":
        cols["I"] = coin()
        cols["R"] = mismatch(target, n // 4)
    else:
        r = mismatch(target, n // 4)
        if kind == "corral47":
            cols["R"] = r
        i1, i2 = coin(), coin()
        cols["I1"], cols["I2"] = i1, i2
        for base, x in (("I1", i1), ("I2", i2)):
            for k in range(1, 7):
                cols[f"{base}_{k}"] = x.copy()
        for base in ("A0", "A1", "B0", "B1"):
            for k in range(7):
                cols[f"{base}_{k}"] = mismatch(cols[base], k * n // 16)
    cols["class"] = target
    return pd.DataFrame({k: np.asarray(v, dtype=np.int64) for k, v in cols.items()})


# ---------------------------------------------------------------------------
# Wide binary data
# ---------------------------------------------------------------------------

#: Columns generated per block by :func:`make_wide_binary` (bounds its working memory).
_WIDE_BLOCK = 4096


def make_wide_binary(n_rows: int = 1909, n_features: int = 139351, *, n_parents: int = 3,
                     n_children: int = 2, n_copies: int = 2, density: float = 0.015,
                     relevant_p: float = 0.3, noise: float = 0.1, sparse: bool = False,
                     seed=None) -> pd.DataFrame:
    """A THROMBIN-shaped data set: many sparse binary features, a binary target ``y``
    whose Markov blanket is known.

    The default shape is THROMBIN's (KDD Cup 2001; MBOR's scalability case): 1,909 rows
    and 139,351 binary features. The columns follow a Bayesian network:

    * ``P1 .. Pk`` (``n_parents``): Bernoulli(``relevant_p``) parents of ``y``, which is
      Bernoulli(``sigmoid(-2 + 2 * (P1 + ... + Pk))``);
    * ``C1 .. Cm`` (``n_children``): children of ``y``, each with one more parent, the
      spouse ``Sj`` (Bernoulli(``relevant_p``)): ``Cj = (y or Sj)``, inverted with
      probability ``noise``;
    * ``RPi_c``, ``RCj_c`` (``n_copies`` per parent and child): noisy copies of ``Pi`` and ``Cj``
      (each row inverted with probability ``noise``): strongly associated with ``y`` but
      outside its blanket (a child of a parent, a child of a child);
    * ``X1 ..``: the rest, independent Bernoulli columns whose densities are drawn from
      a Gamma(0.5) distribution with mean ``density`` (THROMBIN's columns are 1-2%
      ones; many are nearly empty), capped at 0.5.

    The Markov blanket of ``y`` is ``{P*, C*, S*}`` (``df.attrs["blanket"]``; also
    ``"parents"``, ``"children"``, ``"spouses"``). Columns are in a random order (same
    seed, same order), ``y`` last.

    Parameters
    ----------
    n_rows : int, default 1909
    n_features : int, default 139351
        Features besides ``y``, at least ``n_parents + 2 * n_children`` plus the copies.
    n_parents, n_children, n_copies : int
        Parents (>= 1), children (>= 0, each with a spouse), noisy copies of each (>= 0).
    density : float, default 0.015
        Mean share of ones in the independent columns, in (0, 0.5].
    relevant_p : float, default 0.3
        Share of ones of the parents and spouses, in (0, 1).
    noise : float, default 0.1
        Inversion probability of the children and copies, in [0, 0.5).
    sparse : bool, default False
        Columns as pandas sparse arrays (``SparseDtype("uint8", 0)``) instead of dense
        uint8; built one block of columns at a time, never as one dense matrix.
    seed : None, int or numpy.random.Generator

    Returns
    -------
    DataFrame
        ``n_rows`` x (``n_features`` + 1) of uint8 zeros and ones, ``y`` last.

    Examples
    --------
    >>> df = make_wide_binary(500, 2000, seed=0)
    >>> df.shape, df.attrs["blanket"]
    ((500, 2001), ('P1', 'P2', 'P3', 'C1', 'C2', 'S1', 'S2'))
    """
    n_rows = check_int("n_rows", n_rows, low=2)
    n_parents = check_int("n_parents", n_parents, low=1)
    n_children = check_int("n_children", n_children, low=0)
    n_copies = check_int("n_copies", n_copies, low=0)
    n_rel = n_parents + 2 * n_children + n_copies * (n_parents + n_children)
    n_features = check_int("n_features", n_features, low=n_rel)
    density = check_number("density", density, low=0.0, high=0.5, closed="right")
    relevant_p = check_number("relevant_p", relevant_p, low=0.0, high=1.0, closed="neither")
    noise = check_number("noise", noise, low=0.0, high=0.5, closed="left")
    rng = check_seed(seed)

    def bits(p, size=n_rows):
        return rng.random(size) < p

    cols = {}
    for i in range(n_parents):
        cols[f"P{i + 1}"] = bits(relevant_p)
    logit = -2.0 + 2.0 * sum(cols[f"P{i + 1}"].astype(np.float64) for i in range(n_parents))
    y = rng.random(n_rows) < 1.0 / (1.0 + np.exp(-logit))
    for j in range(n_children):
        cols[f"S{j + 1}"] = bits(relevant_p)
        cols[f"C{j + 1}"] = (y | cols[f"S{j + 1}"]) ^ bits(noise)
    for base in [f"P{i + 1}" for i in range(n_parents)] + [f"C{j + 1}" for j in range(n_children)]:
        for c in range(n_copies):
            cols[f"R{base}_{c + 1}"] = cols[base] ^ bits(noise)
    n_noise = n_features - len(cols)
    dens = np.minimum(rng.gamma(0.5, 2.0 * density, n_noise), 0.5)
    names = [*cols, *(f"X{i + 1}" for i in range(n_noise))]
    order = rng.permutation(n_features)  # position of each name among the features
    columns = np.empty(n_features, dtype=object)
    columns[order] = names
    relevant = np.column_stack(list(cols.values())).astype(np.uint8)
    at = np.argsort(order)  # the name at each position

    def block(lo, hi):
        """Columns lo..hi-1 (feature positions) as a dense uint8 block."""
        out = np.empty((n_rows, hi - lo), dtype=np.uint8)
        which = at[lo:hi]
        is_rel = which < len(cols)
        out[:, is_rel] = relevant[:, which[is_rel]]
        noise_at = which[~is_rel] - len(cols)
        out[:, ~is_rel] = rng.random((n_rows, len(noise_at))) < dens[noise_at]
        return out

    blanket = dict(parents=tuple(f"P{i + 1}" for i in range(n_parents)),
                   children=tuple(f"C{j + 1}" for j in range(n_children)),
                   spouses=tuple(f"S{j + 1}" for j in range(n_children)))
    if sparse:
        from scipy import sparse as sp

        parts = [sp.csc_array(block(lo, min(lo + _WIDE_BLOCK, n_features)))
                 for lo in range(0, n_features, _WIDE_BLOCK)]
        parts.append(sp.csc_array(y.astype(np.uint8)[:, None]))
        df = pd.DataFrame.sparse.from_spmatrix(sp.hstack(parts, format="csc"),
                                               columns=[*columns, "y"])
    else:
        values = np.empty((n_rows, n_features + 1), dtype=np.uint8)
        for lo in range(0, n_features, _WIDE_BLOCK):
            hi = min(lo + _WIDE_BLOCK, n_features)
            values[:, lo:hi] = block(lo, hi)
        values[:, -1] = y
        df = pd.DataFrame(values, columns=[*columns, "y"], copy=False)
    df.attrs.update(blanket=blanket["parents"] + blanket["children"] + blanket["spouses"],
                    **blanket)
    return df


# ---------------------------------------------------------------------------
# Real data (scikit-learn's bundled copies)
# ---------------------------------------------------------------------------


def _sklearn_datasets(func: str):
    try:
        from sklearn import datasets
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"{func}() needs scikit-learn, which ships the data; "
            "install it with `pip install scikit-learn`"
        ) from exc
    return datasets


def _frame(bunch, target: str) -> pd.DataFrame:
    df = pd.DataFrame(np.array(bunch.data), columns=[str(c) for c in bunch.feature_names])
    df[target] = np.array(bunch.target)
    return df


def load_wine() -> pd.DataFrame:
    """The UCI Wine data: 178 wines, 13 continuous features, 3 cultivars.

    Returns
    -------
    DataFrame
        The features (float64) and an int64 ``"class"`` column with values
        0, 1, 2 (scikit-learn's ``class_0 .. class_2``).
    """
    return _frame(_sklearn_datasets("load_wine").load_wine(), "class")


def load_wdbc() -> pd.DataFrame:
    """The UCI Wisconsin Diagnostic Breast Cancer data (WDBC).

    Returns
    -------
    DataFrame
        569 rows: 30 continuous features (float64) and an int64 ``"class"``
        column, 0 for malignant (212) and 1 for benign (357), as coded by
        scikit-learn.
    """
    return _frame(_sklearn_datasets("load_wdbc").load_breast_cancer(), "class")


def load_diabetes(scaled: bool = True) -> pd.DataFrame:
    """The diabetes regression data of Efron et al. (2004).

    Parameters
    ----------
    scaled : bool, default True
        Features mean-centred and scaled to unit Euclidean norm, as
        scikit-learn ships them by default; False gives the original values.

    Returns
    -------
    DataFrame
        442 rows: 10 features (float64) and a float64 ``"target"`` column,
        a measure of disease progression one year after baseline.
    """
    if not isinstance(scaled, bool):
        raise TypeError(f"scaled must be a bool; got {type(scaled).__name__}")
    return _frame(_sklearn_datasets("load_diabetes").load_diabetes(scaled=scaled), "target")


# ---------------------------------------------------------------------------
# A conditional Gaussian network
# ---------------------------------------------------------------------------

#: The DAG of :func:`make_mixed_network`: node -> parents, in a topological order. A-D and
#: N2 are discrete (discrete parents only, as a CG network requires), the rest continuous.
_MIXED_DAG = {
    "A": (), "B": (), "N1": (), "N2": (),
    "C": ("A", "B"), "E": ("A",), "D": ("C",),
    "F": ("B", "E"), "G": ("C", "F"), "H": ("E", "F"),
    "I": ("D", "G"), "J": ("G", "H"), "K": ("D",),
}
_MIXED_LEVELS = {"A": 2, "B": 3, "C": 2, "D": 3, "N2": 3}


def make_mixed_network(n_rows: int = 1000, *, strength: float = 1.0, seed=None) -> pd.DataFrame:
    """A sample of a conditional Gaussian (CG) Bayesian network with known Markov blankets.

    Thirteen variables: discrete ``A`` (2 levels), ``B`` (3), ``C`` (2, parents A, B),
    ``D`` (3, parent C) and ``N2`` (3, isolated); continuous ``E`` (parent A), ``F`` (B, E),
    ``G`` (C, F), ``H`` (E, F), ``I`` (D, G), ``J`` (G, H), ``K`` (D) and ``N1`` (isolated).
    Each continuous variable is linear in its continuous parents, its intercept shifted by
    the configuration of its discrete parents, with unit residual variance (Lauritzen &
    Wermuth 1989). Discrete children follow random conditional probability tables
    (Dirichlet(1) rows, tempered towards the uniform when ``strength`` < 1). Slopes have
    magnitudes uniform in [0.5, 1] and random signs; the intercept shifts are spaced
    ``strength`` apart (0, 1, 2, ... times ``strength`` in a random order).

    Parameters
    ----------
    n_rows : int, default 1000
    strength : float, default 1.0
        Scale of the slopes and shifts (> 0); smaller is harder.
    seed : None, int or numpy.random.Generator
        The same seed gives the same network and sample.

    Returns
    -------
    DataFrame
        Discrete columns as categoricals with text levels (``"a0"``, ``"a1"``, ...),
        continuous ones as floats. ``df.attrs["parents"]`` (node -> parents) and
        ``df.attrs["blankets"]`` (node -> its Markov blanket, sorted) give the truth.

    Examples
    --------
    >>> df = make_mixed_network(500, seed=0)
    >>> df.attrs["blankets"]["G"]
    ('C', 'D', 'F', 'H', 'I', 'J')
    """
    n_rows = check_int("n_rows", n_rows, low=2)
    strength = check_number("strength", strength, low=0.0, closed="right")
    rng = check_seed(seed)
    codes, values = {}, {}
    for node, parents in _MIXED_DAG.items():  # a loop over the 13 nodes, vectorized over rows
        dparents = [p for p in parents if p in _MIXED_LEVELS]
        config = np.zeros(n_rows, dtype=np.int64)
        n_config = 1
        for p in dparents:
            config = config * _MIXED_LEVELS[p] + codes[p]
            n_config *= _MIXED_LEVELS[p]
        if node in _MIXED_LEVELS:
            k = _MIXED_LEVELS[node]
            probs = rng.dirichlet(np.ones(k), size=n_config)
            probs = strength * probs + (1 - min(strength, 1.0)) / k if strength < 1 else probs
            probs = probs / probs.sum(axis=1, keepdims=True)
            cum = probs.cumsum(axis=1)[config]
            codes[node] = (rng.random(n_rows)[:, None] > cum[:, :-1]).sum(axis=1)
        else:
            shifts = strength * rng.permutation(n_config).astype(np.float64)
            mean = shifts[config]
            for p in parents:
                if p not in _MIXED_LEVELS:
                    slope = strength * rng.uniform(0.5, 1.0) * rng.choice([-1.0, 1.0])
                    parent = values[p]
                    mean = mean + slope * (parent - parent.mean()) / parent.std()
            values[node] = mean + rng.standard_normal(n_rows)
    cols = {}
    for node in _MIXED_DAG:
        if node in _MIXED_LEVELS:
            letter = node.lower()
            levels = [f"{letter}{i}" for i in range(_MIXED_LEVELS[node])]
            cols[node] = pd.Categorical.from_codes(codes[node], categories=levels)
        else:
            cols[node] = values[node]
    df = pd.DataFrame(cols)
    children = {v: [c for c, ps in _MIXED_DAG.items() if v in ps] for v in _MIXED_DAG}
    blankets = {}
    for v, ps in _MIXED_DAG.items():
        spouses = [p for c in children[v] for p in _MIXED_DAG[c] if p != v]
        blankets[v] = tuple(sorted({*ps, *children[v], *spouses}))
    df.attrs["parents"] = dict(_MIXED_DAG)
    df.attrs["blankets"] = blankets
    return df


# ---------------------------------------------------------------------------
# Linear Gaussian networks
# ---------------------------------------------------------------------------


def make_linear_gaussian(n_nodes: int = 50, n_rows: int = 1000, *, edge_prob=None,
                         max_parents=3, strength: float = 1.0, seed=None) -> pd.DataFrame:
    """A sample of a random linear Gaussian Bayesian network with known Markov blankets.

    The DAG is :func:`mbstat.bn.random_dag`'s (nodes ``"X1" .. "Xn"`` in a hidden random
    order; ``edge_prob`` and ``max_parents`` as there). Each node is a linear structural
    equation in its parents plus an independent N(0, 1) error: ``X_j = sum_k b_jk X_k + e_j``
    with ``b_jk = s_jk / sd(X_k)``, ``|s_jk|`` uniform in [0.5, 1] times ``strength``, random
    signs, and ``sd(X_k)`` the model's (not the sample's) standard deviation of the parent:
    every parent contributes on the same scale, whatever its depth, so that no node is
    (nearly) a deterministic function of its parents. With random coefficients the
    distribution is faithful to the DAG with probability 1 (Spirtes, Glymour & Scheines
    2000, theorem 3.2): the Markov blanket of a node (parents, children and the children's
    other parents) is the set of variables it depends on given the rest.

    Parameters
    ----------
    n_nodes : int, default 50
    n_rows : int, default 1000
    edge_prob : float, optional
        Probability of each arc between positions i < j of the random order (default:
        about ``n_nodes`` arcs, see :func:`~mbstat.bn.random_dag`).
    max_parents : int, optional, default 3
        Cap on the in-degree (None for no cap).
    strength : float, default 1.0
        Scale of the standardized coefficients (> 0); smaller is harder.
    seed : None, int or numpy.random.Generator
        The same seed gives the same network and sample.

    Returns
    -------
    DataFrame
        One float column per node (``X1 .. Xn``). ``df.attrs["parents"]`` (node -> parents,
        in a topological order of the nodes), ``df.attrs["coefficients"]`` (node -> {parent:
        b_jk}) and ``df.attrs["blankets"]`` (node -> its Markov blanket, sorted) give the truth; the
        blankets are those d-separation gives in the DAG (``mbstat.bn.d_separated``).

    Examples
    --------
    >>> df = make_linear_gaussian(20, 500, seed=0)
    >>> df.shape
    (500, 20)
    """

    n_nodes = check_int("n_nodes", n_nodes, low=1)
    n_rows = check_int("n_rows", n_rows, low=2)
    strength = check_number("strength", strength, low=0.0, closed="right")
    rng = check_seed(seed)
    net = random_dag(n_nodes, edge_prob, max_parents, seed=rng, levels=2)
    order = list(net.nodes)  # topological
    pos = {v: i for i, v in enumerate(order)}
    cov = np.zeros((n_nodes, n_nodes))
    values = np.empty((n_rows, n_nodes))
    coefficients = {}
    for j, node in enumerate(order):
        ps = [pos[q] for q in net.parents[node]]
        s = strength * rng.uniform(0.5, 1.0, len(ps)) * rng.choice([-1.0, 1.0], len(ps))
        b = s / np.sqrt(cov[ps, ps]) if ps else s
        coefficients[node] = {order[k]: float(c) for k, c in zip(ps, b)}
        cov[j, :j] = b @ cov[ps, :j] if ps else 0.0
        cov[:j, j] = cov[j, :j]
        cov[j, j] = (b @ cov[np.ix_(ps, ps)] @ b if ps else 0.0) + 1.0
        values[:, j] = (values[:, ps] @ b if ps else 0.0) + rng.standard_normal(n_rows)
    names = sorted(order, key=lambda v: int(v[1:]))
    idx = [pos[v] for v in names]
    df = pd.DataFrame(values[:, idx], columns=names)
    df.attrs["parents"] = {v: tuple(net.parents[v]) for v in order}
    df.attrs["coefficients"] = coefficients
    df.attrs["blankets"] = {v: tuple(sorted(net.markov_blanket(v), key=lambda u: int(u[1:])))
                            for v in names}
    return df
