"""Read mbstat's docstrings as the plain text they are written in, before numpydoc parses them.

* ``|X|`` is a cardinality in these docstrings (as in the papers), never a reST substitution:
  a ``|`` outside literals (````...````) and math roles is escaped, except on table rows.
* "Extra attributes" (a result's attributes beyond its base class's) is not a numpydoc
  section, and numpydoc drops unknown sections: it is read as "Attributes".
"""
from __future__ import annotations

import re

_LITERAL = re.compile(r"(``.+?``|:math:`[^`]*`)")
_EXTRA = re.compile(r"^(\s*)Extra attributes\s*$", re.IGNORECASE)


def escape_bars(line: str) -> str:
    """``|`` outside literals and math escaped; reST table rows and line blocks left as they are."""
    stripped = line.strip()
    table_row = stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1
    if table_row or stripped.startswith(("| ", "+-", "+=")) or stripped == "|":
        return line
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else re.sub(r"(?<!\\)\|", r"\\|", p) for i, p in enumerate(parts))


def process(app, what, name, obj, options, lines) -> None:
    has_attributes = any(line.strip() == "Attributes" for line in lines)
    for i, line in enumerate(lines):
        match = _EXTRA.match(line)
        if match and not has_attributes:
            lines[i] = f"{match.group(1)}Attributes"
            if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
                lines[i + 1] = match.group(1) + "-" * len("Attributes")
            continue
        lines[i] = escape_bars(line)


def setup(app):
    app.connect("autodoc-process-docstring", process, priority=100)  # before numpydoc (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
