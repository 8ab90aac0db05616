"""The gallery's sources and hooks for sphinx-gallery.

The gallery has two sections, written into ``docs/_gallery_src/`` before every build:

* ``examples``: the short examples of ``docs/examples/`` (seconds each), drawn with
  matplotlib and scraped as sphinx-gallery does;
* ``vignettes``: the scripts of ``vignettes/`` run in their quick mode (``--quick``, plus
  the arguments of :data:`QUICK_ARGS` in the CI build), each writing its figures into its own
  folder (``--out``), which :func:`scrape_pngs` hands to the page. The copy turns the
  vignette's leading Markdown cell into the reST docstring sphinx-gallery needs; the
  vignettes themselves are not edited.

``MBSTAT_GALLERY`` chooses the vignettes: ``quick`` (default, the CI build: the ones that
run in seconds) or ``full`` (every vignette with figures, each in its own quick mode).
"""
from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
SOURCE = DOCS / "_gallery_src"
#: Where each vignette writes its PNG and CSV files during the build.
OUT = Path(tempfile.gettempdir()) / "mbstat_docs_vignettes"

#: Vignettes in each mode, with the arguments added to ``--quick``. Left out of both:
#: ppfs_uci and ppi_calibration (edited elsewhere; run them as scripts) and the two that
#: print tables only (mixed_tests, sparse_levels: minutes even in quick mode, no figure).
QUICK_ARGS = {
    "iamb_mbor_networks": [],
    "fsdms_corral": [],
    "fsdms_uci": [],
    "grow_shrink_parity": ["--reps", "1"],
    "stability": ["--R", "5", "--targets", "4", "--jobs", "1"],
}
FULL_ARGS = {
    "iamb_mbor_networks": [],
    "fsdms_corral": [],
    "fsdms_uci": [],
    "grow_shrink_parity": [],
    "stability": [],
    "iamb_ip_priors": [],
}


def mode() -> str:
    value = os.environ.get("MBSTAT_GALLERY", "quick")
    if value not in ("quick", "full"):
        raise ValueError(f"MBSTAT_GALLERY must be 'quick' or 'full'; got {value!r}")
    return value


def vignette_args() -> dict:
    return QUICK_ARGS if mode() == "quick" else FULL_ARGS


# ------------------------------------------------------------------ Markdown -> reST
_HEADING = re.compile(r"^(#{1,3}) (.*)$")
#: ``raise SystemExit(main())``: sphinx-gallery runs the script inside the build's process,
#: where it would end the whole build (with status 0); the gallery copy calls ``main()``.
_EXIT = re.compile(r"^(\s*)raise SystemExit\((.*)\)\s*$")
_UNDERLINE = {1: "=", 2: "-", 3: "~"}


def _md_line(text: str) -> list:
    """One line of a vignette's Markdown cell as reST lines (comment marks removed)."""
    match = _HEADING.match(text)
    if match:
        title = match.group(2).strip()
        return [title, _UNDERLINE[len(match.group(1))] * len(title), ""]
    # '|' starts a substitution in reST; a lone trailing '_' a reference
    return [text.replace("|", r"\|")]


def convert_vignette(text: str) -> str:
    """A vignette in the percent format as a sphinx-gallery script: its first Markdown cell
    becomes the module docstring (the page's title and introduction), later Markdown cells
    stay text blocks with their headings in reST; a ``raise SystemExit(...)`` runs its
    argument instead (the build's process must go on)."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("# %% [markdown]"):
        raise ValueError("a vignette starts with a '# %% [markdown]' cell")
    i, head = 1, []
    while i < len(lines) and lines[i].startswith("#") and not lines[i].startswith("# %%"):
        head += _md_line(lines[i][2:] if lines[i].startswith("# ") else lines[i][1:])
        i += 1
    body, in_text = [], False
    for line in lines[i:]:
        if line.startswith("# %%"):
            in_text = True
            body.append("# %%")
            continue
        if in_text and line.startswith("#"):
            content = line[2:] if line.startswith("# ") else line[1:]
            body += ["# " + part if part else "#" for part in _md_line(content)]
            continue
        in_text = False
        body.append(_EXIT.sub(r"\1\2", line))
    docstring = "\n".join(head).strip().replace('"""', r'\"\"\"')
    return f'r"""\n{docstring}\n"""\n' + "\n".join(body) + "\n"


