"""The overlay and the advice show pieces too doubtful to count, and sectors the edge rule told."""

import numpy as np

from fjords.board import Board, Piece, Tile
from fjords.geometry import Hex
from scanner.overlay import TERRAIN_BGR, draw_overlay, freest_corner
from scanner.pipeline import (doubtful_advice, frame_advice, hand_advice, hidden_advice, inferred_advice,
                              joined_advice, untaught_advice)

DOUBTFUL = {"q": 0, "r": 0, "sector": 3, "kind": "settler", "player": "red", "confidence": 0.3,
            "base_px": [100.0, 80.0]}


def _board(doubtful: list, told: tuple[int, ...] = (), pieces: tuple[Piece, ...] = (),
           under_hand: tuple[int, ...] = ()) -> Board:
    corners = [[100 + 50 * np.cos(np.radians(30 + 60 * k)), 80 - 50 * np.sin(np.radians(30 + 60 * k))]
               for k in range(6)]
    told_extra = {"inferred_sectors": list(told)} if told else {}
    hand_extra = {"under_hand": list(under_hand)} if under_hand else {}
    tile = Tile(Hex(0, 0), "P" * 12, extra={"corners_px": corners, **told_extra, **hand_extra})
    extra = {"image": {"width": 200, "height": 160}}
    if doubtful:
        extra["doubtful_pieces"] = doubtful
    return Board.from_tiles([tile], list(pieces), extra=extra)


def test_doubtful_piece_is_drawn_as_a_question_mark():
    image = np.full((160, 200, 3), 128, np.uint8)
    plain, marked = draw_overlay(image, _board([])), draw_overlay(image, _board([DOUBTFUL]))
    changed = np.any(plain != marked, axis=2)
    ys, xs = np.nonzero(changed)
    assert changed.sum() > 20 and abs(xs.mean() - 100) < 4 and abs(ys.mean() - 80) < 4
    assert np.any(np.all(marked == TERRAIN_BGR["?"], axis=2) & changed)


def test_doubtful_pieces_are_named_in_the_advice():
    assert doubtful_advice(_board([])) == []
    (sentence,) = doubtful_advice(_board([DOUBTFUL, dict(DOUBTFUL, q=1, player=None, kind="runestone")]))
    assert sentence.startswith("2 possible piece(s) not counted")
    assert "red settler at (0,0)" in sentence and "runestone at (1,0)" in sentence


def test_pieces_named_by_an_untaught_paint_get_their_own_advice():
    named = [Piece(Hex(q, 0), 3, kind, "purple", extra={"untaught_paint": "purple or magenta",
                                                        "untaught_paint_hue": -38.6})
             for q, kind in ((0, "settler"), (1, "house"))]
    board = _board([DOUBTFUL], pieces=(*named, Piece(Hex(0, 0), 3, "settler", "red")))
    (sentence,) = untaught_advice(board)
    assert sentence.startswith("2 piece(s) look purple or magenta, a paint the scanner was never taught")
    assert "settler at (0,0), house at (1,0)" in sentence and "named purple" in sentence
    assert "fjords calibrate" in sentence
    assert doubtful_advice(board)[0].startswith("1 possible piece(s) not counted")
    assert untaught_advice(_board([DOUBTFUL])) == []


def _marked(**marks) -> tuple[np.ndarray, np.ndarray]:
    """The overlay of the one-tile board with ``marks`` (``_board``'s keywords), and the pixels it changes against
    the plain board's."""
    image = np.full((160, 200, 3), 128, np.uint8)
    marked = draw_overlay(image, _board([], **marks))
    return marked, np.any(draw_overlay(image, _board([])) != marked, axis=2)


def test_a_told_sector_is_drawn_in_lower_case_and_named_in_the_advice():
    _, changed = _marked(told=(0, 1))
    assert changed.sum() > 5 and np.nonzero(changed)[1].mean() > 100  # sectors 0 and 1 lie east of the centre
    assert inferred_advice(_board([])) == []
    (sentence,) = inferred_advice(_board([], told=(0, 1)))
    assert sentence.startswith("2 sector(s) hidden") and "(0,0)" in sentence


