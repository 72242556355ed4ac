"""Positions the engine's tests share: the drawn positions of ``docs/rules.md`` and seeded random
settlement positions.

A drawn position is a ```` ```fjords NAME ```` block of the doc: its drawing, then its data (see
"How to read the positions" there). :func:`draw` rebuilds the drawing from the data, so a test can
check that the doc and its data agree.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from fjords import Board, Hex, Piece, Tile
from fjords.geometry import facing_sector
from fjords.settlement import house_moves, place, settler_moves

RULES_DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"

# -- the drawn positions of docs/rules.md ----------------------------------------------------------


def draw(board: Board) -> list[str]:
    """The board as text: each tile two lines, ``/ q,r \\`` over ``\\ terrain /``, rows shifted half a
    tile so that neighbours touch as on the table (pointy tops, ``r`` grows downwards)."""
    if not board.tiles:
        return []
    left = min(2 * h.q + h.r for h in board.tiles)
    top = min(h.r for h in board.tiles)
    rows: dict[int, dict[int, Tile]] = {}
    for h, t in board.tiles.items():
        rows.setdefault(h.r - top, {})[(2 * h.q + h.r - left) * 8] = t
    lines = []
    for r in range(max(rows) + 1):
        upper, lower = "", ""
        for x, t in sorted(rows.get(r, {}).items()):
            label = f" {t.hex.q},{t.hex.r}" + (" start" if t.start else "")
            upper = upper.ljust(x) + "/" + label.ljust(14) + "\\"
            lower = lower.ljust(x) + "\\ " + t.terrain + " /"
        lines += [upper.rstrip(), lower.rstrip()]
    return lines


@dataclass
class Example:
    """A position of ``docs/rules.md``: its name, drawing, board and expected answers."""

    name: str
    drawing: list[str]
    board: Board
    expect: dict[str, str] = field(default_factory=dict)

    def codes(self, key: str) -> list[str]:
        text = self.expect.get(key, "none").strip()
        return [] if text == "none" else sorted(text.split())

    def scores(self) -> dict[str, int]:
        text = self.expect.get("score", "").strip()
        return {p: int(n) for p, n in (item.split("=") for item in text.split())} if text else {}


def doc_examples(section: str, path: Path = RULES_DOC) -> list[Example]:
    """The ```` ```fjords NAME ```` blocks under the ``## section`` heading of ``docs/rules.md``."""
    text = path.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(section)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if match is None:
        raise LookupError(f"no section {section!r} in {path}")
    return [_parse_example(name, body) for name, body in _blocks(match.group(1))]


def _blocks(text: str) -> list[tuple[str, str]]:
    """``(name, body)`` of every ```` ```fjords NAME ```` block of ``text``."""
    return re.findall(r"^```fjords (\S+)\n(.*?)^```", text, re.S | re.M)


def _parse_example(name: str, body: str) -> Example:
    drawing_text, _, data = body.partition("\n\n")
    tiles, pieces, expect, edition = [], [], {}, "classic"
    for line in data.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "tile":
            q, r, terrain = int(words[1]), int(words[2]), words[3]
            tiles.append(Tile(Hex(q, r), terrain, start="start" in words[4:]))
        elif words[0] in ("house", "settler"):  # house PLAYER q r sector
            pieces.append(Piece(Hex(int(words[2]), int(words[3])), int(words[4]), words[0], words[1]))
        elif words[0] == "runestone":  # runestone q r sector|none [rune]
            sector = None if words[3] == "none" else int(words[3])
            pieces.append(Piece(Hex(int(words[1]), int(words[2])), sector, "runestone",
                                rune=words[4] if len(words) > 4 else None))
        elif words[0] == "edition":
            edition = words[1]
        elif words[0] == "expect":
            key, _, value = line.partition(":")
            expect[key.split(None, 1)[1].strip()] = value
        else:
            raise ValueError(f"example {name}: cannot read line {line!r}")
    board = Board.from_tiles(tiles, pieces, edition=edition)
    return Example(name, drawing_text.rstrip("\n").splitlines(), board, expect)


def doc_board(name: str, path: Path = RULES_DOC) -> Board:
    """The board of the doc's position ``name``, whatever section it is in."""
    for found, body in _blocks(path.read_text(encoding="utf-8")):
        if found == name:
            return _parse_example(found, body).board
    raise LookupError(f"no position {name!r} in {path}")


# The settlement positions of the doc ("Territory"), and one with a piece the tests add.
SETTLEMENT_ROW = doc_board("settlement-row")  # red's house on (0,0); the sea tile (0,1)
TWO_SEGMENTS = doc_board("settlement-two-segments")  # red's house on (1,-1)
AROUND = doc_board("territory-around")  # red's house on (1,0)
AROUND_CONTESTED = AROUND.with_pieces(AROUND.pieces + (Piece(Hex(-1, 1), 2, "house", "blue"),))


# -- random settlement positions -------------------------------------------------------------------


def random_position(seed: int, radius: int = 2, plain: float = 0.65, houses: int = 2, settlers: int = 0,
                    players: tuple[str, ...] = ("red", "blue"), runestones: int = 0) -> Board:
    """A seeded random settlement position: matching edges, houses, then random settlers."""
    rng = random.Random(seed)
    hexes = [Hex(q, r) for q in range(-radius, radius + 1) for r in range(-radius, radius + 1)
             if abs(q + r) <= radius and rng.random() < 0.9]
    letters: dict[tuple[Hex, int], str] = {}
    for h in hexes:
        for i in range(12):
            if (h, i) not in letters:
                letters[(h, i)] = letters[(h.neighbour(i // 2), facing_sector(i))] = (
                    "P" if rng.random() < plain else rng.choice("SM"))
    board = Board.from_tiles([Tile(h, "".join(letters[(h, i)] for i in range(12))) for h in hexes])
    for _ in range(runestones):
        h = rng.choice(hexes)
        if not board.pieces_at(h):
            board = place(board, Piece(h, 0, "runestone"))
    for _ in range(houses):
        for p in players:
            options = [m for h in hexes for m in house_moves(board, h, p)]
            if options:
                board = place(board, rng.choice(options))
    for n in range(settlers):
        moves = settler_moves(board, players[n % len(players)])
        if moves:
            board = place(board, rng.choice(moves))
    return board
