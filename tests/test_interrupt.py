"""Ctrl-C inside the compiled calibration (issue 31, item 5).

A SIGINT that arrives while a numba kernel runs (the GIL released) was handled when the
kernel boxed its results, inside one of numba's calls into Python: numba then raised
``SystemError: CPUDispatcher(...) returned a result with an exception set`` and the run
died instead of returning its partial result (``complete=False``); the compiled calls now
hold SIGINT while they run and raise the KeyboardInterrupt after. Each test runs a
learner in a subprocess (one subprocess runs every case in turn) whose calibration
kernel, in the phase asked, is given a SIGINT 0.2 s into its run (the kernel's
permutations take seconds there), and checks that the signal landed inside the compiled
call, that the learner returned a partial result and that Python's handler is back.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mbstat._progress import hides_interrupt, interruptible

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, signal, sys, threading
import numpy as np, pandas as pd
import mbstat
from mbstat.ci.engine import CITester
from mbstat.ci.tables import _kernels

test, B, cases = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
# a user's Python, where Ctrl-C raises KeyboardInterrupt: a process started with SIGINT
# ignored (a parent that ignored it, as the test runner can be) keeps ignoring it, rightly
signal.signal(signal.SIGINT, signal.default_int_handler)
rng = np.random.default_rng(0)
n = 3000
a, b, c = (rng.integers(0, 8, n) for _ in range(3))
d = pd.DataFrame({"a": a, "b": b, "c": c, "y": (a + b + rng.integers(0, 3, n)) // 3})
state = {}
answer = CITester._answer

def phase_of(self, xs, y, z, phase):  # the phase of the tests being answered
    state["phase"] = phase
    return answer(self, xs, y, z, phase)

CITester._answer = phase_of

def interrupted(name):  # the first call in the phase gets a SIGINT while it runs
    real = getattr(_kernels, name)

    def kernel(*args):
        if (state["fired"] or state["wanted"] not in ("*", state["phase"])
                or threading.current_thread() is not threading.main_thread()):
            return real(*args)  # (Python handles signals in the main thread)
        state["fired"] = True

        def ctrl_c():  # notes whether the compiled call was still running when sent
            state["inside"].append(state["running"])
            os.kill(os.getpid(), signal.SIGINT)

        threading.Timer(0.2, ctrl_c).start()
        state["running"] = True
        try:
            return real(*args)
        finally:
            state["running"] = False

    setattr(_kernels, name, kernel)

for name in ("column_nulls", "permutation_nulls", "_one_null"):
    interrupted(name)
for learner, phase in cases:  # one process for every case: its start is most of the time
    state.update(phase=None, wanted=phase, fired=False, running=False, inside=[])
    kw = dict(test=test, B=B, progress=False)
    if phase == "shrink":  # no candidate to add: the run starts in its shrink phase
        kw.update(start=["a", "b"], candidates=["a", "b"])
    res = getattr(mbstat, learner)(d, "y", **kw)
    print(json.dumps({"case": [learner, phase], "complete": res.complete,
                      "notes": list(res.notes), "blanket": list(res.blanket),
                      "fired": state["fired"], "inside": state["inside"],
                      "handler_restored":
                          signal.getsignal(signal.SIGINT) is signal.default_int_handler}))
"""

IAMB_PHASES = ["grow", "shrink"]
OTHER_LEARNERS = ["inter_iamb", "mbor", "gs_m", "fbed", "iamb_fdr"]


def run_interrupted(tmp_path, cases, test="mc-g2", B=20000):
    """Run each (learner, phase) case in turn in one fresh interpreter; their outputs by
    case."""
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(script), test, str(B), json.dumps(cases)],
                          capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    outs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {tuple(out.pop("case")): out for out in outs}


@pytest.fixture(scope="module")
def interrupted_runs(request, tmp_path_factory):
    """The outputs of the cases this session selected from this module, run in one child
    (a child per case spent most of its time starting the interpreter and mbstat)."""
    cases = []
    for item in request.session.items:
        if item.module is request.module and hasattr(item, "callspec"):
            params = item.callspec.params
            case = ("iamb", params["phase"]) if "phase" in params else (params["learner"], "*")
            cases.append(case)
    return run_interrupted(tmp_path_factory.mktemp("interrupt"), cases)


def check_partial(out):
    assert out["fired"], "no calibration kernel ran in the phase asked"
    assert out["inside"] == [True]  # the SIGINT arrived while the compiled call ran
    assert out["complete"] is False
    assert any("interrupted (KeyboardInterrupt)" in note for note in out["notes"])
    assert out["handler_restored"]  # the compiled calls gave SIGINT back to Python's handler


@pytest.mark.parametrize("phase", IAMB_PHASES)
def test_iamb_returns_a_partial_result_on_ctrl_c_in_calibration(interrupted_runs, phase):
    check_partial(interrupted_runs[("iamb", phase)])


@pytest.mark.slow
@pytest.mark.parametrize("learner", OTHER_LEARNERS)
def test_other_learners_return_a_partial_result_on_ctrl_c_in_calibration(interrupted_runs,
                                                                          learner):
    check_partial(interrupted_runs[(learner, "*")])


def test_hides_interrupt_reads_numbas_error_chain():
    def numba_like():  # the chain numba leaves: SystemError over SystemError over Ctrl-C
        try:
            try:
                raise KeyboardInterrupt
            except KeyboardInterrupt:
                raise SystemError("_numba_unpickle returned a result with an exception set")
        except SystemError:
            raise SystemError("CPUDispatcher(<function column_nulls>) returned a result "
                              "with an exception set")

    with pytest.raises(SystemError) as caught:
        numba_like()
    assert hides_interrupt(caught.value)
    with pytest.raises(KeyboardInterrupt):
        interruptible(numba_like)
    assert not hides_interrupt(SystemError("other"))

    def other():
        try:
            raise ValueError("x")
        except ValueError:
            raise SystemError("not an interrupt")

    with pytest.raises(SystemError, match="not an interrupt"):
        interruptible(other)
    assert interruptible(lambda a, b: a + b, 1, 2) == 3