def write_sources() -> list:
    """Write the gallery's sources into ``docs/_gallery_src``; return the vignettes run."""
    if SOURCE.exists():
        shutil.rmtree(SOURCE)
    (SOURCE / "examples").mkdir(parents=True)
    (SOURCE / "vignettes").mkdir()
    shutil.copy(DOCS / "examples" / "GALLERY_HEADER.rst", SOURCE / "GALLERY_HEADER.rst")
    for path in sorted((DOCS / "examples").glob("*.py")):
        shutil.copy(path, SOURCE / "examples" / path.name)
    shutil.copy(DOCS / "examples" / "EXAMPLES_HEADER.rst", SOURCE / "examples" /
                "GALLERY_HEADER.rst")
    header = (DOCS / "examples" / "VIGNETTES_HEADER.rst").read_text()
    names = list(vignette_args())
    header += "\n" + ("This build ran the vignettes in their quick mode" +
                      (", some with fewer repetitions (the CI build)." if mode() == "quick"
                       else ".")) + "\n"
    (SOURCE / "vignettes" / "GALLERY_HEADER.rst").write_text(header)
    for name in names:
        text = convert_vignette((ROOT / "vignettes" / f"{name}.py").read_text())
        # the command the page ran, in its introduction (and in the script's checksum, so a
        # change of mode reruns it)
        command = " ".join(["python", f"vignettes/{name}.py", "--quick",
                            *vignette_args()[name]])
        head, rest = text.split('\n"""\n', 1)
        text = f'{head}\n\nThis page ran ``{command}``.\n"""\n{rest}'
        (SOURCE / "vignettes" / f"{name}.py").write_text(text)
    _remove_stale(DOCS / "gallery")
    return names


def _remove_stale(gallery) -> None:
    """Delete the generated pages of examples no longer in the sources (a vignette of the
    other mode), which Sphinx would otherwise read as documents outside every toctree."""
    for folder in (gallery / "examples", gallery / "vignettes"):
        if not folder.is_dir():
            continue
        current = {p.stem for p in (SOURCE / folder.name).glob("*.py")}
        for page in folder.glob("*.rst"):
            if page.stem in ("index", "sg_execution_times") or page.stem in current:
                continue
            for path in folder.glob(f"{page.stem}.*"):
                path.unlink()


# ------------------------------------------------------------------ sphinx-gallery hooks
#: The PNG files of each vignette already put on its page.
_SEEN: dict = {}

def _is_vignette(src_file) -> bool:
    return Path(src_file).parent.name == "vignettes"


def reset_argv(gallery_conf, script_vars) -> list:
    """The command line of an example: a vignette runs with ``--quick --out <its folder>``
    (emptied first) and its mode's arguments; an example with none."""
    src = Path(script_vars["src_file"])
    if not _is_vignette(src):
        return []
    out = OUT / src.stem
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    _SEEN[src.stem] = set()
    return ["--quick", "--out", str(out), *vignette_args()[src.stem]]


def scrape_pngs(block, block_vars, gallery_conf, **kwargs) -> str:
    """Image scraper of the vignettes: the PNG files the block wrote into the vignette's
    ``--out`` folder, in name order, each once; figures left open are closed (the PNG is
    the figure the vignette meant). Other examples: nothing (the matplotlib scraper)."""
    from sphinx_gallery.scrapers import figure_rst

    src = Path(block_vars["src_file"])
    if not _is_vignette(src):
        return ""
    import matplotlib.pyplot as plt

    plt.close("all")
    out = OUT / src.stem
    seen = _SEEN.setdefault(src.stem, set())
    fresh = sorted(p for p in out.glob("*.png") if p.name not in seen) if out.exists() else []
    paths = []
    for png, target in zip(fresh, block_vars["image_path_iterator"]):
        shutil.copyfile(png, target)
        seen.add(png.name)
        paths.append(target)
    return figure_rst(paths, gallery_conf["src_dir"]) if paths else ""
