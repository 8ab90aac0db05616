"""Reading networks in the BIF interchange format of the bnlearn repository."""
from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

import numpy as np

from .dag import _topological_order
from .network import ROW_SUM_TOL, BayesianNetwork

__all__ = ["read_bif", "RENORMALIZE_TOL"]

#: Largest deviation of a CPT row sum from 1 that :func:`read_bif` silently renormalizes.
RENORMALIZE_TOL = 1e-3

_TOKEN = re.compile(
    r'"(?P<quoted>[^"]*)"'
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<punct>[{}()\[\];,|])"
    r"|(?P<word>(?:[^\s{}()\[\];,|\"/]|/(?![/*]))+)"
    r"|(?P<space>\s+)"
    r"|(?P<bad>.)",
    re.DOTALL,
)


class _Tokens:
    """Token stream over BIF text that knows line numbers for messages."""

    def __init__(self, text: str, source: str):
        self.text = text
        self.source = source
        toks = []
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup
            if kind in ("comment", "space"):
                continue
            if kind == "bad":
                if m.group().startswith("/*"):
                    raise self._error(m.start(), "unterminated /* comment")
                raise self._error(m.start(), f"unexpected character {m.group()!r}")
            value = m.group("quoted") if kind == "quoted" else m.group()
            toks.append((value, m.start(), kind == "punct"))
        self.toks = toks
        self.i = 0

    def _error(self, pos: int, msg: str) -> ValueError:
        line = self.text.count("\n", 0, pos) + 1
        return ValueError(f"{self.source}, line {line}: {msg}")

    def error(self, msg: str) -> ValueError:
        pos = self.toks[self.i][1] if self.i < len(self.toks) else len(self.text)
        return self._error(pos, msg)

    def peek(self):
        return self.toks[self.i][0] if self.i < len(self.toks) else None

    def peek_punct(self):
        """The next token if it is (unquoted) punctuation, else None."""
        if self.i < len(self.toks) and self.toks[self.i][2]:
            return self.toks[self.i][0]
        return None

    def next(self, what: str = "a token"):
        if self.i >= len(self.toks):
            raise self.error(f"unexpected end of file, expected {what}")
        tok = self.toks[self.i][0]
        self.i += 1
        return tok

    def name(self, what: str) -> str:
        if self.i >= len(self.toks):
            raise self.error(f"unexpected end of file, expected {what}")
        tok, _, punct = self.toks[self.i]
        if punct:
            raise self.error(f"expected {what}, found {tok!r}")
        self.i += 1
        return tok

    def expect(self, punct: str):
        if self.peek_punct() != punct:
            found = self.peek()
            found = "end of file" if found is None else repr(found)
            raise self.error(f"expected {punct!r}, found {found}")
        self.i += 1

    def skip_statement(self):
        """Skip to just after the next ';' (e.g. a property)."""
        while True:
            if self.next("';'") == ";" and self.toks[self.i - 1][2]:
                return

    def skip_block(self):
        """Skip a balanced { ... } block whose '{' is next."""
        self.expect("{")
        depth = 1
        while depth:
            tok = self.next("'}'")
            if self.toks[self.i - 1][2]:
                depth += tok == "{"
                depth -= tok == "}"

    def name_list(self, close: str, what: str) -> list:
        """Names separated by commas or whitespace, up to ``close`` (consumed)."""
        out = []
        while self.peek_punct() != close:
            if self.peek_punct() == ",":
                self.i += 1
                continue
            out.append(self.name(what))
        self.i += 1
        return out

    def numbers(self, what: str) -> list:
        """Numbers separated by commas or whitespace, up to ';' (consumed)."""
        out = []
        while True:
            p = self.peek_punct()
            if p == ";":
                self.i += 1
                return out
            if p == ",":
                self.i += 1
                continue
            if p is not None:
                raise self.error(f"expected a probability in {what}, found {p!r}")
            tok = self.name("a probability")
            try:
                out.append(float(tok))
            except ValueError:
                raise self.error(f"expected a probability in {what}, found {tok!r}") from None


