"""Moves of the settlement phase, and what one player can settle alone.

In the settlement phase a player places a settler on a segment of plains of an
*empty* tile (no piece of any kind, rune stones included) when that segment is
adjacent (:attr:`Board.segment_graph`) to a segment holding one of the player's
own pieces, house or settler. Interpretations are in ``docs/rules.md``
("Territory").

A :class:`Position` is a few integers used as bit sets over a
:class:`~fjords.plains.PlainsIndex`: ``free`` (segments on empty tiles) and,
per player, ``frontier`` (segments adjacent to the player's pieces). The
territory and the solver search on these integers; the functions taking a
:class:`Board` are the readable API on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

from fjords.board import Board, Piece
from fjords.geometry import Hex
from fjords.plains import PlainsIndex, bits, plains_index
from fjords.rules import Rules

__all__ = [
    "Position",
    "house_moves",
    "place",
    "position",
    "reachable_tiles",
    "settlement_over",
    "settler_moves",
    "solo_maximum",
]


@dataclass(frozen=True)
class Position:
    """A settlement position as bit sets over a :class:`PlainsIndex`.

    ``free``: segments on tiles without any piece. ``frontier[p]``: segments
    adjacent to a segment holding one of ``p``'s pieces. ``settlers_left[p]``:
    settlers ``p`` may still place.
    """

    index: PlainsIndex = field(repr=False)
    free: int
    frontier: Mapping[str, int]
    settlers_left: Mapping[str, int]

    def moves(self, player: str) -> int:
        """The bit set of segments ``player`` may settle now."""
        if self.settlers_left.get(player, 0) <= 0:
            return 0
        return self.frontier.get(player, 0) & self.free


def position(board: Board, players: Sequence[str] | None = None, rules: Rules | None = None) -> Position:
    """The :class:`Position` of ``board`` for ``players`` (default: the board's players)."""
    rules = rules or Rules.for_edition(board.edition)
    index = plains_index(board)
    players = tuple(board.players) if players is None else tuple(players)
    occupied = {p.hex for p in board.pieces}
    free = 0
    for t, h in enumerate(index.hexes):
        if h not in occupied:
            free |= index.tile_segments[t]
    frontier = dict.fromkeys(players, 0)
    settlers = dict.fromkeys(players, 0)
    for p in board.pieces:
        if p.player not in frontier or p.sector is None:
            continue
        if p.kind == "settler":
            settlers[p.player] += 1
        segment = board.segment_id(p.hex, p.sector)
        if segment is not None and segment in index.number:
            frontier[p.player] |= index.neighbours[index.number[segment]]
    left = {p: max(0, rules.settlers_per_player - settlers[p]) for p in players}
    return Position(index, free, frontier, left)


def settler_moves(board: Board, player: str, rules: Rules | None = None) -> list[Piece]:
    """Every legal settler placement of ``player``, canonical sectors, in ``(q, r, sector)`` order."""
    pos = position(board, (player,), rules)
    return [pos.index.piece(s, "settler", player) for s in bits(pos.moves(player))]


def place(board: Board, piece: Piece) -> Board:
    """The board with ``piece`` added (no legality check: see :func:`settler_moves`)."""
    return board.with_pieces(board.pieces + (piece,))


def house_moves(board: Board, tile: Hex, player: str, rules: Rules | None = None) -> list[Piece]:
    """The houses ``player`` may put on ``tile``, the tile they just placed.

    One per segment of plains, when the tile is empty, not a start tile, not
    the all-mountain tile, and the player has a house left.
    """
    rules = rules or Rules.for_edition(board.edition)
    t = board.tiles.get(tile)
    if t is None or t.start or t.all_mountain or board.pieces_at(tile):
        return []
    houses = sum(1 for p in board.pieces if p.kind == "house" and p.player == player)
    if houses >= rules.houses_per_player:
        return []
    return [Piece(hex=tile, sector=run[0], kind="house", player=player) for run in t.segments()]


def settlement_over(board: Board, players: Sequence[str], rules: Rules | None = None) -> bool:
    """True when none of ``players`` can place a settler."""
    pos = position(board, players, rules)
    return not any(pos.moves(p) for p in players)


def solo_maximum(index: PlainsIndex, frontier: int, free: int, limit: int | None = None) -> int:
    """The most tiles one player can settle alone from ``frontier`` over ``free`` segments.

    Exact: a flood over segments may pass through two segments of one tile, but
    a tile takes one piece. So while the flood holds two segments of a tile,
    branch on which one the player keeps (the others leave ``free``; keeping
    none is never better). In a branch where every reached tile has one reached
    segment, every reached tile can be settled, in flood order. A branch's
    flood is an upper bound on all its sub-branches and stops the branching
    early. ``limit``: settlers left (any prefix of a flood order can be settled).
    """
    cap = len(index.hexes) if limit is None else limit
    best = 0

    def branch(free: int) -> None:
        nonlocal best
        reached = index.reach(frontier, free)
        count = index.tiles_in(reached).bit_count()
        if min(count, cap) <= best:
            return
        tile = index.ambiguous_tile(reached)
        if tile is None:
            best = min(count, cap)
            return
        for kept in _keeping_one_segment(index, free, reached, tile):
            branch(kept)
            if best >= cap:
                return

    branch(free)
    return best


def reachable_tiles(index: PlainsIndex, frontier: int, free: int, limit: int | None = None) -> int:
    """The tiles (bit set over ``index.hexes``) one player could ever settle, each on its own.

    A tile is reachable when a chain of at most ``limit`` placements on
    distinct empty tiles, each adjacent to the one before and the first to
    ``frontier``, ends on it. Exact by the same branching as
    :func:`solo_maximum`: the union over branches of the tiles each branch's
    flood reaches within ``limit`` steps; a branch whose flood adds nothing to
    the union found so far is not split further.
    """
    found = 0

    def branch(free: int) -> None:
        nonlocal found
        reached = index.reach(frontier, free, limit)
        tiles = index.tiles_in(reached)
        if not tiles & ~found:
            return
        tile = index.ambiguous_tile(reached)
        if tile is None:
            found |= tiles
            return
        for kept in _keeping_one_segment(index, free, reached, tile):
            branch(kept)

    branch(free)
    return found


def _keeping_one_segment(index: PlainsIndex, free: int, reached: int, tile: int) -> Iterator[int]:
    """The branches on a tile the flood reached through several segments: per reached segment of
    ``tile``, ``free`` without the tile's other reached segments."""
    on_tile = reached & index.tile_segments[tile]
    for keep in bits(on_tile):
        yield free & ~(on_tile ^ (1 << keep))
