"""Settlement moves: the positions of docs/rules.md ("Territory") and properties on random positions."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from positions import SETTLEMENT_ROW, TWO_SEGMENTS, random_position

from fjords import Board, Hex, Piece, Rules, Tile
from fjords.geometry import canonical_segment
from fjords.plains import plains_index
from fjords.settlement import house_moves, place, position, settlement_over, settler_moves, solo_maximum


def cells(pieces: list[Piece]) -> list[tuple[int, int, int]]:
    return [(p.hex.q, p.hex.r, p.sector) for p in pieces]


# -- the positions of docs/rules.md ("Territory") ---------------------------

def test_a_settler_goes_next_to_its_owner_only():
    assert cells(settler_moves(SETTLEMENT_ROW, "red")) == [(1, 0, 0)]
    assert settler_moves(SETTLEMENT_ROW, "blue") == []


def test_settlers_chain_from_settlers():
    board = place(SETTLEMENT_ROW, Piece(Hex(1, 0), 0, "settler", "red"))
    assert cells(settler_moves(board, "red")) == [(2, 0, 0)]


def test_a_rune_stone_blocks_and_does_not_connect():
    board = place(SETTLEMENT_ROW, Piece(Hex(1, 0), 0, "runestone"))
    assert settler_moves(board, "red") == []


def test_each_segment_is_a_move_with_its_canonical_sector():
    assert cells(settler_moves(TWO_SEGMENTS, "red")) == [(0, 0, 0)]
    board = place(TWO_SEGMENTS, Piece(Hex(0, 0), 0, "settler", "red"))
    assert cells(settler_moves(board, "red")) == [(1, 0, 6)]


def test_an_opponents_piece_connects_nothing_for_me():
    board = place(SETTLEMENT_ROW, Piece(Hex(1, 0), 5, "settler", "blue"))
    assert settler_moves(board, "red") == []
    assert cells(settler_moves(board, "blue")) == [(2, 0, 0)]


def test_no_settler_when_the_supply_is_spent():
    rules = Rules(settlers_per_player=1)
    board = place(SETTLEMENT_ROW, Piece(Hex(1, 0), 0, "settler", "red"))
    assert settler_moves(board, "red", rules) == []
    assert settlement_over(board, ["red"], rules)
    assert not settlement_over(board, ["red"])


def test_house_moves():
    empty = Board.from_tiles([Tile(Hex(0, 0), "P" * 12), Tile(Hex(1, 0), "PPPPMMPPPPMM"), Tile(Hex(0, 1), "M" * 12),
                              Tile(Hex(1, -1), "P" * 12, start=True)])
    assert cells(house_moves(empty, Hex(1, 0), "red")) == [(1, 0, 0), (1, 0, 6)]
    assert house_moves(empty, Hex(0, 1), "red") == []    # the all-mountain tile
    assert house_moves(empty, Hex(1, -1), "red") == []   # a start tile
    assert house_moves(empty, Hex(5, 5), "red") == []    # no tile there
    taken = place(empty, Piece(Hex(0, 0), 0, "house", "blue"))
    assert house_moves(taken, Hex(0, 0), "red") == []    # one piece per tile
    assert house_moves(taken, Hex(1, 0), "blue", Rules(houses_per_player=1)) == []


def test_place_adds_a_piece():
    piece = Piece(Hex(1, 0), 0, "settler", "red")
    assert place(SETTLEMENT_ROW, piece).pieces == SETTLEMENT_ROW.pieces + (piece,)


def test_solo_maximum_counts_tiles_and_respects_the_supply():
    # One segment per tile matters in a chain: see test_territory.py.
    index = plains_index(SETTLEMENT_ROW)
    pos = position(SETTLEMENT_ROW)
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
@example(742, 1)  # an all-plain tile among the moves
def test_moves_turn_with_the_board(seed, k):
    """Moves name their segment by its canonical sector; an all-plain tile's is sector 0 whatever the turn."""
    board = random_position(seed, settlers=6)
    rotated = board.rotated(k)
    turned = set()
    for p in settler_moves(board, "red"):
        h = p.hex.rotated(k)
        turned.add((h, canonical_segment(rotated.tiles[h].terrain, (p.sector + 2 * k) % 12)))
    assert {(p.hex, p.sector) for p in settler_moves(rotated, "red")} == turned