def read_bif(path, name: str | None = None) -> BayesianNetwork:
    """Read a Bayesian network in BIF format.

    Parameters
    ----------
    path : str or os.PathLike
        A ``.bif`` file, or a gzip-compressed one (detected by its content,
        whatever the suffix).
    name : str, optional
        Name of the network. Default: the name on the ``network`` line, or the
        file name without ``.bif``/``.gz`` when that name is missing or
        ``unknown`` (as in the bnlearn repository files).

    Returns
    -------
    BayesianNetwork
        Nodes in a topological order that keeps the file's declaration order
        wherever the arcs allow.

    Raises
    ------
    ValueError
        On a syntax error (with the line number), an undeclared variable or
        state, a missing or repeated table entry, or a CPT row whose sum is
        further than 1e-3 from 1 (the message names the node).

    Notes
    -----
    Supported: ``//`` and ``/* */`` comments, quoted or bare names, commas or
    whitespace as separators, ``property`` statements (ignored), both
    ``probability ( A | B, C )`` and the older ``probability ( A B C )``
    header, ``table`` entries and per-configuration ``(b, c) p1, p2;``
    entries, and ``default`` entries for configurations not listed.

    A ``table`` lists the probabilities with the last variable of the header
    varying fastest and the node itself slowest (the BIF 0.15 convention,
    also followed by pgmpy): ``P(a1|b1), P(a1|b2), ..., P(a2|b1), ...``.

    Rows whose sum deviates from 1 by more than 1e-6 but at most 1e-3
    (rounding in the file) are silently renormalized.
    """
    path = Path(os.fspath(path))
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8", errors="replace")
    toks = _Tokens(text, str(path))

    net_name = None
    var_levels: dict = {}
    probs: dict = {}  # node -> (parents, cpt)
    while toks.peek() is not None:
        kw = toks.name("'network', 'variable' or 'probability'")
        if kw == "network":
            net_name = toks.name("the network name")
            toks.skip_block()
        elif kw == "variable":
            var = toks.name("a variable name")
            if var in var_levels:
                raise toks.error(f"variable {var!r} is declared twice")
            var_levels[var] = _parse_variable(toks, var)
        elif kw == "probability":
            node, ps, cpt = _parse_probability(toks, var_levels)
            if node in probs:
                raise toks.error(f"a second probability block for {node!r}")
            probs[node] = (ps, cpt)
        else:
            raise toks.error(f"expected 'network', 'variable' or 'probability', found {kw!r}")

    missing = [v for v in var_levels if v not in probs]
    if missing:
        raise ValueError(f"{path}: no probability block for variables {missing[:10]}")
    parents = {v: probs[v][0] for v in var_levels}
    order = _topological_order(list(var_levels), parents, str(path))
    if name is None:
        name = net_name
        if not name or name.lower() == "unknown":
            name = path.name
            for suffix in (".gz", ".bif"):
                if name.lower().endswith(suffix):
                    name = name[: -len(suffix)]
    return BayesianNetwork(
        name=name,
        nodes=tuple(order),
        parents=parents,
        levels={v: var_levels[v] for v in order},
        cpts={v: probs[v][1] for v in order},
    )


def _parse_variable(toks: _Tokens, var: str) -> tuple:
    toks.expect("{")
    states = None
    while toks.peek_punct() != "}":
        kw = toks.name(f"'type' or 'property' in variable {var!r}")
        if kw == "type":
            kind = toks.name("a variable type")
            if kind != "discrete":
                raise toks.error(
                    f"variable {var!r}: only discrete variables are supported, got {kind!r}"
                )
            toks.expect("[")
            size = toks.name("the number of states")
            toks.expect("]")
            toks.expect("{")
            states = tuple(toks.name_list("}", f"a state of {var!r}"))
            toks.expect(";")
            try:
                declared = int(size)
            except ValueError:
                raise toks.error(f"variable {var!r}: bad number of states {size!r}") from None
            if declared != len(states):
                raise toks.error(
                    f"variable {var!r} declares {declared} states but lists {len(states)}"
                )
            if len(set(states)) != len(states):
                raise toks.error(f"variable {var!r} lists a state twice: {list(states)}")
        elif kw == "property":
            toks.skip_statement()
        else:
            raise toks.error(f"variable {var!r}: unexpected {kw!r}")
    toks.expect("}")
    if not states:
        raise toks.error(f"variable {var!r} has no states")
    return states


