"""The overlay and the advice show pieces too doubtful to count, and sectors the edge rule told."""

import numpy as np

from fjords.board import Board, Piece, Tile
from fjords.geometry import Hex
from scanner.overlay import TERRAIN_BGR, draw_overlay
from scanner.pipeline import doubtful_advice, inferred_advice, joined_advice

DOUBTFUL = {"q": 0, "r": 0, "sector": 3, "kind": "settler", "player": "red", "confidence": 0.3,
            "base_px": [100.0, 80.0]}


def _board(doubtful: list, told: tuple[int, ...] = (), pieces: tuple[Piece, ...] = ()) -> Board:
    corners = [[100 + 50 * np.cos(np.radians(30 + 60 * k)), 80 - 50 * np.sin(np.radians(30 + 60 * k))]
               for k in range(6)]
    told_extra = {"inferred_sectors": list(told)} if told else {}
    tile = Tile(Hex(0, 0), "P" * 12, extra={"corners_px": corners, **told_extra})
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


def test_a_told_sector_is_drawn_in_lower_case_and_named_in_the_advice():
    image = np.full((160, 200, 3), 128, np.uint8)
    plain, told = draw_overlay(image, _board([])), draw_overlay(image, _board([], told=(0, 1)))
    changed = np.any(plain != told, axis=2)
    ys, xs = np.nonzero(changed)
    assert changed.sum() > 5 and xs.mean() > 100  # sectors 0 and 1 lie east of the centre
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
