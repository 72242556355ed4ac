"""The compact plains index the settlement analysis searches: segments and tiles as bit sets.

:class:`PlainsIndex` numbers a layout's segments of plains and their tiles
once, so that a settlement position is a few integers used as bit sets (see
:class:`fjords.settlement.Position`); territory and the solver search on
these integers.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Iterator, Mapping

from fjords.board import Board, Piece, SegmentId, Tile
from fjords.geometry import Hex

__all__ = ["PlainsIndex", "bits", "plains_index"]


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
