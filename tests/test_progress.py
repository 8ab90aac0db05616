"""Progress bars: shown when asked for, silent by default."""
import mbstat
from mbstat.datasets import load_network, make_parity


def test_gs_m_progress_bar(capsys):
    data = make_parity(8, 500, seed=0)
    quiet = mbstat.gs_m(data, "X1", m=2)
    assert capsys.readouterr().err == ""
    loud = mbstat.gs_m(data, "X1", m=2, progress=True)
    assert "growing the blanket of X1" in capsys.readouterr().err
    assert loud.blanket == quiet.blanket


def test_blankets_progress_bar(capsys):
    mbstat.blankets(load_network("asia"), test="oracle", progress=True)
    assert "iamb blankets" in capsys.readouterr().err
    mbstat.blankets(load_network("asia"), test="oracle")
    assert capsys.readouterr().err == ""


def test_ppfs_progress_bar(capsys):
    from mbstat.datasets import load_wine

    data = load_wine().iloc[:, [0, 1, 6, 9, 12, 13]]
    mbstat.ppfs(data, "class", model="tree", test="ppi", B=5, K=2, seed=0, progress=True)
    assert "ppfs: blanket of class" in capsys.readouterr().err


# --------------------------------------------------------------- Ctrl-C and the auto bar
import pytest  # noqa: E402

from mbstat.ci.engine import CITester  # noqa: E402

INTERRUPTED = ["iamb", "inter_iamb", "mbor", "mb_to_pc", "mmpc", "mmmb", "hiton_pc", "hiton_mb",
               "fast_iamb", "iamb_fdr"]


def _interrupt_after(monkeypatch, k: int):
    """Make the k-th batch a tester answers (cache hits included) raise KeyboardInterrupt,
    as a Ctrl-C during that batch would; returns the call counter."""
    calls = {"n": 0}
    answer = CITester._answer

    def interrupted(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] >= k:
            raise KeyboardInterrupt
        return answer(self, *args, **kwargs)

    monkeypatch.setattr(CITester, "_answer", interrupted)
    return calls


@pytest.mark.parametrize("name", INTERRUPTED)
def test_ctrl_c_returns_the_partial_result(monkeypatch, name):
    """Every CI learner: Ctrl-C after a few batches returns what the search had kept, marked
    incomplete with a note; the tests made before it are in the log; the members' evidence
    is a keep, the undecided candidates are 'not reached'."""
    data = sample_alarm()
    full = getattr(mbstat, name)(data, "HR", test="g2")
    assert full.complete
    _interrupt_after(monkeypatch, 4)
    part = getattr(mbstat, name)(data, "HR", test="g2")
    assert not part.complete
    assert any("interrupted (KeyboardInterrupt)" in note for note in part.notes)
    assert part.n_tests == len(part.tests) > 0
    assert part.n_tests < full.n_tests
    ev = part.evidence
    assert (ev.loc[list(part.blanket), "decision"] == "keep").all()
    assert "incomplete" in str(part.summary())


def test_ctrl_c_before_any_test(monkeypatch):
    _interrupt_after(monkeypatch, 1)
    part = mbstat.iamb(sample_alarm(), "HR", test="g2")
    assert part.blanket == () and not part.complete and part.n_tests == 0
    assert (part.evidence["phase"] == "not reached: interrupted").all()


def sample_alarm():
    from mbstat.datasets import sample_network

    return sample_network("alarm", 2000, seed=0)


def test_learners_bar_shown_on_request_and_silent_by_default(capsys):
    data = sample_alarm()
    quiet = mbstat.iamb(data, "HR", test="g2")
    assert capsys.readouterr().err == ""  # progress=None: only after 10 s
    loud = mbstat.mbor(data, "HR", test="g2", progress=True)
    assert "mbor: blanket of HR" in capsys.readouterr().err
    assert loud.blanket == mbstat.mbor(data, "HR", test="g2").blanket
    mbstat.iamb(data, "HR", test="g2", progress=False)
    assert capsys.readouterr().err == ""
    mbstat.mmpc(data, "HR", test="g2", progress=True)  # not in its signature: the front end's
    assert "mmpc: blanket of HR" in capsys.readouterr().err
    assert quiet.complete


def test_auto_bar_waits(monkeypatch):
    """progress=None opens a bar (with the count so far) only at an update after AUTO_DELAY
    seconds; a short run builds none; True opens one at once."""
    import mbstat._progress as progress

    seen = []

    class Fake:
        def __init__(self, **kwargs):
            seen.append((kwargs.get("initial", 0), kwargs["delay"]))
            self.n = kwargs.get("initial", 0)

        def update(self, n=1):
            self.n += n

        def set_postfix_str(self, s="", refresh=True):
            pass

        def close(self):
            pass

    import tqdm.auto

    monkeypatch.setattr(tqdm.auto, "tqdm", Fake)
    mbstat.iamb(sample_alarm(), "HR", test="g2")
    assert seen == []
    mbstat.iamb(sample_alarm(), "HR", test="g2", progress=True)
    assert seen == [(0, 0.0)]
    clock = [0.0]
    monkeypatch.setattr(progress, "AUTO_DELAY", 10.0)
    bar = progress.progress_bar(None, desc="x")
    bar._clock = lambda: clock[0]
    bar._start = 0.0
    bar.update(5)
    clock[0] = 10.5
    bar.update(2)  # past the delay: the bar opens with the 7 counted
    bar.update(1)
    assert seen[-1] == (7, 0.0) and bar._bar.n == 8
    bar.close()
