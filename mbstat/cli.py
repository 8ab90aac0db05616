"""Command line: ``mbstat demo | select | vignettes`` (also ``python -m mbstat``).

User mistakes (a missing file, an unknown column or method, a bad parameter)
print one line on stderr and exit with status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import ast
import subprocess
import sys
import tempfile
from pathlib import Path

from .algorithms import LEARNERS

__all__ = ["main"]

VIGNETTE_DIR = Path(__file__).resolve().parent.parent / "vignettes"


class UsageError(Exception):
    """A mistake in what the user asked for: reported in one line, exit status 2."""


def _parse_param(text: str):
    if "=" not in text:
        raise UsageError(f"--param must look like name=value; got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key.strip(), ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return key.strip(), value


def _check_output(path, option: str, image: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written: a missing folder,
    a folder given as the file, an image format matplotlib does not write."""
    if path is None:
        return
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{option} {path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: the folder {path.parent} does not exist")
    if image:
        from matplotlib.figure import Figure

        formats = Figure().canvas.get_supported_filetypes()
        if path.suffix.lstrip(".").lower() not in formats:
            raise UsageError(f"{option} {path}: unknown image format {path.suffix!r}; use one "
                             f"of {', '.join('.' + f for f in sorted(formats))}")


def _result_table(result):
    """The table ``--out`` writes: the p-values, or the ranking of a learner without tests."""
    try:
        return "p-value table", result.pvalues
    except AttributeError:
        for what in ("ranking", "scores"):  # fsdms ranks; wfsdms scores the nested subsets
            table = getattr(result, what, None)
            if table is not None:
                return what, table
        return None, None


# --------------------------------------------------------------------- demo
def demo(n: int = 5000, seed: int = 1, targets=("HR", "CO", "PVSAT"), plot: str | None = None):
    """Learn a few ALARM blankets with each learner and compare them with the truth."""
    if n < 2:
        raise UsageError(f"--rows must be at least 2; got {n}")
    if seed < 0:
        raise UsageError(f"--seed must be >= 0; got {seed}")
    _check_output(plot, "--plot", image=True)
    import matplotlib

    matplotlib.use("Agg")
    import mbstat  # deferred: --help and usage errors answer without the package
    from mbstat.datasets import load_network  # deferred: as above

    net = load_network("alarm")
    data = net.sample(n, seed=seed)
    methods = ["iamb", "mbor"]
    print(f"ALARM network ({len(net.nodes)} nodes, {net.n_arcs} arcs), {n} rows sampled "
          f"with seed {seed}; learners: {', '.join(methods)}.\n")
    print(mbstat.ci_test(data, "HR", "CO", z=["STROKEVOLUME"]))
    last = None
    for target in targets:
        truth = set(net.markov_blanket(target))
        for method in methods:
            res = mbstat.LEARNERS[method].function(data, target, alpha=0.05)
            print(res.summary())
            found = set(res.selected)
            print(f"True blanket of {target}: {{{', '.join(sorted(truth))}}}")
            print(f"  {method} missed: {', '.join(sorted(truth - found)) or 'none'}; "
                  f"extra: {', '.join(sorted(found - truth)) or 'none'}\n")
            last = res
    path = Path(plot) if plot else Path(tempfile.gettempdir()) / "mbstat_demo.png"
    ax = last.plot()
    ax.figure.savefig(path, dpi=100, bbox_inches="tight")
    print(f"Plot of the last blanket's p-values written to {path}")
    return 0


# ------------------------------------------------------------------- select
SEPARATORS = (",", ";", "\t")


def read_csv(path, sep=None, encoding="utf-8", na_values=None, text=()):
    """Read a CSV file as R's ``read.csv`` does: only empty cells and ``na_values`` (default
    "NA") are missing, so a level named "None" or "nan" stays a level; integer columns with
    blanks stay integers. ``sep`` None detects the separator among comma, semicolon and tab.
    A column that mixes numbers and text is refused unless named in ``text``."""
    import codecs

    import pandas as pd

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise UsageError(f"--encoding: unknown encoding {encoding!r}") from None
    sep = _separator(sep)
    try:
        if sep is None:
            sep = _detect_separator(path, encoding)
        data = pd.read_csv(path, sep=sep, encoding=encoding, keep_default_na=False,
                           na_values=["", *(["NA"] if na_values is None else na_values)],
                           dtype={name: "string" for name in text},
                           dtype_backend="numpy_nullable")
    except UnicodeDecodeError as exc:
        byte = exc.object[exc.start:exc.start + 1].hex()
        raise UsageError(f"cannot read {path} as {encoding} text (byte 0x{byte}: "
                         f"{exc.reason}); give its encoding, e.g. --encoding latin-1") from None
    except Exception as exc:  # parser errors
        raise UsageError(f"cannot read {path} as CSV: {exc}") from None
    unknown = [name for name in text if name not in data.columns]
    if unknown:
        raise UsageError(f"unknown column {unknown[0]!r} for --text")
    for name in data.columns:
        if name not in text:
            _check_not_mixed(name, data[name])
    return data


#: Leading bytes of binary formats that are given for a CSV file by mistake.
_MAGIC = {b"PAR1": "a Parquet file", b"PK\x03\x04": "a ZIP archive (an Excel .xlsx file?)",
          b"\xd0\xcf\x11\xe0": "an OLE file (an Excel .xls file?)",
          b"\x1f\x8b": "a gzip file", b"\x89HDF": "an HDF5 file", b"\x93NUMPY": "a NumPy .npy file"}


def _check_text_file(path) -> None:
    """Refuse a binary file (known leading bytes, or a NUL byte in its first 8 KiB, which
    no text encoding of CSV data holds except UTF-16/32) with what it looks like."""
    with open(path, "rb") as f:
        head = f.read(8192)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return  # a UTF-16 byte-order mark: text, given --encoding utf-16
    kind = next((name for magic, name in _MAGIC.items() if head.startswith(magic)), None)
    if kind is None and b"\x00" in head:
        kind = "a binary file (it holds NUL bytes)"
    if kind is not None:
        raise UsageError(f"{path} looks like {kind}, not CSV text; mbstat select reads a CSV "
                         "file (read other formats in Python, e.g. with pandas)")


def _separator(sep):
    if sep is None:
        return None
    sep = {"tab": "\t", "\\t": "\t"}.get(sep, sep)
    if len(sep) != 1:
        raise UsageError(f"--sep must be one character (or 'tab'); got {sep!r}")
    return sep


def _detect_separator(path, encoding) -> str:
    """The separator among comma, semicolon and tab that splits the header into the most
    fields with the first lines agreeing (comma when none splits it)."""
    import csv
    import itertools

    with open(path, encoding=encoding, newline="") as f:
        lines = list(itertools.islice(f, 50))
    best, best_score = ",", (0, 0)
    for sep in SEPARATORS:
        rows = [row for row in csv.reader(lines, delimiter=sep) if row]
        if not rows or len(rows[0]) < 2:
            continue
        score = (sum(len(row) == len(rows[0]) for row in rows), len(rows[0]))
        if score > best_score:
            best, best_score = sep, score
    return best


def _check_not_mixed(name, col) -> None:
    """Refuse a text column in which some cells are numbers and others not: a stray text
    cell in a column of numbers would turn every number into a level."""
    import pandas as pd

    if not (pd.api.types.is_string_dtype(col.dtype) or col.dtype == object):
        return
    cells = col.dropna()
    numbers = pd.to_numeric(cells, errors="coerce").notna().to_numpy()
    if numbers.any() and not numbers.all():
        found = pd.unique(cells[~numbers].astype(str))
        shown = ", ".join(repr(v) for v in found[:5]) + (", ..." if len(found) > 5 else "")
        raise UsageError(
            f"column {name!r} mixes numbers and text: {int((~numbers).sum())} of {len(cells)} "
            f"cells are not numbers ({shown}); if they mark missing values, give "
            f"--na-values {found[0]!r}, if the column holds levels, give --text {name!r}")


_CLI_NAMES = {"na='drop'": "--na drop", "na='pairwise'": "--na pairwise", "R must": "--stability must", "pfer must": "--pfer must",
              "threshold must": "--threshold must", "seed must": "--seed must",
              "n_jobs must": "--jobs must",
              "give threshold (a frequency cut) or pfer": "give --threshold or --pfer"}


def _cli_words(message: str) -> str:
    """An error message in the command line's words (its options for the arguments)."""
    for text, option in _CLI_NAMES.items():
        message = message.replace(text, option)
    return message


def _check_stability_options(args) -> None:
    """The --stability options only with --stability."""
    if args.stability is not None:
        return
    given = [f"--{name}" for name in ("pfer", "threshold", "seed")
             if getattr(args, name) is not None]
    given += ["--resample"] * (args.resample != "subsample") + ["--jobs"] * (args.jobs != 1)
    if given:
        raise UsageError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} --stability R")


