"""Reading and writing ``fjords-board/1`` documents.

Every problem with a document raises :class:`FormatError` whose message is one
sentence a user can act on; the command line prints it and exits 2.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any, Mapping

from fjords.board import EDITIONS, KINDS, PHASES, Board, Piece, Tile
from fjords.errors import FjordsError
from fjords.geometry import SECTORS, Hex, expand_terrain

FORMAT = "fjords-board/1"
MAX_TILES = 10_000
MAX_PIECES = 10_000
MAX_COORD = 10_000
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024
TERRAIN_LETTERS = frozenset("SMP?")

_TILE_KEYS = frozenset({"q", "r", "terrain", "start"})
_PIECE_KEYS = frozenset({"q", "r", "sector", "kind", "player", "rune"})
_BOARD_KEYS = frozenset({"format", "edition", "tiles", "pieces", "phase", "to_move"})


class FormatError(FjordsError, ValueError):
    """A document that is not a valid ``fjords-board/1`` board."""


def parse_board(document: str | bytes | Mapping[str, Any]) -> Board:
    if isinstance(document, (str, bytes)):
        if len(document) > MAX_DOCUMENT_BYTES:
            raise FormatError(f"document is larger than {MAX_DOCUMENT_BYTES // 2**20} MiB")
        try:
            document = json.loads(document)
        except json.JSONDecodeError as exc:
            raise FormatError(f"not valid JSON: {exc}") from None
        except UnicodeDecodeError as exc:
            raise FormatError(f"not valid JSON: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                              "is it a binary file?") from None
        except ValueError:  # what else json.loads raises: a number too long to convert
            raise FormatError("not valid JSON: a number has too many digits") from None
        except RecursionError:
            raise FormatError("not valid JSON: nested too deeply") from None
    if not isinstance(document, Mapping):
        raise FormatError("a fjords-board/1 document must be a JSON object")
    if document.get("format") != FORMAT:
        raise FormatError(f"unknown format {document.get('format')!r}; expected {FORMAT!r}")
    edition = document.get("edition", "classic")
    if edition not in EDITIONS:
        raise FormatError(f"unknown edition {edition!r}; expected one of {', '.join(EDITIONS)}")
    phase = document.get("phase")
    if phase is not None and phase not in PHASES:
        raise FormatError(f"unknown phase {phase!r}; expected one of {', '.join(PHASES)}")
    to_move = document.get("to_move")
    if to_move is not None and not isinstance(to_move, str):
        raise FormatError("to_move must be a player name")

    raw_tiles = _list(document, "tiles", MAX_TILES)
    raw_pieces = _list(document, "pieces", MAX_PIECES)
    tiles: dict[Hex, Tile] = {}
    for n, raw in enumerate(raw_tiles):
        tile = _parse_tile(raw, n)
        if tile.hex in tiles:
            raise FormatError(f"tile {n}: two tiles at q={tile.hex.q}, r={tile.hex.r}")
        tiles[tile.hex] = tile
    pieces = tuple(_parse_piece(raw, n, tiles) for n, raw in enumerate(raw_pieces))
    extra = {k: v for k, v in document.items() if k not in _BOARD_KEYS}
    return Board(edition=edition, tiles=tiles, pieces=pieces, phase=phase, to_move=to_move,
                 extra=MappingProxyType(extra))


def _list(document: Mapping[str, Any], key: str, limit: int) -> list[Any]:
    value = document.get(key, [])
    if not isinstance(value, list):
        raise FormatError(f"{key} must be a list")
    if len(value) > limit:
        raise FormatError(f"{len(value)} {key} is more than any table holds (at most {limit})")
    return value


def _coordinate(raw: Mapping[str, Any], key: str, where: str) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"{where}: {key} must be an integer, not {value!r}")
    if abs(value) > MAX_COORD:
        raise FormatError(f"{where}: {key}={value} is absurdly far from the origin")
    return value


def _parse_tile(raw: Any, n: int) -> Tile:
    where = f"tile {n}"
    if not isinstance(raw, Mapping):
        raise FormatError(f"{where} must be an object")
    h = Hex(_coordinate(raw, "q", where), _coordinate(raw, "r", where))
    terrain = raw.get("terrain")
    if not isinstance(terrain, str) or len(terrain) not in (6, SECTORS):
        raise FormatError(f"{where} at q={h.q}, r={h.r}: terrain must be 12 (or 6) letters, not {terrain!r}")
    terrain = expand_terrain(terrain.upper())
    bad = sorted(set(terrain) - TERRAIN_LETTERS)
    if bad:
        raise FormatError(f"{where} at q={h.q}, r={h.r}: terrain {terrain!r} has letters {''.join(bad)!r}; "
                          "use S (sea), M (mountain), P (plain) or ?")
    start = raw.get("start", False)
    if not isinstance(start, bool):
        raise FormatError(f"{where}: start must be true or false")
    extra = {k: v for k, v in raw.items() if k not in _TILE_KEYS}
    return Tile(hex=h, terrain=terrain, start=start, extra=MappingProxyType(extra))


def _parse_piece(raw: Any, n: int, tiles: Mapping[Hex, Tile]) -> Piece:
    where = f"piece {n}"
    if not isinstance(raw, Mapping):
        raise FormatError(f"{where} must be an object")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise FormatError(f"{where}: unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    h = Hex(_coordinate(raw, "q", where), _coordinate(raw, "r", where))
    sector = raw.get("sector")
    if sector is not None and (isinstance(sector, bool) or not isinstance(sector, int) or not 0 <= sector < SECTORS):
        raise FormatError(f"{where}: sector must be 0..11, not {sector!r}")
    player = raw.get("player")
    rune = raw.get("rune")
    if kind == "runestone":
        if player is not None:
            raise FormatError(f"{where}: a rune stone belongs to no player (player must be null)")
        if rune is not None and not isinstance(rune, str):
            raise FormatError(f"{where}: rune must be a name such as 'thor'")
    else:
        if not isinstance(player, str) or not player.strip():
            raise FormatError(f"{where}: a {kind} needs its player's colour name")
        if h not in tiles:
            raise FormatError(f"{where}: a {kind} at q={h.q}, r={h.r} where there is no tile")
        if sector is None:
            raise FormatError(f"{where}: a {kind} needs the sector it stands on")
        player = player.lower()
    if rune is not None:
        rune = rune.lower()
    extra = {k: v for k, v in raw.items() if k not in _PIECE_KEYS}
    return Piece(hex=h, sector=sector, kind=kind, player=player, rune=rune, extra=MappingProxyType(extra))


def board_to_json(board: Board) -> dict[str, Any]:
    """The document of ``board`` (piece sectors are canonical segment names, see :class:`Board`)."""
    doc: dict[str, Any] = {"format": FORMAT, "edition": board.edition}
    if board.phase is not None:
        doc["phase"] = board.phase
    if board.to_move is not None:
        doc["to_move"] = board.to_move
    doc["tiles"] = [tile_to_json(t) for t in board.tiles.values()]
    doc["pieces"] = [piece_to_json(p) for p in board.pieces]
    for key, value in board.extra.items():
        doc.setdefault(key, value)
    return doc


def tile_to_json(tile: Tile) -> dict[str, Any]:
    """A tile's entry of the document (fields the engine does not know are kept)."""
    out: dict[str, Any] = {"q": tile.hex.q, "r": tile.hex.r, "terrain": tile.terrain}
    if tile.start:
        out["start"] = True
    out.update((k, v) for k, v in tile.extra.items() if k not in out)
    return out


def piece_to_json(piece: Piece) -> dict[str, Any]:
    """A piece's entry of the document (fields the engine does not know are kept)."""
    out: dict[str, Any] = {"q": piece.hex.q, "r": piece.hex.r, "sector": piece.sector, "kind": piece.kind,
                           "player": piece.player}
    if piece.rune is not None:
        out["rune"] = piece.rune
    out.update((k, v) for k, v in piece.extra.items() if k not in out)
    return out


def read_board_file(path: str) -> Board:
    """Read a board from a file; every failure is a :class:`FormatError` with one line."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return parse_board(data)
    except FormatError as exc:  # which file, where a command reads several (a classic match's three rounds)
        raise FormatError(f"{path}: {exc}") from None
