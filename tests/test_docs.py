"""The documentation's own machinery (fast; no Sphinx needed): the vignettes become gallery
scripts with a title, and the build check fails when an example's figure is missing. The
site itself is built by .ci/run (``sphinx -W``, then ``docs/check_gallery.py``)."""
import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def gallery():
    return _load("mbstat_gallery", DOCS / "_ext" / "mbstat_gallery.py")


@pytest.fixture(scope="module")
def check():
    return _load("check_gallery", DOCS / "check_gallery.py")


@pytest.mark.parametrize("name", ["fsdms_corral", "fsdms_uci", "grow_shrink_parity",
                                  "iamb_ip_priors", "iamb_mbor_networks", "stability"])
def test_vignettes_become_gallery_scripts(gallery, name):
    text = (ROOT / "vignettes" / f"{name}.py").read_text()
    script = gallery.convert_vignette(text)
    tree = ast.parse(script)  # still Python
    doc = ast.get_docstring(tree, clean=False).strip().splitlines()
    title = text.splitlines()[1][len("# # "):].strip()
    assert doc[0] == title and set(doc[1]) == {"="} and len(doc[1]) == len(title)
    assert "|" not in script.split('"""')[1].replace(r"\|", "")  # no reST substitutions
    # the code is the vignette's, line for line (a script's exit does not end the build)
    code = [line.replace("raise SystemExit(main())", "main()") for line in text.splitlines()
            if not line.startswith("#")]
    assert "SystemExit" not in script
    assert [line for line in script.split('"""\n', 2)[-1].splitlines()
            if not line.startswith("#")] == code


def test_every_gallery_vignette_has_its_arguments(gallery):
    for table in (gallery.QUICK_ARGS, gallery.FULL_ARGS):
        for name in table:
            assert (ROOT / "vignettes" / f"{name}.py").exists()
    assert not {"ppfs_uci", "ppi_calibration"} & (set(gallery.QUICK_ARGS) | set(gallery.FULL_ARGS))


def _site(tmp_path, figures: dict):
    """A fake gallery source and built site: example -> figure names its page shows."""
    src, html = tmp_path / "src", tmp_path / "html"
    for name, pngs in figures.items():
        (src / "examples").mkdir(parents=True, exist_ok=True)
        (src / "examples" / f"{name}.py").write_text('"""T\n=\n"""\n')
        page = html / "gallery" / "examples" / f"{name}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        imgs = "".join(f'<img alt="x" src="../../_images/{p}" />' for p in pngs)
        page.write_text(f"<html>{imgs}</html>")
        (html / "_images").mkdir(exist_ok=True)
        for p in pngs:
            (html / "_images" / p).write_bytes(b"\x89PNG")
    return src, html


def test_gallery_check_passes_when_every_example_shows_a_figure(check, tmp_path):
    src, html = _site(tmp_path, {"plot_a": ["sphx_glr_plot_a_001.png"],
                                 "plot_b": ["sphx_glr_plot_b_001.png", "sphx_glr_plot_b_002.png"]})
    assert check.missing_figures(html, src) == {}


def test_gallery_check_fails_on_a_missing_figure(check, tmp_path):
    src, html = _site(tmp_path, {"plot_a": ["sphx_glr_plot_a_001.png"], "plot_b": []})
    assert check.missing_figures(html, src) == {"examples/plot_b": "its page shows no figure"}
    (html / "_images" / "sphx_glr_plot_a_001.png").unlink()
    assert "not in the site" in check.missing_figures(html, src)["examples/plot_a"]
    (html / "gallery" / "examples" / "plot_a.html").unlink()
    assert check.missing_figures(html, src)["examples/plot_a"].startswith("no page")
    assert check.missing_figures(html, tmp_path / "none")  # nothing built: a failure


def _includes(page: Path):
    """The ``{include}`` directives of a MyST page: (included file, start-after, end-before)."""
    import re
    out = []
    for block in re.findall(r"```\{include\} (\S+)\n(.*?)```", page.read_text(), re.S):
        target, options = block
        opts = dict(re.findall(r':([\w-]+): "(.*)"', options))
        out.append(((page.parent / target).resolve(), opts.get("start-after"),
                    opts.get("end-before")))
    return out


def test_every_include_finds_its_markers():
    """A renamed README heading or table marker fails here before the site is built."""
    pages = [p for p in DOCS.rglob("*.md") if "_build" not in p.parts]
    seen = 0
    for page in pages:
        for target, start, end in _includes(page):
            text = target.read_text()
            i = text.find(start) if start else 0
            assert i >= 0, f"{page.name}: {start!r} not in {target.name}"
            if end:
                assert text.find(end, i) > i, f"{page.name}: {end!r} not after {start!r}"
            seen += 1
    assert seen >= 5  # getting started (install, quick start, first look), learners, tests


def test_readme_links_point_at_files():
    import re
    text = (ROOT / "README.md").read_text()
    links = [l for l in re.findall(r"\]\(([^)#\s]+)\)", text) if "://" not in l]
    assert links
    for link in links:
        assert (ROOT / link).exists(), link


def test_readme_quick_start_installs_and_runs_the_suite():
    """.ci/run installs as the Quick start says and runs ``python -m pytest``."""
    text = (ROOT / "README.md").read_text()
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert 'pip install -e ".[test]"' in quick and "python -m pytest" in quick
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'pip install --quiet --disable-pip-version-check -e ".[test]"' in ci
    assert "\npython -m pytest\n" in ci


def test_readme_stays_a_newcomers_page():
    """The README holds what a newcomer reads in five minutes; tables of measurements and
    reference material go to the user guide (docs/user_guide/), which the README links."""
    import re
    text = (ROOT / "README.md").read_text()
    headings = re.findall(r"(?m)^## (.+)$", text)
    assert headings[:5] == ["Install", "Quick start", "A first look", "Choosing a learner",
                            "Choosing a test"]
    assert "Where to go next" in headings and "Running the tests" in headings
    lines = len(text.splitlines())
    assert lines <= 250, f"README.md has {lines} lines: move reference material to docs/user_guide"
