"""Moves of the settlement phase, and the compact plains index the analysis searches.

In the settlement phase a player places a settler on a segment of plains of an
*empty* tile (no piece of any kind, rune stones included) when that segment is
adjacent (:attr:`Board.segment_graph`) to a segment holding one of the player's
own pieces, house or settler. Interpretations are in ``docs/rules-settlement.md``.

:class:`PlainsIndex` numbers a layout's segments and tiles once, so that a
position is a few integers used as bit sets: ``free`` (segments on empty tiles)
and, per player, ``frontier`` (segments adjacent to the player's pieces). The
territory and the solver search on these integers; the functions taking a
:class:`Board` are the readable API on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator, Mapping, Sequence

from fjords.board import Board, Piece, SegmentId, Tile
from fjords.geometry import Hex
from fjords.rules import Rules

__all__ = [
    "PlainsIndex",
    "Position",
    "bits",
    "house_moves",
    "place",
    "plains_index",
    "position",
    "reachable_tiles",
    "settlement_over",
    "settler_moves",
    "solo_maximum",
]


def bits(mask: int) -> Iterator[int]:
    """The indices of the set bits of ``mask``, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


@dataclass(frozen=True)
class PlainsIndex:
    """The segments of plains of a layout, numbered in ``(q, r, sector)`` order.

    ``neighbours[s]`` is the bit set of segments adjacent to segment ``s``;
    ``tile_of[s]`` the index of its tile in ``hexes``; ``tile_segments[t]`` the
    bit set of the segments of tile ``t``. Only tiles with plains are indexed.
    """

    segments: tuple[SegmentId, ...]
    hexes: tuple[Hex, ...]
    neighbours: tuple[int, ...]
    tile_of: tuple[int, ...]
    tile_segments: tuple[int, ...]
    number: Mapping[SegmentId, int]

    @classmethod
    def of(cls, board: Board) -> "PlainsIndex":
        return cls.from_graph(board.segment_graph)

    @classmethod
    def from_graph(cls, graph: Mapping[SegmentId, frozenset[SegmentId]]) -> "PlainsIndex":
        segments = tuple(sorted(graph, key=lambda s: (s[0].q, s[0].r, s[1])))
        number = {s: n for n, s in enumerate(segments)}
        hexes = tuple(dict.fromkeys(h for h, _ in segments))
        tile_number = {h: n for n, h in enumerate(hexes)}
        tile_of = tuple(tile_number[h] for h, _ in segments)
        tile_segments = [0] * len(hexes)
        for n, t in enumerate(tile_of):
            tile_segments[t] |= 1 << n
        neighbours = tuple(sum(1 << number[o] for o in graph[s]) for s in segments)
        return cls(segments, hexes, neighbours, tile_of, tuple(tile_segments), number)

    def subset(self, segments: int) -> "PlainsIndex":
        """The index of only ``segments`` (renumbered), and their adjacency among themselves."""
        return PlainsIndex.from_graph({
            self.segments[s]: frozenset(self.segments[o] for o in bits(self.neighbours[s] & segments))
            for s in bits(segments)})

    def translate(self, segments: int, other: "PlainsIndex") -> int:
        """The bit set in ``other``'s numbering of those of ``segments`` that ``other`` indexes."""
        number = other.number
        return sum(1 << number[self.segments[s]] for s in bits(segments) if self.segments[s] in number)

    def same_tile(self, segment: int) -> int:
        """The bit set of every segment on the tile of ``segment`` (itself included)."""
        return self.tile_segments[self.tile_of[segment]]

    @cached_property
    def _adjacent(self) -> "_UnionTable":
        return _UnionTable(self.neighbours)

    @cached_property
    def _linked(self) -> "_UnionTable":
        return _UnionTable(tuple(n | self.same_tile(s) for s, n in enumerate(self.neighbours)))

    @cached_property
    def _tile_bit(self) -> "_UnionTable":
        return _UnionTable(tuple(1 << t for t in self.tile_of))

    @cached_property
    def _tile_segments_table(self) -> "_UnionTable":
        return _UnionTable(self.tile_segments)

    def segments_of_tiles(self, tiles: int) -> int:
        """The bit set of every segment of the tiles in the bit set ``tiles``."""
        return self._tile_segments_table.union(tiles)

    def adjacent_to(self, segments: int) -> int:
        """The bit set of segments adjacent to any of ``segments``."""
        return self._adjacent.union(segments)

    def reach(self, frontier: int, free: int, steps: int | None = None) -> int:
        """Free segments joined to ``frontier`` through free segments (tiles may repeat).

        ``steps``: only segments at most that many placements away (the first
        placement, on ``frontier & free``, is one step).
        """
        seen = todo = frontier & free
        union = self._adjacent.union
        step = 1
        while todo and (steps is None or step < steps):
            todo = union(todo) & free & ~seen
            seen |= todo
            step += 1
        return seen if steps is None or steps > 0 else 0

    def ambiguous_tile(self, segments: int) -> int | None:
        """A tile holding two or more of ``segments`` (its index), or None."""
        for s in bits(segments):
            on_tile = segments & self.same_tile(s)
            if on_tile & (on_tile - 1):
                return self.tile_of[s]
        return None

    def regions(self, free: int, around: int | None = None) -> list[int]:
        """Split ``free`` into regions no placement can join (only those meeting ``around``, if given).

        A region is closed under adjacency and under "same tile" (settling one
        segment of a tile takes the others), so what happens in one region never
        changes which moves exist in another.
        """
        union = self._linked.union
        out = []
        seeds = free if around is None else around & free
        while seeds:
            seen = todo = seeds & -seeds
            while todo:
                todo = union(todo) & free & ~seen
                seen |= todo
            out.append(seen)
            seeds &= ~seen
        return out

    def tiles_in(self, segments: int) -> int:
        """The bit set of tiles (indices into ``hexes``) holding any of ``segments``."""
        return self._tile_bit.union(segments)

    def piece(self, segment: int, kind: str, player: str) -> Piece:
        h, sector = self.segments[segment]
        return Piece(hex=h, sector=sector, kind=kind, player=player)


