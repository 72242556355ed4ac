"""The rules about pieces: ``piece-terrain``, ``two-pieces-on-tile``, ``settler-disconnected``,
``piece-count`` and ``house-on-forbidden-tile``.

Each check returns ``(broken, undecided)`` lists of :class:`~fjords.violation.Violation`.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from fjords.board import Board, Piece
from fjords.geometry import FACING, SECTORS, Hex, cyclic_runs
from fjords.rules import Rules
from fjords.violation import TERRAIN_NAMES, Violation, piece_name, piece_sort_key, tile_name

__all__ = ["piece_verdicts"]

Verdicts = tuple[list[Violation], list[Violation]]  # (broken, undecided)


def piece_verdicts(board: Board, rules: Rules) -> Verdicts:
    """Every piece rule ``board`` breaks under ``rules``, and those its unread sectors leave undecided."""
    broken: list[Violation] = []
    unsure: list[Violation] = []
    for check in (_terrain_verdicts, _crowding_verdicts, _connection_verdicts, _count_verdicts,
                  _house_tile_verdicts):
        more_broken, more_unsure = check(board, rules)
        broken += more_broken
        unsure += more_unsure
    return broken, unsure


def _letter(board: Board, piece: Piece) -> str | None:
    """The sector letter a piece stands on, or None when it stands on no sector of a tile."""
    tile = board.tiles.get(piece.hex)
    if tile is None or piece.sector is None:
        return None
    return tile.terrain[piece.sector]


def _terrain_verdicts(board: Board, rules: Rules) -> Verdicts:
    broken, unsure = [], []
    for piece in board.pieces:
        if not piece.is_player_piece:
            continue
        letter = _letter(board, piece)
        if letter == "?":
            unsure.append(Violation("piece-terrain", f"Cannot tell whether {piece_name(piece)} stands on a plain "
                                    "because its sector is unread.", (piece.hex,), (piece,)))
        elif letter != "P":
            where = "on no sector of a tile" if letter is None else f"on {TERRAIN_NAMES[letter]}"
            broken.append(Violation("piece-terrain", f"{piece_name(piece).capitalize()} stands {where}, "
                                    "not on a plain.", (piece.hex,), (piece,)))
    return broken, unsure


def _crowding_verdicts(board: Board, rules: Rules) -> Verdicts:
    crowded = []
    for h in dict.fromkeys(p.hex for p in board.pieces):
        here = board.pieces_at(h)
        if len(here) > 1:
            here = tuple(sorted(here, key=piece_sort_key))
            kinds = ", ".join(p.kind for p in here)
            crowded.append(Violation("two-pieces-on-tile", f"Tile {tile_name(h)} holds {len(here)} pieces "
                                     f"({kinds}); a tile holds one.", (h,), here))
    return crowded, []


def _connection_verdicts(board: Board, rules: Rules) -> Verdicts:
    """A settler is joined when it can be reached from a house through its owner's pieces only.

    Broken: standing on a read plain and not joined even if every ``?`` were a plain (plains only
    ever add joins). Undecided: otherwise not joined when every ``?`` is read as not plain; a settler
    on an unread sector is never broken here, as read as mountain or sea the rule would not apply.
    """
    settlers = [p for p in board.pieces if p.kind == "settler" and _letter(board, p) in ("P", "?")]
    if not settlers:
        return [], []
    joined = _joined_pieces(board, "P?")
    surely = joined if all(t.known for t in board.tiles.values()) else _joined_pieces(board, "P")
    broken, unsure = [], []
    for settler in settlers:
        if id(settler) not in joined and _letter(board, settler) == "P":
            broken.append(Violation("settler-disconnected", f"{piece_name(settler).capitalize()} is not joined to "
                                    f"a {settler.player} house through {settler.player} pieces on adjacent plains.",
                                    (settler.hex,), (settler,)))
        elif id(settler) not in surely:
            unsure.append(Violation("settler-disconnected", f"Cannot tell whether {piece_name(settler)} is joined "
                                    "to a house of its colour because sectors are unread.", (settler.hex,), (settler,)))
    return broken, unsure


def _joined_pieces(board: Board, plains: str) -> set[int]:
    """``id`` of every player piece joined to a house of its owner, ``plains`` being the letters read as plain.

    Only the pieces' own segments are visited: a chain of own pieces never crosses an empty segment.
    """
    tiles = board.tiles
    on_node: dict[tuple[str | None, Hex, int], list[Piece]] = {}
    for piece in board.pieces:
        tile = tiles.get(piece.hex)
        if piece.is_player_piece and tile is not None and piece.sector is not None:
            name = _run_names(tile.terrain, plains)[piece.sector]
            if name >= 0:
                on_node.setdefault((piece.player, piece.hex, name), []).append(piece)
    frontier = [key for key, pieces in on_node.items() if any(p.kind == "house" for p in pieces)]
    seen = set(frontier)
    joined: set[int] = set()
    while frontier:
        player, h, name = key = frontier.pop()
        joined.update(id(p) for p in on_node[key])
        for d, facing in _run_contacts(tiles[h].terrain, plains)[name]:
            tile = tiles.get(h.neighbour(d))
            if tile is None:
                continue
            names = _run_names(tile.terrain, plains)
            for f in facing:
                across = (player, tile.hex, names[f])
                if across in on_node and across not in seen:
                    seen.add(across)
                    frontier.append(across)
    return joined


@lru_cache(maxsize=4096)
def _run_names(terrain: str, letters: str) -> tuple[int, ...]:
    """Per sector, the name (first sector) of its run of ``letters``; -1 for a sector outside them."""
    names = [-1] * SECTORS
    for run in cyclic_runs(terrain, letters):
        for i in run:
            names[i] = run[0]
    return tuple(names)


@lru_cache(maxsize=4096)
def _run_contacts(terrain: str, letters: str) -> dict[int, tuple[tuple[int, tuple[int, ...]], ...]]:
    """Per run of ``letters`` (by name), its edges ``d`` and the neighbour's sectors lying against it there."""
    contacts: dict[int, dict[int, list[int]]] = {}
    for i, name in enumerate(_run_names(terrain, letters)):
        if name >= 0:
            contacts.setdefault(name, {}).setdefault(i >> 1, []).append(FACING[i])
    return {name: tuple((d, tuple(facing)) for d, facing in edges.items()) for name, edges in contacts.items()}


