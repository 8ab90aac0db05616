"""The command line, end to end through a subprocess where the interpreter matters (the
exit status, a closed pipe, warnings' first showing, one whole run writing its files);
its messages and the other runs through main in this process (each interpreter start
costs seconds)."""
import subprocess
import sys
from types import SimpleNamespace

import pandas as pd
import pytest

from mbstat.cli import main
from mbstat.datasets import sample_network


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "mbstat", *args], capture_output=True, text=True,
                          timeout=600, cwd=cwd)


def here(capsys, *args):
    """``run``'s answer from main in this process (no interpreter start): the checks of
    messages; the exit status and the interpreter's own output are checked through ``run``."""
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "asia.csv"
    sample_network("asia", 3000, seed=1).to_csv(path, index=False)
    return path


def test_demo_prints_summaries_truth_and_plot(tmp_path, capsys):
    plot = tmp_path / "demo.png"
    out = here(capsys, "demo", "--rows", "2000", "--plot", str(plot))
    assert out.returncode == 0, out.stderr
    assert "ALARM network (37 nodes, 46 arcs)" in out.stdout
    assert "Mutual Information (G2) test" in out.stdout
    assert out.stdout.count("Markov blanket: incremental association (IAMB)") == 3
    assert "True blanket of HR:" in out.stdout
    assert f"written to {plot}" in out.stdout and plot.stat().st_size > 1000


def test_select_writes_pvalues_and_plot(csv, tmp_path):
    out = run("select", str(csv), "--target", "either", "--alpha", "0.01",
              "--out", str(tmp_path / "p.csv"), "--plot", str(tmp_path / "p.png"))
    assert out.returncode == 0, out.stderr
    assert "Blanket of either" in out.stdout
    table = pd.read_csv(tmp_path / "p.csv", index_col="feature")
    assert set(table.index) == {"asia", "tub", "smoke", "lung", "bronc", "xray", "dysp"}
    assert table["selected"].sum() >= 2
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_select_passes_parameters(csv, capsys):
    out = here(capsys, "select", str(csv), "--target", "dysp", "--test", "mc-g2", "--param",
               "B=99", "--param", "seed=1")
    assert out.returncode == 0, out.stderr
    assert "mc-g2" in out.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["select", "missing.csv", "--target", "x"], "data file not found: missing.csv"),
        (["select", "{csv}", "--target", "nope"], "unknown column 'nope' for --target"),
        (["select", "{csv}", "--target", "either", "--method", "magic"], "unknown method 'magic'"),
        (["select", "{csv}", "--target", "either", "--alpha", "2"], "alpha must be in (0.0, 1.0)"),
        (["select", "{csv}", "--target", "either", "--param", "m"], "--param must look like name=value"),
        (["select", "{csv}", "--target", "either", "--param", "bogus=1"],
         "['bogus']: neither a parameter of this learner nor an argument of test 'g2'"),
        (["vignettes", "no_such_vignette"], "unknown vignette 'no_such_vignette'"),
        (["select", "{csv}", "--target", "either", "--out", "{csv}.d/p.csv"],
         "--out {csv}.d/p.csv: the folder {csv}.d does not exist"),
        (["select", "{csv}", "--target", "either", "--out", "{dir}"], "is a folder"),
        (["select", "{csv}", "--target", "either", "--plot", "p.nope"], "unknown image format"),
        (["demo", "--rows", "1"], "--rows must be at least 2; got 1"),
        (["demo", "--seed", "-1"], "--seed must be >= 0"),
        (["demo", "--plot", "{csv}.d/d.png"], "the folder {csv}.d does not exist"),
    ],
)
def test_user_mistakes_exit_2_without_traceback(csv, args, message, capsys):
    """In this process (each interpreter start costs seconds): main's return value is the
    exit status (test_a_user_mistake_exits_2_through_the_interpreter shows the mapping end
    to end), the message goes to standard error, and no exception escapes."""
    fill = {"{csv}": str(csv), "{dir}": str(csv.parent)}
    out = here(capsys, *[fill.get(a, a.replace("{csv}", str(csv))) for a in args])
    assert out.returncode == 2
    assert message.replace("{csv}", str(csv)) in out.stderr
    assert "Traceback" not in out.stderr


