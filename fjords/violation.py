"""The :class:`Violation` value type, the rule codes in their order, and how messages name things.

The checks of :mod:`fjords.layout_checks` and :mod:`fjords.piece_checks` build
violations; :mod:`fjords.legality` gathers and sorts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from fjords.board import Piece
from fjords.boardjson import piece_to_json
from fjords.geometry import Hex

# The rule codes, in the order violations are sorted.
RULES = ("edge-mismatch", "placement-order", "landmass", "piece-terrain", "two-pieces-on-tile",
         "settler-disconnected", "piece-count", "house-on-forbidden-tile", "start-tiles")

TERRAIN_NAMES = {"S": "sea", "M": "mountain", "P": "plain", "?": "unread"}


@dataclass(frozen=True)
class Violation:
    """One broken (or undecided) rule: its code, a sentence for players, and what it concerns."""

    rule: str
    message: str
    tiles: tuple[Hex, ...] = ()
    pieces: tuple[Piece, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "tiles": [[h.q, h.r] for h in self.tiles],
                "pieces": [piece_to_json(p) for p in self.pieces]}

    def sort_key(self) -> tuple[Any, ...]:
        return (RULES.index(self.rule), self.tiles, tuple(piece_sort_key(p) for p in self.pieces), self.message)


def piece_sort_key(piece: Piece) -> tuple[Any, ...]:
    """A total order on pieces (position, sector, kind, player, rune), for stable answers."""
    return (piece.hex, -1 if piece.sector is None else piece.sector, piece.kind, piece.player or "",
            piece.rune or "")


def tile_name(h: Hex) -> str:
    return f"({h.q}, {h.r})"


def tile_names(hexes: Iterable[Hex]) -> str:
    """``(0, 0)``, ``(0, 0) and (1, 0)``, ``(0, 0), (1, 0) and (2, 0)``."""
    listed = [tile_name(h) for h in hexes]
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


def piece_name(piece: Piece) -> str:
    """``the red settler on (0, 0)``."""
    owner = f"{piece.player} " if piece.player else ""
    return f"the {owner}{piece.kind} on {tile_name(piece.hex)}"
