"""Settlement moves: the positions of docs/rules-settlement.md and properties on random positions.

``random_position`` and ``board_of`` are shared with test_territory.py and test_solver.py.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from fjords import Board, Hex, Piece, Rules, Tile
from fjords.geometry import facing_sector
from fjords.settlement import (
    house_moves,
    place,
    plains_index,
    position,
    settlement_over,
    settler_moves,
    solo_maximum,
)


def board_of(tiles: dict[tuple[int, int], str], pieces: list[tuple[int, int, int, str, str | None]] = (),
             starts: tuple[tuple[int, int], ...] = ()) -> Board:
    """A board from ``{(q, r): terrain}`` and ``(q, r, sector, kind, player)`` pieces."""
    return Board.from_tiles(
        [Tile(Hex(*qr), terrain, start=qr in starts) for qr, terrain in tiles.items()],
        [Piece(Hex(q, r), sector, kind, player) for q, r, sector, kind, player in pieces])


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


def cells(pieces: list[Piece]) -> list[tuple[int, int, int]]:
    return [(p.hex.q, p.hex.r, p.sector) for p in pieces]


# -- the positions of docs/rules-settlement.md --------------------------------

# Position 1: a settler goes next to its owner's pieces, through plains only.
#   (0,0) PPPPPPPPPPPP house red    (1,0) PPPPPPPPPPPP    (2,0) PPPPPPPPPPPP
#   (0,1) SSSSSSSSSSSS (sea: not a move)
ROW = board_of({(0, 0): "P" * 12, (1, 0): "P" * 12, (2, 0): "P" * 12, (0, 1): "S" * 12},
               [(0, 0, 3, "house", "red")])


def test_a_settler_goes_next_to_its_owner_only():
    assert cells(settler_moves(ROW, "red")) == [(1, 0, 0)]
    assert settler_moves(ROW, "blue") == []


def test_settlers_chain_from_settlers():
    board = place(ROW, Piece(Hex(1, 0), 0, "settler", "red"))
    assert cells(settler_moves(board, "red")) == [(2, 0, 0)]


# Position 2: a rune stone fills its tile and joins nothing.
#   (0,0) house red   (1,0) rune stone   (2,0) empty plain
def test_a_rune_stone_blocks_and_does_not_connect():
    board = place(ROW, Piece(Hex(1, 0), 0, "runestone"))
    assert settler_moves(board, "red") == []


# Position 3: a tile with two segments; a move names the segment by its canonical sector.
#          (1,-1) PPPPPPPPPPPP house red
#   (0,0) PPPPPPPPPPPP    (1,0) PPPPMMPPPPMM  (segments 0 = sectors 0-3, 6 = sectors 6-9)
# The house faces (1,0)'s mountain edge (sectors 4, 5), so only (0,0) is a move; from a
# settler on (0,0), (1,0)'s west segment 6 is.
TWO_SEGMENTS = board_of({(0, 0): "P" * 12, (1, 0): "PPPPMMPPPPMM", (1, -1): "P" * 12},
                        [(1, -1, 0, "house", "red")])


def test_each_segment_is_a_move_with_its_canonical_sector():
    assert cells(settler_moves(TWO_SEGMENTS, "red")) == [(0, 0, 0)]
    board = place(TWO_SEGMENTS, Piece(Hex(0, 0), 0, "settler", "red"))
    assert cells(settler_moves(board, "red")) == [(1, 0, 6)]


def test_an_opponents_piece_connects_nothing_for_me():
    board = place(ROW, Piece(Hex(1, 0), 5, "settler", "blue"))
    assert settler_moves(board, "red") == []
    assert cells(settler_moves(board, "blue")) == [(2, 0, 0)]


def test_no_settler_when_the_supply_is_spent():
    rules = Rules(settlers_per_player=1)
    board = place(ROW, Piece(Hex(1, 0), 0, "settler", "red"))
    assert settler_moves(board, "red", rules) == []
    assert settlement_over(board, ["red"], rules)
    assert not settlement_over(board, ["red"])


def test_house_moves():
    empty = board_of({(0, 0): "P" * 12, (1, 0): "PPPPMMPPPPMM", (0, 1): "M" * 12, (1, -1): "P" * 12},
                     starts=((1, -1),))
    assert cells(house_moves(empty, Hex(1, 0), "red")) == [(1, 0, 0), (1, 0, 6)]
    assert house_moves(empty, Hex(0, 1), "red") == []    # the all-mountain tile
    assert house_moves(empty, Hex(1, -1), "red") == []   # a start tile
    assert house_moves(empty, Hex(5, 5), "red") == []    # no tile there
    taken = place(empty, Piece(Hex(0, 0), 0, "house", "blue"))
    assert house_moves(taken, Hex(0, 0), "red") == []    # one piece per tile
    assert house_moves(taken, Hex(1, 0), "blue", Rules(houses_per_player=1)) == []


def test_place_adds_a_piece():
    piece = Piece(Hex(1, 0), 0, "settler", "red")
    assert place(ROW, piece).pieces == ROW.pieces + (piece,)


def test_solo_maximum_counts_tiles_and_respects_the_supply():
    # One segment per tile matters in a chain: see test_territory.py.
    index = plains_index(ROW)
    pos = position(ROW)
    assert solo_maximum(index, pos.frontier["red"], pos.free) == 2
    assert solo_maximum(index, pos.frontier["red"], pos.free, limit=1) == 1


# -- properties on random positions ------------------------------------------

def moves_by_definition(board: Board, player: str) -> set[tuple[int, int, int]]:
    """The brief's definition, read straight off the segment graph."""
    occupied = {p.hex for p in board.pieces}
    own = {board.segment_id(p.hex, p.sector) for p in board.pieces if p.player == player}
    return {(h.q, h.r, s) for (h, s), adjacent in board.segment_graph.items()
            if h not in occupied and adjacent & own}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 12), st.integers(0, 2))
def test_moves_match_the_definition(seed, settlers, stones):
    board = random_position(seed, settlers=settlers, runestones=stones)
    for player in ("red", "blue"):
        moves = settler_moves(board, player)
        assert cells(moves) == sorted(cells(moves))
        assert set(cells(moves)) == moves_by_definition(board, player)
        assert all(m.kind == "settler" and m.player == player for m in moves)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 5))
def test_moves_turn_with_the_board(seed, k):
    board = random_position(seed, settlers=6)
    turned = {(p.hex.rotated(k), (p.sector + 2 * k) % 12) for p in settler_moves(board, "red")}
    assert {(p.hex, p.sector) for p in settler_moves(board.rotated(k), "red")} == turned