def test_a_user_mistake_exits_2_through_the_interpreter(csv):
    out = run("select", str(csv), "--target", "nope")
    assert out.returncode == 2
    assert "unknown column 'nope' for --target" in out.stderr
    assert "Traceback" not in out.stderr


def test_select_reads_integers_with_blanks_as_discrete_and_writes_rankings(tmp_path, capsys):
    """An integer column with a blank stays an integer column (not floats needing bins); a
    learner without p-values (fsdms) writes its ranking."""
    path = tmp_path / "blanks.csv"
    rows = ["a,b,y"] + [f"{i % 3},{(i // 3) % 2},{i % 3}" for i in range(60)] + ["1,,1"]
    path.write_text("\n".join(rows) + "\n")
    out = here(capsys, "select", str(path), "--target", "y", "--na", "drop")
    assert out.returncode == 0, out.stderr
    assert "Blanket of y" in out.stdout
    out = here(capsys, "select", str(path), "--target", "y", "--na", "drop", "--method",
               "fsdms", "--out", str(tmp_path / "rank.csv"))
    assert out.returncode == 0, out.stderr
    assert list(pd.read_csv(tmp_path / "rank.csv")["feature"])[0] == "a"


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exited:  # argparse's own exit
        main(["frobnicate"])
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_vignettes_are_listed(capsys):
    out = here(capsys, "vignettes")
    assert out.returncode == 0
    assert "Vignettes" in out.stdout
    assert "grow_shrink_parity" in out.stdout and "near-parity" in out.stdout


def test_select_reads_a_sample_mbstat_wrote_with_levels_named_none(tmp_path, capsys):
    """The insurance network's level "None" (Accident, ThisCarDam) is a level, not missing:
    as R's read.csv, only empty cells and "NA" are missing."""
    path = tmp_path / "insurance.csv"
    sample_network("insurance", 400, seed=1).to_csv(path, index=False)
    assert "None" in path.read_text()
    out = here(capsys, "select", str(path), "--target", "Accident")
    assert out.returncode == 0, out.stderr
    assert "Blanket of Accident" in out.stdout


def test_read_csv_missing_values_separators_and_encodings(tmp_path):
    from mbstat.cli import UsageError, read_csv

    path = tmp_path / "d.csv"
    path.write_text("a,b,c\nNone,1,x\nNA,2,nan\n,3,null\n")
    data = read_csv(path)
    assert data["a"].isna().tolist() == [False, True, True]
    assert data["a"][0] == "None" and data["c"].tolist() == ["x", "nan", "null"]
    assert read_csv(path, na_values=["null", "nan"])["c"].isna().tolist() == [False, True, True]
    assert read_csv(path, na_values=["null"])["a"].isna().tolist() == [False, False, True]
    rows = "x;y;z\n1,5;a;ü\n2,5;b;é\n"
    for sep, text in ((";", rows), ("\t", rows.replace(";", "\t")),
                      (",", 'x,y,z\n"p;q",a,ü\nr;s,b,é\n')):
        path.write_text(text, encoding="utf-8")
        assert list(read_csv(path).columns) == ["x", "y", "z"], sep
        assert list(read_csv(path, sep={"\t": "tab"}.get(sep, sep)).columns) == ["x", "y", "z"]
    path.write_text(rows, encoding="latin-1")
    with pytest.raises(UsageError, match=r"as utf-8 text \(byte 0xfc.*--encoding latin-1"):
        read_csv(path)
    assert read_csv(path, encoding="latin-1")["z"].tolist() == ["ü", "é"]
    with pytest.raises(UsageError, match="--encoding: unknown encoding 'nope'"):
        read_csv(path, encoding="nope")
    with pytest.raises(UsageError, match="--sep must be one character"):
        read_csv(path, sep=";;")


