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
