"""The tile catalogue and the game simulator: legal, deterministic, complete games."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fjords.board import Board
from fjords.catalogue import ALL_MOUNTAIN, START_POSITIONS, catalogue, start_layout, start_tiles
from fjords.geometry import rotate_terrain, segment_of
from fjords.rules import Rules
from fjords.simulate import COLOURS, simulate_game, simulate_match, simulate_states
from fjords_cli.main import main

EDITIONS = ("classic", "2022")


def shape(terrain: str) -> str:
    """A tile's terrain up to rotation (the smallest of its six turns)."""
    return min(rotate_terrain(terrain, k) for k in range(6))


games = st.one_of(
    st.tuples(st.just("classic"), st.just(2), st.just(False)),
    st.tuples(st.just("2022"), st.integers(2, 4), st.booleans()),
)


# -- catalogue -------------------------------------------------------------------


@pytest.mark.parametrize("edition", EDITIONS)
def test_catalogue_has_forty_tiles_of_twelve_sectors(edition):
    tiles = catalogue(edition)
    assert len(tiles) == 40
    assert all(len(t) == 12 and set(t) <= set("SMP") for t in tiles)
    assert tiles[:3] == start_tiles(edition)
    assert tiles.count(ALL_MOUNTAIN) == 1
    assert "S" * 12 in tiles and "P" * 12 in tiles


@pytest.mark.parametrize("edition", EDITIONS)
def test_catalogue_has_boundaries_in_the_middle_of_edges(edition):
    # Sectors 2d and 2d+1 are the halves of edge d; rotations keep that pairing.
    mid_edge = [t for t in catalogue(edition) if any(t[2 * d] != t[2 * d + 1] for d in range(6))]
    assert len(mid_edge) >= 10


@pytest.mark.parametrize("edition", EDITIONS)
def test_start_tiles_make_a_legal_triangle(edition):
    tiles = start_layout(edition)
    assert [t.hex for t in tiles] == list(START_POSITIONS)
    assert all(t.start for t in tiles)
    for a in START_POSITIONS:
        assert sum(b in START_POSITIONS for b in a.neighbours()) == 2
    assert Board.from_tiles(tiles, edition=edition).legal_violations() == []


# -- whole games -------------------------------------------------------------------


def check_game(boards: list[Board], edition: str, players: int) -> None:
    rules = Rules.for_edition(edition)
    start = boards[0]
    assert set(start.tiles) == set(START_POSITIONS) and not start.pieces
    assert [b.phase for b in boards[-1:]] == ["finished"] and boards[-1].to_move is None
    phases = [b.phase for b in boards]
    assert phases == sorted(phases, key=("exploration", "settlement", "finished").index)
    colours = tuple(start.extra["players"])
    assert len(colours) == players and set(colours) <= set(COLOURS[edition])
    for before, after in zip(boards, boards[1:]):
        assert after.legal_violations() == [], after.legal_violations()
        assert before.to_move in colours
        new_tiles = set(after.tiles) - set(before.tiles)
        new_pieces = set(after.pieces) - set(before.pieces)
        assert set(before.tiles) <= set(after.tiles) and set(before.pieces) <= set(after.pieces)
        if before.phase == "exploration":
            # One tile laid by the player to move, perhaps with that player's house on it.
            assert len(new_tiles) <= 1
            houses = [p for p in new_pieces if p.kind == "house"]
            assert all(p.hex in new_tiles and p.player == before.to_move for p in houses)
        else:
            assert not new_tiles
            assert [(p.kind, p.player) for p in new_pieces] == [("settler", before.to_move)]
    final = boards[-1]
    assert sum(t.start for t in final.tiles.values()) == 3
    laid = Counter(shape(t.terrain) for t in final.tiles.values())
    set_aside = Counter(shape(t) for t in final.extra["set_aside"])
    assert laid + set_aside == Counter(shape(t) for t in catalogue(edition))
    for colour in colours:
        kinds = Counter(p.kind for p in final.pieces if p.player == colour)
        assert kinds["house"] <= rules.houses_per_player
        assert kinds["settler"] <= rules.settlers_per_player


@settings(max_examples=20, deadline=None)
@given(game=games, seed=st.integers(0, 2**32 - 1))
def test_every_state_of_a_simulated_game_is_legal(game, seed):
    edition, players, runestones = game
    boards = list(simulate_states(edition, players, seed, runestones=runestones))
    check_game(boards, edition, players)


@pytest.mark.parametrize("policy", ["greedy", "solver"])
def test_other_policies_play_legal_deterministic_games(policy):
    boards = list(simulate_states("2022", 3, 7, policy=policy))
    check_game(boards, "2022", 3)
    assert [b.to_json() for b in simulate_states("2022", 3, 7, policy=policy)] == [b.to_json() for b in boards]