def select(args) -> int:
    import mbstat  # deferred: --help and usage errors answer without the package

    path = Path(args.data)
    if path.is_dir():
        parquet = any(p.suffix == ".parquet" for p in path.iterdir())
        raise UsageError(f"{path} is a directory; mbstat select reads one CSV file"
                         + (" (a directory of Parquet files is read in Python: "
                            f"mbstat.iamb({str(path)!r}, target))" if parquet else ""))
    if not path.is_file():
        raise UsageError(f"data file not found: {path}")
    _check_text_file(path)
    _check_stability_options(args)
    _check_output(args.out, "--out")
    _check_output(args.plot, "--plot", image=True)
    data = read_csv(path, sep=args.sep, encoding=args.encoding, na_values=args.na_values,
                    text=args.text)
    if args.target not in data.columns:
        hint = ("; is it separated by another character? give --sep"
                if data.shape[1] == 1 else "")
        raise UsageError(f"unknown column {args.target!r} for --target; the file has "
                         f"{', '.join(map(str, data.columns[:12]))}"
                         f"{', ...' if len(data.columns) > 12 else ''}{hint}")
    if args.method not in mbstat.LEARNERS:
        raise UsageError(f"unknown method {args.method!r}; choose from "
                         f"{', '.join(mbstat.LEARNERS)}")
    row = mbstat.LEARNERS[args.method]
    params = dict(_parse_param(p) for p in args.param)
    for name in ("alpha", "test", "backend", "discretize", "na"):
        value = getattr(args, name)
        if value is not None:
            params[name] = value
    if "progress" in row.parameters and args.stability is None:  # a bar on a terminal only,
        params.setdefault("progress", sys.stderr.isatty())  # (not in a log's captured stderr)
    try:
        if args.stability is not None:
            result = mbstat.stability(data, args.target, args.method, R=args.stability,
                                      resample=args.resample, threshold=args.threshold,
                                      pfer=args.pfer, seed=args.seed, n_jobs=args.jobs,
                                      progress=sys.stderr.isatty(), **params)
        else:
            result = row.function(data, args.target, **params)
    except (ValueError, TypeError, RuntimeError) as exc:  # in the command line's words
        raise UsageError(_cli_words(str(exc))) from None
    print(result.summary(top=None) if args.stability is not None else result.summary())
    if args.out:
        what, table = (("frequency table", result.table) if args.stability is not None
                       else _result_table(result))
        if table is None:
            raise UsageError(f"method {args.method!r} has no table to write")
        table.to_csv(args.out)
        print(f"{what} written to {args.out}")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        ax = result.plot()
        ax.figure.savefig(args.plot, dpi=100, bbox_inches="tight")
        print(f"plot written to {args.plot}")
    return 0


