"""Scoring: the positions and matches of docs/rules.md, rune stones, and the classic match."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from positions import RULES_DOC, doc_board, doc_examples
from strategies import legal_boards

from fjords import Board, Hex, Piece, Tile
from fjords.scoring import (
    MatchResult,
    ScoreLine,
    infer_rune,
    match_result,
    rune_bonuses,
    score,
    score_breakdown,
    winners,
)

EXAMPLES = doc_examples("Legality") + doc_examples("Scoring")


def doc_matches() -> list[tuple[str, list[dict[str, int]], list[str]]]:
    """The ```` ```fjords-match NAME ```` blocks: rounds of points and the expected winners."""
    found = []
    for name, body in re.findall(r"^```fjords-match (\S+)\n(.*?)^```", RULES_DOC.read_text(), re.S | re.M):
        rounds = [dict((p, int(n)) for p, n in (w.split("=") for w in line.split()[1:]))
                  for line in body.splitlines() if line.startswith("round ")]
        expected = next(line.split(":")[1].split() for line in body.splitlines() if line.startswith("expect winners"))
        found.append((name, rounds, expected))
    return found


@pytest.mark.parametrize("position", EXAMPLES, ids=lambda e: e.name)
def test_doc_position_scores(position):
    assert score(position.board) == position.scores()
    assert position.board.score() == position.scores()


@pytest.mark.parametrize("name, rounds, expected", doc_matches(), ids=lambda v: v if isinstance(v, str) else "")
def test_doc_matches(name, rounds, expected):
    assert list(match_result(rounds).winners) == expected


def test_doc_shows_three_matches():
    assert [name for name, _, _ in doc_matches()] == ["most-points", "tie-two-rounds", "tie-shared"]


def test_breakdown_of_rune_bonuses():
    lines = score_breakdown(doc_board("runes-thor-odin"))
    assert lines == {"red": ScoreLine(settlers=2, rune_bonus=4), "yellow": ScoreLine(settlers=1, rune_bonus=1)}
    assert lines["red"].to_json() == {"settlers": 2, "rune_bonus": 4, "total": 6}


def test_runes_inferred_from_where_they_stand():
    board = doc_board("runes-thor-odin")
    thor, odin = [p for p in board.pieces if p.kind == "runestone"]
    assert (infer_rune(board, thor), infer_rune(board, odin)) == ("thor", "odin")
    other = doc_board("runes-gyfu-laguz")
    gyfu, laguz = [p for p in other.pieces if p.kind == "runestone"]
    assert (infer_rune(other, gyfu), infer_rune(other, laguz)) == ("gyfu", "laguz")
    assert infer_rune(board, replace(thor, rune="laguz")) == "laguz"  # a named rune wins


@pytest.mark.parametrize("terrain, rune", [("SSSSSS?SSSSS", "laguz"), ("MMMMM?MMMMMM", "thor"),
                                           ("PPSSSS?SSSSS", "gyfu"), ("????????????", "gyfu"),
                                           ("PPPPMMPPPPPP", "gyfu")])
def test_rune_on_an_unread_or_mountain_sector(terrain, rune):
    board = Board.from_tiles([Tile(Hex(0, 0), terrain)], edition="2022")
    sector = terrain.index("?") if "?" in terrain else 4
    assert infer_rune(board, Piece(Hex(0, 0), sector, "runestone")) == rune


def test_majority_tie_split_rounded_down_and_unknown_runes():
    tiles = [Tile(Hex(0, 0), "S" * 12)] + [Tile(Hex(0, 0).neighbour(d), "P" * 12) for d in range(6)]
    settlers = [Piece(Hex(0, 0).neighbour(d), 0, "settler", player)
                for d, player in enumerate(("red", "yellow", "blue"))]
    laguz = Piece(Hex(0, 0), 0, "runestone")
    board = Board.from_tiles(tiles, settlers + [laguz], edition="2022")
    assert rune_bonuses(board) == {}  # three-way tie for 2 points: nothing each
    board = board.with_pieces(settlers + [replace(laguz, rune="thor")])
    assert rune_bonuses(board) == {"red": 1, "yellow": 1, "blue": 1}
    board = board.with_pieces(settlers + [replace(laguz, rune="fehu")])
    assert rune_bonuses(board) == {}


def test_rune_stones_score_nothing_in_the_classic_edition():
    board = replace(doc_board("runes-thor-odin"), edition="classic")
    assert score(board) == {"red": 2, "yellow": 1}


def test_players_without_settlers_score_zero_and_stones_are_no_players():
    board = doc_board("house-on-forbidden-tile")
    assert score(board) == {"red": 0, "yellow": 0}
    assert score(Board()) == {}


def test_match_result_fields_and_json():
    result = match_result([{"red": 5, "yellow": 5}, {"red": 2, "yellow": 6}, {"red": 6, "yellow": 2}])
    assert isinstance(result, MatchResult)
    assert result.totals == {"red": 13, "yellow": 13}
    assert result.round_winners == (None, "yellow", "red")
    assert result.winners == ("red", "yellow")
    assert result.to_json()["reason"] == result.reason == "tied on points and rounds: shared win"


def test_match_counts_a_missing_player_as_zero():
    result = match_result([{"red": 3}, {"red": 1, "yellow": 2}, {"yellow": 1}])
    assert result.totals == {"red": 4, "yellow": 3} and result.winners == ("red",)
    with pytest.raises(ValueError):
        match_result([])


def test_single_game_ties_are_shared():
    assert winners({"red": 4, "yellow": 4, "blue": 1}) == ("red", "yellow")
    assert winners({}) == ()


@settings(max_examples=30, deadline=None)
@given(legal_boards(runestones=True), st.integers(0, 5), st.integers(-4, 4), st.integers(-4, 4))
def test_scores_unchanged_by_rotation_and_translation(board, k, dq, dr):
    assert score(board.rotated(k)) == score(board)
    assert score(board.translated(dq, dr)) == score(board)
    lines = score_breakdown(board)
    assert sum(line.settlers for line in lines.values()) == sum(p.kind == "settler" for p in board.pieces)