class _UnionTable:
    """``union(mask)``: the OR of ``masks[i]`` over the set bits ``i`` of ``mask``.

    Looked up a byte of ``mask`` at a time in 256-entry tables, filled on first
    use (a search uses few of the entries, a single analysis fewer still): the
    floods of the searches run several times faster than bit by bit.
    """

    def __init__(self, masks: tuple[int, ...]):
        self.masks = masks
        self.tables = [[-1] * 256 for _ in range(0, len(masks), 8)]

    def union(self, mask: int) -> int:
        out = 0
        tables = self.tables
        while mask:
            chunk = ((mask & -mask).bit_length() - 1) >> 3  # skip the empty bytes
            shift = chunk << 3
            byte = (mask >> shift) & 255
            value = tables[chunk][byte]
            if value < 0:
                value = 0
                for i in bits(byte):
                    value |= self.masks[shift + i]
                tables[chunk][byte] = value
            out |= value
            mask &= ~(255 << shift)
        return out


# Layouts are immutable and a game keeps one tiles mapping for every position,
# so the index is cached by the identity of that mapping (kept alive alongside).
_INDEX_CACHE: dict[int, tuple[Mapping[Hex, Tile], PlainsIndex]] = {}
_INDEX_CACHE_SIZE = 64


def plains_index(board: Board) -> PlainsIndex:
    """The (cached) :class:`PlainsIndex` of the board's layout."""
    key = id(board.tiles)
    hit = _INDEX_CACHE.get(key)
    if hit is not None and hit[0] is board.tiles:
        return hit[1]
    index = PlainsIndex.of(board)
    if len(_INDEX_CACHE) >= _INDEX_CACHE_SIZE:
        _INDEX_CACHE.pop(next(iter(_INDEX_CACHE)))
    _INDEX_CACHE[key] = (board.tiles, index)
    return index


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
        on_tile = reached & index.tile_segments[tile]
        for keep in bits(on_tile):
            branch(free & ~(on_tile ^ (1 << keep)))
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
        on_tile = reached & index.tile_segments[tile]
        for keep in bits(on_tile):
            branch(free & ~(on_tile ^ (1 << keep)))

    branch(free)
    return found