def _count_verdicts(board: Board, rules: Rules) -> Verdicts:
    limits = {"house": rules.houses_per_player, "settler": rules.settlers_per_player}
    counts = Counter((p.player, p.kind) for p in board.pieces if p.is_player_piece)
    broken = []
    for (player, kind), count in counts.items():
        if count > limits[kind]:
            pieces = tuple(sorted((p for p in board.pieces if p.player == player and p.kind == kind),
                                  key=piece_sort_key))
            broken.append(Violation("piece-count", f"{str(player).capitalize()} has {count} {kind}s on the board; the "
                                    f"{rules.edition} rules give {limits[kind]}.",
                                    tuple(sorted({p.hex for p in pieces})), pieces))
    return broken, []


def _house_tile_verdicts(board: Board, rules: Rules) -> Verdicts:
    broken, unsure = [], []
    for house in (p for p in board.pieces if p.kind == "house"):
        tile = board.tiles.get(house.hex)
        if tile is None:
            continue
        letters = set(tile.terrain)
        if tile.start:
            broken.append(Violation("house-on-forbidden-tile", f"{piece_name(house).capitalize()} stands on a start "
                                    "tile, where no house may be built.", (house.hex,), (house,)))
        elif letters == {"M"}:
            broken.append(Violation("house-on-forbidden-tile", f"{piece_name(house).capitalize()} stands on the "
                                    "all-mountain tile, where no house may be built.", (house.hex,), (house,)))
        elif letters == {"M", "?"}:
            unsure.append(Violation("house-on-forbidden-tile", f"Cannot tell whether {piece_name(house)} stands on "
                                    "an all-mountain tile because sectors are unread.", (house.hex,), (house,)))
    return broken, unsure