def test_a_piece_the_connection_rule_counted_is_outlined_as_unsure_and_named_in_the_advice():
    image = np.full((160, 200, 3), 128, np.uint8)
    seen = {"base_px": [100.0, 80.0], "confidence": 0.3}
    read = Piece(Hex(0, 0), 3, "settler", "red", extra=seen)
    joined = Piece(Hex(0, 0), 3, "settler", "red", extra={**seen, "joined_by_rule": True})
    plain, marked = draw_overlay(image, _board([], pieces=(read,))), draw_overlay(image, _board([], pieces=(joined,)))
    assert np.any(np.all(marked == TERRAIN_BGR["?"], axis=2) & np.any(plain != marked, axis=2))
    assert joined_advice(_board([], pieces=(read,))) == []
    (sentence,) = joined_advice(_board([], pieces=(joined,)))
    assert sentence.startswith("1 piece(s) the scan is unsure of were counted") and "red settler at (0,0)" in sentence


def test_the_legend_stands_in_the_corner_that_hides_the_least_of_the_board():
    def hexagon(x, y, r=40.0):
        return np.array([[x + r * np.cos(np.radians(30 + 60 * k)), y + r * np.sin(np.radians(30 + 60 * k))]
                         for k in range(6)], np.float32)

    shape, size = (600, 800), (300, 100)
    assert freest_corner(shape, size, []) == (0, 0)
    top = [hexagon(100, 50), hexagon(700, 60)]  # the board touches both top corners
    assert freest_corner(shape, size, top) == (0, 500)
    assert freest_corner(shape, size, top + [hexagon(100, 560)]) == (500, 500)
    # A legend wider than the photo starts at its left edge.
    assert freest_corner(shape, (1000, 100), top) == (0, 500)


def test_the_overlay_legend_leaves_the_board_visible_where_a_corner_is_free():
    image = np.full((600, 800, 3), 128, np.uint8)
    corners = [[120 + 60 * np.cos(np.radians(30 + 60 * k)), 80 + 60 * np.sin(np.radians(30 + 60 * k))]
               for k in range(6)]
    board = Board.from_tiles([Tile(Hex(0, 0), "P" * 12, extra={"corners_px": corners})], [],
                             extra={"image": {"width": 800, "height": 600}})
    drawn = draw_overlay(image, board)
    legend = np.all(drawn == 0, axis=2)
    assert legend[5, 795] and not legend[:, :100].any()  # top right; the tile (top left) is not covered


def test_a_place_where_a_hand_may_hide_a_tile_is_outlined_and_named_in_the_advice():
    image = np.full((160, 200, 3), 128, np.uint8)
    board = _board([])
    corners = [[x + 60, y + 20] for x, y in board.tiles[Hex(0, 0)].extra["corners_px"]]  # beside the tile
    hidden = Board.from_tiles(list(board.tiles.values()), [],
                              extra={**board.extra, "possibly_hidden_tiles": [{"q": 1, "r": 0, "corners_px": corners}]})
    changed = np.any(draw_overlay(image, board) != draw_overlay(image, hidden), axis=2)
    ys, xs = np.nonzero(changed)
    assert changed.sum() > 20 and xs.mean() > 130  # round the place, east of the tile
    assert hidden_advice(board) == []
    (sentence,) = hidden_advice(hidden)
    assert sentence.startswith("1 place(s) beside the tiles") and "(1,0)" in sentence and "hide a tile" in sentence


def test_tiles_running_past_the_edge_of_the_photo_are_named_in_the_advice():
    board = _board([])  # a tile of radius 50 at (100, 80) in a 200 x 160 photo: wholly inside
    assert frame_advice(board) == []
    cut = Board.from_tiles(list(board.tiles.values()), [], extra={"image": {"width": 140, "height": 160}})
    (sentence,) = frame_advice(cut)
    assert sentence.startswith("1 tile(s) run past the edge of the photo ((0,0))") and "whole board" in sentence
    assert frame_advice(Board.from_tiles(list(board.tiles.values()), [])) == []  # no photo size: nothing to tell


def test_sectors_under_a_hand_are_boxed_in_the_unread_colour_and_their_tiles_named_in_the_advice():
    covered, changed = _marked(under_hand=(0, 1))
    assert changed.sum() > 20 and np.nonzero(changed)[1].mean() > 100  # sectors 0 and 1 lie east of the centre
    assert np.any(np.all(covered == TERRAIN_BGR["?"], axis=2) & changed)
    assert hand_advice(_board([])) == []
    (sentence,) = hand_advice(_board([], under_hand=(0, 1)))
    assert sentence.startswith("1 tile(s) lie partly under a hand or an arm ((0,0))")