# ---------------------------------------------------------------- vignettes
def vignettes(args) -> int:
    if not VIGNETTE_DIR.is_dir():
        raise UsageError("the vignettes ship with the source tree; run from a clone "
                         "(pip install -e .)")
    found = {p.stem: p for p in sorted(VIGNETTE_DIR.glob("*.py"))}
    if not args.name:
        print("Vignettes (run one with: mbstat vignettes [--quick] NAME):")
        for name, p in found.items():
            print(f"  {name:<28} {_first_doc_line(p)}")
        return 0
    if args.name not in found:
        raise UsageError(f"unknown vignette {args.name!r}; available: {', '.join(found)}")
    cmd = [sys.executable, str(found[args.name])]
    if args.quick:
        cmd.append("--quick")
    if args.out:
        cmd += ["--out", args.out]
    return subprocess.call(cmd)


def _first_doc_line(path: Path) -> str:
    """A script's title: its first markdown heading (``# # ...``) or docstring line."""
    import ast as _ast

    text = path.read_text()
    for line in text.splitlines():
        if line.startswith("# # "):
            return line[4:].strip()
    doc = (_ast.get_docstring(_ast.parse(text)) or "").strip()
    return doc.splitlines()[0] if doc else ""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mbstat", description="Markov-blanket feature selection")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("demo", help="learn ALARM blankets from a sample and check them")
    p.add_argument("--rows", type=int, default=5000, help="rows to sample (default 5000)")
    p.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    p.add_argument("--plot", help="where to write the plot (default: a temporary file)")

    p = sub.add_parser("select", help="learn the Markov blanket of a column of a CSV file")
    p.add_argument("data", help="CSV file with a header row (read as R's read.csv: only "
                                "empty cells and NA are missing)")
    p.add_argument("--target", required=True, help="the column whose blanket is learned")

    p.add_argument("--method", default="iamb",
                   help=f"a learner of mbstat.LEARNERS: {', '.join(LEARNERS)} (default iamb)")
    p.add_argument("--alpha", type=float, help="the tests' level (default: the learner's, 0.05)")
    p.add_argument("--test", help="a CI test of mbstat.TESTS (default: the learner's, auto: "
                                  "g2 / fisher_z / mi-cg by the data's kinds)")
    p.add_argument("--backend", choices=("auto", "cpu", "gpu"))
    p.add_argument("--discretize", type=int, help="equal-frequency bins for float columns")
    p.add_argument("--na", choices=("raise", "drop", "pairwise"),
                   help="missing values: refuse (default), drop incomplete rows, or test-wise "
                        "deletion (CI learners)")
    p.add_argument("--sep", help="the column separator (default: detected among comma, "
                                 "semicolon and tab; 'tab' for a tab)")
    p.add_argument("--encoding", default="utf-8",
                   help="the file's text encoding (default utf-8; e.g. latin-1)")
    p.add_argument("--na-values", action="append", metavar="TEXT",
                   help="a cell text that marks a missing value, as R's na.strings; repeat "
                        "for several (default: NA; empty cells are always missing)")
    p.add_argument("--text", action="append", default=[], metavar="COLUMN",
                   help="read this column as text levels even where some cells are numbers")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="any other argument of the method, e.g. --param m=3")
    p.add_argument("--out", help="write the p-value table (fsdms: the ranking; --stability: "
                                 "the frequency table) to this CSV file")
    p.add_argument("--plot", help="write the plot to this image file")
    p.add_argument("--stability", type=int, metavar="R",
                   help="rerun the method on R resamples: print each candidate's inclusion "
                        "frequency and the stable blanket (mbstat.stability)")
    p.add_argument("--resample", choices=("subsample", "bootstrap"), default="subsample",
                   help="with --stability: half the rows without replacement (default) or "
                        "all the rows with replacement")
    p.add_argument("--pfer", type=float,
                   help="with --stability: the bound on the expected number of false members "
                        "that sets the threshold (Meinshausen-Buhlmann; default 1)")
    p.add_argument("--threshold", type=float,
                   help="with --stability: a plain frequency cut instead of --pfer, e.g. 0.5")
    p.add_argument("--seed", type=int, help="with --stability: the resampling seed (default: "
                                           "drawn, and printed)")
    p.add_argument("--jobs", type=int, default=1,
                   help="with --stability: parallel workers (threads; -1: all cores)")

    p = sub.add_parser("vignettes", help="list or run the vignettes")
    p.add_argument("name", nargs="?")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", help="folder for the vignette's outputs")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        # a warning in the command line's words, not a Python source location
        print(f"mbstat {args.command}: warning: {message}", file=file or sys.stderr)

    with warnings.catch_warnings():  # restores warnings.showwarning on the way out
        warnings.showwarning = show
        try:
            if args.command == "demo":
                code = demo(args.rows, args.seed, plot=args.plot)
            elif args.command == "select":
                code = select(args)
            else:
                code = vignettes(args)
            sys.stdout.flush()  # a reader that stopped early shows here, handled below
            return code
        except UsageError as exc:
            print(f"mbstat {args.command}: error: {exc}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # `mbstat select ... | head`: stop quietly, as Unix tools do
            _discard_stdout()
            return 1


def _discard_stdout() -> None:
    """Point standard output at the null device, so that the interpreter's last flush does
    not fail again on the closed pipe (the recipe of Python's signal documentation)."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (captured output)
        pass


if __name__ == "__main__":
    sys.exit(main())
