"""Plain-text tables for the command line's readable output."""

from __future__ import annotations

from typing import Any, Container, Iterable, Sequence


def format_table(header: Sequence[str], rows: Iterable[Sequence[Any]], *, right: Container[int] = ()) -> str:
    """Columns as wide as their widest cell, two spaces apart, a line of dashes under the header.

    Cells are left-aligned, except in the columns whose index is in ``right`` (numbers read better
    right-aligned). Trailing spaces are dropped.
    """
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
