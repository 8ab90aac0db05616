"""Fail when a gallery example's figure is missing from the built site.

    python docs/check_gallery.py [docs/_build/html]

Every example of the gallery (``docs/_gallery_src``: the examples and the vignettes the build
ran) must have a page that shows at least one figure, and every figure a page shows must be
a non-empty image file of the site. Exit status 1 names the examples that fail.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
IMG = re.compile(r'<img[^>]+src="([^"]+)"')


def missing_figures(html_dir: Path, source: Path = DOCS / "_gallery_src") -> dict:
    """Example -> what is wrong with its page (no page, no figure, an image file missing)."""
    problems = {}
    examples = sorted(source.glob("*/*.py"))
    if not examples:
        return {str(source): "no gallery examples found (was the site built?)"}
    for script in examples:
        name = f"{script.parent.name}/{script.stem}"
        page = html_dir / "gallery" / script.parent.name / f"{script.stem}.html"
        if not page.exists():
            problems[name] = f"no page ({page})"
            continue
        figures = [src for src in IMG.findall(page.read_text(encoding="utf-8"))
                   if f"sphx_glr_{script.stem}_" in src and "thumb" not in src]
        if not figures:
            problems[name] = "its page shows no figure"
            continue
        for src in figures:
            image = (page.parent / src).resolve()
            if not image.is_file() or image.stat().st_size == 0:
                problems[name] = f"figure {src} is not in the site"
    return problems


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    html_dir = Path(argv[0]) if argv else DOCS / "_build" / "html"
    problems = missing_figures(html_dir)
    for name, why in problems.items():
        print(f"gallery example {name}: {why}", file=sys.stderr)
    n = len(list((DOCS / "_gallery_src").glob("*/*.py")))
    if not problems:
        print(f"gallery: {n} examples, each with its figures")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