@settings(max_examples=10, deadline=None)
@given(game=games, seed=st.integers(0, 2**32 - 1))
def test_games_are_deterministic_per_seed(game, seed):
    edition, players, runestones = game
    first = [b.to_json() for b in simulate_states(edition, players, seed, runestones=runestones)]
    again = [b.to_json() for b in simulate_states(edition, players, seed, runestones=runestones)]
    assert first == again


def test_seeds_give_different_games():
    finals = {simulate_game(seed=s).dumps() for s in range(5)}
    assert len(finals) == 5


def test_most_tiles_get_laid():
    laid = [len(simulate_game(edition, 2, seed).tiles) for edition in EDITIONS for seed in range(20)]
    assert sum(laid) / len(laid) >= 35


def test_games_end_with_houses_and_settlers_for_everybody():
    final = simulate_game("2022", 4, 3, policy="greedy")
    for colour in final.players:
        kinds = Counter(p.kind for p in final.pieces if p.player == colour)
        assert kinds["house"] >= 1 and kinds["settler"] >= 1


# -- options -----------------------------------------------------------------------


def test_stop_fraction_picks_a_state_part_way():
    boards = list(simulate_states("classic", 2, 11))
    assert simulate_game("classic", 2, 11, stop_fraction=0.0) == boards[0]
    assert simulate_game("classic", 2, 11, stop_fraction=1.0) == boards[-1]
    middle = simulate_game("classic", 2, 11, stop_fraction=0.5)
    assert middle == boards[round(0.5 * (len(boards) - 1))]
    assert simulate_game("classic", 2, 11) == boards[-1]
    assert simulate_game("classic", 2, 11, stop_fraction=0.2).phase == "exploration"
    assert simulate_game("classic", 2, 11, stop_fraction=0.95).phase == "settlement"


def test_player_colours_are_used_in_turn_order():
    boards = list(simulate_states("2022", 3, 2, player_colours=["Green", "white", "red"]))
    assert boards[0].players == ("green", "white", "red")
    assert [b.to_move for b in boards[:4]] == ["green", "white", "red", "green"]


@pytest.mark.parametrize("kwargs, message", [
    ({"edition": "classic", "players": 3}, "2 players"),
    ({"edition": "2022", "players": 5}, "2, 3, 4 players"),
    ({"edition": "2023"}, "unknown edition"),
    ({"policy": "clever"}, "unknown policy"),
    ({"runestones": True}, "2022 edition"),
    ({"player_colours": ["red", "red"]}, "different colours"),
    ({"stop_fraction": 1.5}, "between 0 and 1"),
])
def test_bad_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_game(**kwargs)


def test_rune_stones_stand_where_they_belong():
    for seed in range(10):
        final = simulate_game("2022", 2, seed, runestones=True)
        stones = {p.rune: p for p in final.pieces if p.kind == "runestone"}
        assert {"laguz", "gyfu", "odin"} <= set(stones)
        assert all(p.player is None for p in stones.values())
        odin = stones["odin"]
        assert odin.sector is None and odin.hex not in final.tiles
        assert any(n in final.tiles for n in odin.hex.neighbours())
        assert final.tiles[stones["laguz"].hex].terrain[stones["laguz"].sector] == "S"
        gyfu = stones["gyfu"]
        assert segment_of(final.tiles[gyfu.hex].terrain, gyfu.sector) is not None
        if "thor" in stones:
            assert final.tiles[stones["thor"].hex].terrain == ALL_MOUNTAIN
        elif any(t.terrain == ALL_MOUNTAIN for t in final.tiles.values()):
            pytest.fail("the all-mountain tile was laid but Thor is missing")


def test_simulate_match_plays_three_classic_rounds():
    boards, result = simulate_match(4)
    assert len(boards) == 3 and all(b.phase == "finished" and b.edition == "classic" for b in boards)
    assert len({b.players for b in boards}) == 1
    assert [b.to_move for b in boards] == [None] * 3
    assert set(result.winners) <= set(boards[0].players) and result.winners


# -- command line ---------------------------------------------------------------------


def test_cli_prints_the_board_document(capsys):
    assert main(["simulate", "--edition", "2022", "--players", "3", "--seed", "5", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert Board.from_json(document) == simulate_game("2022", 3, 5)


def test_cli_prints_a_table(capsys):
    assert main(["simulate", "--seed", "1", "--stop-fraction", "0.3"]) == 0
    out = capsys.readouterr().out
    assert "classic edition, exploration" in out and "(0, 0)" in out and "PPPPMMMMSSPP" in out


def test_cli_refuses_impossible_games_in_one_line(capsys):
    assert main(["simulate", "--players", "3"]) == 2
    assert capsys.readouterr().err.strip() == "fjords: error: the classic edition is played by 2 players, not 3"


def test_cli_table_lists_a_rune_stone_off_the_layout(capsys):
    assert main(["simulate", "--edition", "2022", "--runestones", "--seed", "2"]) == 0
    odin = [line for line in capsys.readouterr().out.splitlines() if "runestone odin" in line]
    assert len(odin) == 1 and "no tile" in odin[0]