def _parse_probability(toks: _Tokens, var_levels: dict):
    toks.expect("(")
    header = []
    while toks.peek_punct() != ")":
        if toks.peek_punct() in (",", "|"):
            toks.i += 1
            continue
        header.append(toks.name("a variable name"))
    toks.expect(")")
    if not header:
        raise toks.error("empty probability header")
    for v in header:
        if v not in var_levels:
            raise toks.error(f"probability block uses undeclared variable {v!r}")
    node, ps = header[0], tuple(header[1:])
    if node in ps or len(set(ps)) != len(ps):
        raise toks.error(f"probability ( {node} | ... ): repeated variable in {header}")
    card = len(var_levels[node])
    pcards = tuple(len(var_levels[p]) for p in ps)
    n_conf = int(np.prod(pcards, dtype=np.int64))
    table = np.full((n_conf, card), np.nan)
    default = None
    seen = np.zeros(n_conf, dtype=bool)
    state_index = [{s: i for i, s in enumerate(var_levels[p])} for p in ps]
    toks.expect("{")
    while toks.peek_punct() != "}":
        if toks.peek_punct() == "(":
            toks.i += 1
            states = toks.name_list(")", "a parent state")
            if len(states) != len(ps):
                raise toks.error(
                    f"node {node!r}: entry {tuple(states)} gives {len(states)} parent states, "
                    f"expected {len(ps)}"
                )
            row = 0
            for s, p, idx, k in zip(states, ps, state_index, pcards):
                if s not in idx:
                    raise toks.error(f"node {node!r}: {s!r} is not a state of parent {p!r}")
                row = row * k + idx[s]
            vals = toks.numbers(f"the table of {node!r}")
            if len(vals) != card:
                raise toks.error(f"node {node!r}: entry {tuple(states)} has {len(vals)} "
                                 f"probabilities, expected {card}")
            if seen[row]:
                raise toks.error(f"node {node!r}: entry {tuple(states)} is given twice")
            seen[row] = True
            table[row] = vals
            continue
        kw = toks.name(f"'table', 'default' or '(' in the block of {node!r}")
        if kw == "table":
            vals = toks.numbers(f"the table of {node!r}")
            if len(vals) != card * n_conf:
                raise toks.error(f"node {node!r}: table has {len(vals)} probabilities, "
                                 f"expected {card * n_conf}")
            if seen.any():
                raise toks.error(f"node {node!r}: both a table and per-configuration entries")
            # node slowest, last parent fastest -> (card, n_conf) -> (n_conf, card)
            table[:] = np.asarray(vals).reshape(card, n_conf).T
            seen[:] = True
        elif kw == "default":
            vals = toks.numbers(f"the default of {node!r}")
            if len(vals) != card:
                raise toks.error(f"node {node!r}: default has {len(vals)} probabilities, "
                                 f"expected {card}")
            default = vals
        elif kw == "property":
            toks.skip_statement()
        else:
            raise toks.error(f"node {node!r}: unexpected {kw!r} in the probability block")
    toks.expect("}")
    if not seen.all():
        if default is None:
            raise toks.error(
                f"node {node!r}: {int((~seen).sum())} parent configurations have no "
                "probabilities and there is no default"
            )
        table[~seen] = default
    if not np.isfinite(table).all() or (table < 0).any():
        raise ValueError(f"{toks.source}: node {node!r} has negative or non-finite probabilities")
    sums = table.sum(axis=1)
    dev = np.abs(sums - 1.0)
    if dev.max() > RENORMALIZE_TOL:
        worst = sums[np.argmax(dev)]
        raise ValueError(
            f"{toks.source}: the probabilities of node {node!r} must sum to 1 in each parent "
            f"configuration; one row sums to {worst:.6g}"
        )
    fix = dev > ROW_SUM_TOL
    table[fix] /= sums[fix, None]
    return node, ps, table.reshape(pcards + (card,))
