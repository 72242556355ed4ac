"""Territory of the settlement phase: who can still settle which empty tile.

Every empty tile with plains is *secured* by a player (only that player can
ever settle it), *contested* (two or more can) or *dead* (nobody can). Reach is
exact: a chain of placements visits each tile once, which a plain flood over
segments does not respect when it passes through two segments of one tile;
:func:`fjords.settlement.reachable_tiles` branches on such tiles. A player's
reach only shrinks as pieces are added (any future chain of its settlers is a
chain of distinct tiles empty today), so "can ever settle" is decided now.
``docs/rules.md`` ("Territory") shows the positions and our readings of the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from fjords.board import Board
from fjords.geometry import Hex
from fjords.plains import bits
from fjords.rules import Rules
from fjords.scoring import score
from fjords.settlement import position, reachable_tiles, solo_maximum

__all__ = ["Territory", "current_points", "territory"]


@dataclass(frozen=True)
class Territory:
    """The classification of the empty plain tiles, and score bounds per player.

    ``points``: points on the board now. ``secured_minimum``: final points the
    player gets however the others play (its current points plus what it can
    settle through its own secured tiles alone). ``reachable_maximum``: final
    points it could reach if nobody else moved. ``reach``: for every
    classified tile, the players who can settle it.
    """

    secured: Mapping[str, tuple[Hex, ...]]
    contested: tuple[Hex, ...]
    dead: tuple[Hex, ...]
    points: Mapping[str, int]
    secured_minimum: Mapping[str, int]
    reachable_maximum: Mapping[str, int]
    reach: Mapping[Hex, tuple[str, ...]]

    def to_json(self) -> dict[str, Any]:
        def cells(hexes: Sequence[Hex]) -> list[list[int]]:
            return [[h.q, h.r] for h in hexes]

        return {
            "secured": {p: cells(hs) for p, hs in self.secured.items()},
            "contested": [{"q": h.q, "r": h.r, "players": list(self.reach[h])} for h in self.contested],
            "dead": cells(self.dead),
            "players": {
                p: {"points": self.points[p], "secured_tiles": len(self.secured[p]),
                    "secured_minimum": self.secured_minimum[p], "reachable_maximum": self.reachable_maximum[p]}
                for p in self.points
            },
        }


def current_points(board: Board, players: Sequence[str]) -> dict[str, int]:
    """Points on the board now (:func:`fjords.scoring.score`) of each of ``players``, 0 for none."""
    points = score(board)
    return {p: points.get(p, 0) for p in players}


def territory(board: Board, rules: Rules | None = None) -> Territory:
    """Classify the board's empty plain tiles; see :class:`Territory`."""
    players = board.players
    pos = position(board, players, rules)
    index = pos.index
    reach = {p: reachable_tiles(index, pos.frontier[p], pos.free, pos.settlers_left[p]) for p in players}
    empty = index.tiles_in(pos.free)
    seen_once = seen_twice = 0
    for tiles in reach.values():
        seen_twice |= seen_once & tiles
        seen_once |= tiles
    only = {p: tiles & ~seen_twice for p, tiles in reach.items()}

    points = current_points(board, players)
    secured_minimum, reachable_maximum = {}, {}
    for p in players:
        left, frontier = pos.settlers_left[p], pos.frontier[p]
        own_free = 0
        for t in bits(only[p]):
            own_free |= index.tile_segments[t]
        secured_minimum[p] = points[p] + solo_maximum(index, frontier, pos.free & own_free, left)
        reachable_maximum[p] = points[p] + solo_maximum(index, frontier, pos.free, left)

    def hexes(tiles: int) -> tuple[Hex, ...]:
        return tuple(index.hexes[t] for t in bits(tiles))

    return Territory(
        secured={p: hexes(only[p]) for p in players},
        contested=hexes(seen_twice),
        dead=hexes(empty & ~seen_once),
        points=points,
        secured_minimum=secured_minimum,
        reachable_maximum=reachable_maximum,
        reach={index.hexes[t]: tuple(p for p in players if reach[p] >> t & 1) for t in bits(seen_once)},
    )
