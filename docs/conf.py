"""Sphinx configuration of mbstat's documentation site.

Build (quick gallery, as CI does):   python -m sphinx -W --keep-going -b html docs docs/_build/html
Full gallery:                        MBSTAT_GALLERY=full python -m sphinx -W -b html docs docs/_build/html
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))

import mbstat  # noqa: E402
import mbstat_architecture  # noqa: E402
import mbstat_gallery  # noqa: E402

project = "mbstat"
author = "the mbstat authors"
copyright = "the mbstat authors, BSD-3-Clause"
release = version = mbstat.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    "mbstat_docstrings",  # docs/_ext: |X| as text, "Extra attributes" as Attributes
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md", "_gallery_src", "examples", "**.ipynb_checkpoints"]
# `name` in docstrings and vignettes is code (as in Markdown), not a cross-reference
default_role = "literal"
myst_heading_anchors = 3
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["myst.header"]  # the changelog's first heading is its title

# ------------------------------------------------------------------ API reference
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # numpydoc writes the types from the docstrings
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set = set()
# numpydoc also parses a class's raw docstring for its member list and warns there of the
# "Extra attributes" section that docs/_ext/mbstat_docstrings.py renders as "Attributes"
warnings.filterwarnings("ignore", message="Unknown section Extra Attributes", category=UserWarning)

#: Modules without a public page (entry points and private helpers).
SKIP = {"mbstat.__main__", "mbstat.cli"}


def public_modules() -> list:
    """Every public module of the package (no part of its name starts with '_')."""
    names = ["mbstat"]
    for info in pkgutil.walk_packages(mbstat.__path__, "mbstat."):
        if info.name in SKIP or any(p.startswith("_") for p in info.name.split(".")):
            continue
        names.append(info.name)
    return sorted(names)


def documented_names(module_name: str, top: set) -> list:
    """The public names a module's page documents: those of its ``__all__`` (or, without
    one, its public names) defined in it, less those documented on the top-level page."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if obj is None or isinstance(obj, type(sys)):
            continue
        home = getattr(obj, "__module__", module_name)
        if module_name != "mbstat" and (name in top and getattr(mbstat, name, None) is obj):
            continue
        if home != module_name and module_name != "mbstat":
            continue  # a re-export: documented where it is defined
        out.append(name)
    return out


def write_api() -> None:
    """``docs/api/*.rst``: one page per public module, each public object once (the
    package's top-level names on the ``mbstat`` page)."""
    folder = DOCS / "api"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.rst"):
        old.unlink()
    top = set(mbstat.__all__)
    pages = []
    for name in public_modules():
        members = documented_names(name, top)
        module = importlib.import_module(name)
        if not members and name != "mbstat":
            continue
        title = f"``{name}``"
        lines = [title, "=" * len(title), "", f".. automodule:: {name}", "   :no-members:", ""]
        if members:
            lines += [f".. currentmodule:: {name}", ""]
            for member in members:
                obj = getattr(module, member)
                kind = ("autoclass" if isinstance(obj, type) else
                        "autofunction" if callable(obj) else "autodata")
                lines += [f".. {kind}:: {member}", ""]
                if kind == "autoclass":
                    lines[-1:] = ["   :members:", ""]
        (folder / f"{name}.rst").write_text("\n".join(lines))
        pages.append(name)
    index = ["API reference", "=============", "",
             "Every public object of the package, from its docstring. The functions and "
             "classes of ``import mbstat`` are on the first page; the modules after it hold "
             "the result classes, the tests' machinery, the data sets and the networks.", "",
             ".. toctree::", "   :maxdepth: 1", ""]
    index += [f"   {name}" for name in pages]
    (folder / "index.rst").write_text("\n".join(index) + "\n")


write_api()
mbstat_gallery.write_sources()
# the layers and families, drawn from the import contracts that lint-imports checks
mbstat_architecture.draw(DOCS.parent / "pyproject.toml", DOCS / "_generated" / "architecture.svg")

# ------------------------------------------------------------------ gallery
sphinx_gallery_conf = {
    "examples_dirs": ["_gallery_src"],
    "gallery_dirs": ["gallery"],
    "filename_pattern": r".*\.py$",  # run every example
    "reset_argv": "mbstat_gallery.reset_argv",
    "image_scrapers": ("mbstat_gallery.scrape_pngs", "matplotlib"),
    "capture_repr": ("_repr_html_", "__repr__"),
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": False,  # every failing example is reported; -W fails the build
    "only_warn_on_example_error": False,
    "min_reported_time": 1,
    "show_memory": False,
    "plot_gallery": "True",
}

# ------------------------------------------------------------------ HTML
html_theme = "pydata_sphinx_theme"
html_title = f"mbstat {release}"
html_static_path: list = []
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
html_sidebars = {"index": [], "getting_started": [], "changelog": []}  # no sections to list