def test_read_csv_refuses_columns_mixing_numbers_and_text(tmp_path):
    from mbstat.cli import UsageError, read_csv

    path = tmp_path / "d.csv"
    path.write_text("n,y\n" + "".join(f"{v},{i % 2}\n" for i, v in
                                      enumerate([1.5, 2.25, "?", 3.0, "n/a", 4.5])))
    with pytest.raises(UsageError, match=r"column 'n' mixes numbers and text: 2 of 6 cells are "
                                         r"not numbers \('\?', 'n/a'\); .*--na-values '\?'.*"
                                         r"--text 'n'"):
        read_csv(path)
    data = read_csv(path, na_values=["?", "n/a"])
    assert data["n"].dtype == "Float64" and data["n"].isna().sum() == 2
    assert read_csv(path, text=["n"])["n"].tolist() == ["1.5", "2.25", "?", "3.0", "n/a", "4.5"]
    with pytest.raises(UsageError, match="unknown column 'm' for --text"):
        read_csv(path, text=["m"])


def test_select_reports_read_problems_in_one_line(tmp_path, capsys):
    path = tmp_path / "semi.csv"
    path.write_text("a;b;y\n" + "".join(f"{i % 3};{i % 2};{i % 3}\n" for i in range(60)))
    out = here(capsys, "select", str(path), "--target", "y")
    assert out.returncode == 0, out.stderr  # the separator is detected
    out = here(capsys, "select", str(path), "--target", "y", "--sep", ",")
    assert out.returncode == 2 and "is it separated by another character? give --sep" in out.stderr
    path.write_text("a,b,y\n" + "".join(f"{i % 3},{'x' if i == 7 else i % 2},{i % 3}\n"
                                        for i in range(60)))
    out = here(capsys, "select", str(path), "--target", "y")
    assert out.returncode == 2 and "column 'b' mixes numbers and text" in out.stderr
    assert "Traceback" not in out.stderr


def test_warnings_are_printed_in_the_command_lines_words(csv):
    # a warning came out as Python's "/.../mbstat/cli.py:243: UserWarning: ..." and the
    # source line of the call
    out = run("select", str(csv), "--target", "either", "--method", "mbor", "--stability",
              "10", "--seed", "1", "--resample", "bootstrap")
    assert out.returncode == 0, out.stderr
    assert "mbstat select: warning: no frequency threshold bounds" in out.stderr
    assert "UserWarning" not in out.stderr and "cli.py" not in out.stderr


def test_a_reader_that_stops_early_gets_no_traceback(csv):
    """`mbstat select ... | head`: the pipe closes before mbstat writes; it stops quietly."""
    proc = subprocess.Popen([sys.executable, "-m", "mbstat", "select", str(csv), "--target",
                             "either"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_select_names_a_directory_and_a_binary_file(tmp_path, capsys):
    # a directory was "data file not found"; a binary file suggested --encoding latin-1
    empty = tmp_path / "empty"
    empty.mkdir()
    out = here(capsys, "select", str(empty), "--target", "y")
    assert out.returncode == 2 and f"{empty} is a directory; mbstat select reads one CSV " \
        "file" in out.stderr and "not found" not in out.stderr
    parts = tmp_path / "parts"
    parts.mkdir()
    pd.DataFrame({"y": [0, 1]}).to_parquet(parts / "part.0.parquet")
    out = here(capsys, "select", str(parts), "--target", "y")
    assert out.returncode == 2 and f"mbstat.iamb('{parts}', target)" in out.stderr
    out = here(capsys, "select", str(parts / "part.0.parquet"), "--target", "y")
    assert out.returncode == 2 and "looks like a Parquet file, not CSV text" in out.stderr
    binary = tmp_path / "data.bin"
    binary.write_bytes(bytes(range(256)) * 4)
    out = here(capsys, "select", str(binary), "--target", "y")
    assert out.returncode == 2 and "looks like a binary file (it holds NUL bytes)" in out.stderr
    assert "--encoding" not in out.stderr and "Traceback" not in out.stderr
    # text in another encoding still gets the encoding hint
    latin = tmp_path / "latin.csv"
    latin.write_bytes("a,y\n1,\xe9\n".encode("latin-1"))
    out = here(capsys, "select", str(latin), "--target", "y")
    assert out.returncode == 2 and "--encoding latin-1" in out.stderr
