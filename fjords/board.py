"""The board value types: :class:`Tile`, :class:`Piece` and :class:`Board`.

A :class:`Board` is immutable and answers questions about itself; the answers
(legality, score, territory, solving) live in their own modules and are reached
through the methods here so that callers need one import.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from fjords.geometry import (
    LAND,
    SECTORS,
    Hex,
    canonical_segment,
    cyclic_runs,
    facing_sector,
    rotate_sector,
    rotate_terrain,
    segments,
)

if TYPE_CHECKING:
    from fjords.legality import Violation
    from fjords.rules import Rules
    from fjords.territory import Territory

EDITIONS = ("classic", "2022")
KINDS = ("house", "settler", "runestone")
PHASES = ("exploration", "settlement", "finished")

_EMPTY: Mapping[str, Any] = MappingProxyType({})

# A segment is named by its tile and the canonical sector of its run of plains.
SegmentId = tuple[Hex, int]


@dataclass(frozen=True)
class Tile:
    """A placed tile: its position, twelve sector letters (``S``, ``M``, ``P`` or ``?``)."""

    hex: Hex
    terrain: str
    start: bool = False
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)

    @property
    def known(self) -> bool:
        return "?" not in self.terrain

    @property
    def all_mountain(self) -> bool:
        return self.terrain == "M" * SECTORS

    def segments(self) -> tuple[tuple[int, ...], ...]:
        return segments(self.terrain)


@dataclass(frozen=True)
class Piece:
    """A wooden piece: a house or settler of a player, or a rune stone (``player`` None)."""

    hex: Hex
    sector: int | None
    kind: str
    player: str | None = None
    rune: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)

    @property
    def is_player_piece(self) -> bool:
        return self.kind in ("house", "settler")


def _canonical_piece(piece: Piece, tile: Tile | None) -> Piece:
    """The piece with its sector named canonically: a piece stands on a segment, not a sector."""
    if piece.sector is None or tile is None or not tile.known or tile.terrain[piece.sector] != "P":
        return piece
    name = canonical_segment(tile.terrain, piece.sector)
    return piece if name == piece.sector else replace(piece, sector=name)


@dataclass(frozen=True)
class Board:
    """A table of Fjords: tiles by position, the pieces on them, the edition.

    A player piece's ``sector`` is always its segment's canonical name (spec:
    writers write canonical names), so equal positions compare equal.

    ``extra`` keeps top-level fields this engine does not interpret (image
    geometry, renderer metadata) so that reading and writing a document loses
    nothing.
    """

    edition: str = "classic"
    tiles: Mapping[Hex, Tile] = field(default_factory=dict)
    pieces: tuple[Piece, ...] = ()
    phase: str | None = None
    to_move: str | None = None
    extra: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.tiles, MappingProxyType):
            object.__setattr__(self, "tiles", MappingProxyType(dict(self.tiles)))
        object.__setattr__(self, "pieces", tuple(_canonical_piece(p, self.tiles.get(p.hex)) for p in self.pieces))

    # -- construction -------------------------------------------------------

    @classmethod
    def from_tiles(cls, tiles: Iterable[Tile], pieces: Iterable[Piece] = (), **kwargs: Any) -> "Board":
        return cls(tiles={t.hex: t for t in tiles}, pieces=tuple(pieces), **kwargs)

    @classmethod
    def from_json(cls, document: str | bytes | Mapping[str, Any]) -> "Board":
        """Read a ``fjords-board/1`` document (text or parsed); raises :class:`FormatError`."""
        from fjords.boardjson import parse_board

        return parse_board(document)

    def to_json(self) -> dict[str, Any]:
        """The ``fjords-board/1`` document of this board (twelve-letter terrain)."""
        from fjords.boardjson import board_to_json

        return board_to_json(self)

    def dumps(self, indent: int | None = 2) -> str:
        import json

        return json.dumps(self.to_json(), indent=indent)

    def with_pieces(self, pieces: Iterable[Piece]) -> "Board":
        return replace(self, pieces=tuple(pieces))

    def with_tiles(self, tiles: Iterable[Tile]) -> "Board":
        return replace(self, tiles={t.hex: t for t in tiles})

    # -- symmetry -----------------------------------------------------------

    def rotated(self, k: int) -> "Board":
        """The board turned ``k·60°`` counter-clockwise about the origin."""
        tiles = [replace(t, hex=t.hex.rotated(k), terrain=rotate_terrain(t.terrain, k)) for t in self.tiles.values()]
        pieces = [
            replace(p, hex=p.hex.rotated(k), sector=None if p.sector is None else rotate_sector(p.sector, k))
            for p in self.pieces
        ]
        return replace(self, tiles={t.hex: t for t in tiles}, pieces=tuple(pieces))

    def translated(self, dq: int, dr: int) -> "Board":
        tiles = [replace(t, hex=t.hex.translated(dq, dr)) for t in self.tiles.values()]
        pieces = [replace(p, hex=p.hex.translated(dq, dr)) for p in self.pieces]
        return replace(self, tiles={t.hex: t for t in tiles}, pieces=tuple(pieces))

    # -- questions about the layout ---------------------------------------------

    @property
    def players(self) -> tuple[str, ...]:
        """Players with a piece on the board, in order of first appearance."""
        seen: dict[str, None] = {}
        for listed in self.extra.get("players", ()) or ():
            if isinstance(listed, str):
                seen[listed] = None
        for p in self.pieces:
            if p.player is not None:
                seen[p.player] = None
        return tuple(seen)

    def tile_neighbours(self, h: Hex) -> Iterator[tuple[int, Tile]]:
        """``(direction, tile)`` for every tile next to ``h``."""
        for d in range(6):
            t = self.tiles.get(h.neighbour(d))
            if t is not None:
                yield d, t

    def facing(self, h: Hex, sector: int) -> tuple[Tile, int] | None:
        """The neighbouring tile and its sector lying against ``sector`` of the tile at ``h``."""
        t = self.tiles.get(h.neighbour(sector // 2))
        return None if t is None else (t, facing_sector(sector))

    def pieces_at(self, h: Hex) -> tuple[Piece, ...]:
        return self._pieces_by_hex.get(h, ())

    @cached_property
    def _pieces_by_hex(self) -> dict[Hex, tuple[Piece, ...]]:
        by_hex: dict[Hex, list[Piece]] = {}
        for p in self.pieces:
            by_hex.setdefault(p.hex, []).append(p)
        return {h: tuple(ps) for h, ps in by_hex.items()}

    def segment_id(self, h: Hex, sector: int) -> SegmentId | None:
        """The segment of plains holding ``sector`` of the tile at ``h`` (None if not plain)."""
        t = self.tiles.get(h)
        if t is None:
            return None
        name = canonical_segment(t.terrain, sector)
        return None if name is None else (h, name)

    @cached_property
    def segment_graph(self) -> Mapping[SegmentId, frozenset[SegmentId]]:
        """Every segment of plains and the segments adjacent to it across tile edges."""
        return MappingProxyType(self._run_graph("P"))

    @cached_property
    def land_graph(self) -> Mapping[SegmentId, frozenset[SegmentId]]:
        """Every run of land sectors (named by its first sector) and the runs it touches."""
        return MappingProxyType(self._run_graph(LAND))

    def _run_graph(self, letters: frozenset[str] | str) -> dict[SegmentId, frozenset[SegmentId]]:
        owner: dict[tuple[Hex, int], SegmentId] = {}
        for t in self.tiles.values():
            for run in cyclic_runs(t.terrain, letters):
                for i in run:
                    owner[(t.hex, i)] = (t.hex, run[0])
        links: dict[SegmentId, set[SegmentId]] = {node: set() for node in owner.values()}
        for (h, i), node in owner.items():
            other = owner.get((h.neighbour(i // 2), facing_sector(i)))
            if other is not None:
                links[node].add(other)
        return {node: frozenset(adj) for node, adj in links.items()}

    # -- analysis (implemented in their own modules) ------------------------------

    def legal_violations(self, rules: "Rules | None" = None) -> list["Violation"]:
        """Every rule the board breaks, decided on what can be read (see :mod:`fjords.legality`)."""
        from fjords.legality import legal_violations

        return legal_violations(self, rules)

    def is_legal(self, rules: "Rules | None" = None) -> bool:
        return not self.legal_violations(rules)

    def score(self) -> dict[str, int]:
        """Points per player as the board stands (see :mod:`fjords.scoring`)."""
        from fjords.scoring import score

        return score(self)

    def territory(self) -> "Territory":
        """Secured, contested and dead plain tiles for the settlement phase."""
        from fjords.territory import territory

        return territory(self)
