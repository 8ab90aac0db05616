"""The command line, end to end through a subprocess."""
import subprocess
import sys


def run(*args):
    return subprocess.run([sys.executable, "-m", "mbstat", *args], capture_output=True, text=True,
                          timeout=300)


def test_demo_prints_summaries_and_truth():
    out = run("demo", "--rows", "2000")
    assert out.returncode == 0, out.stderr
    assert "ALARM network (37 nodes, 46 arcs)" in out.stdout
    assert "Mutual Information (G2) test" in out.stdout
    assert out.stdout.count("Markov blanket: incremental association (IAMB)") == 3
    assert "True blanket of HR:" in out.stdout


def test_usage_error_exits_2():
    out = run("frobnicate")
    assert out.returncode == 2
    assert "invalid choice" in out.stderr
