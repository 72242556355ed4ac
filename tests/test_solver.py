"""The settlement solver against brute-force minimax, and its promises about time and bounds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from positions import AROUND, AROUND_CONTESTED, random_position

from fjords import Board, Hex, Piece
from fjords.settlement import place, settler_moves
from fjords.solver import solve
from fjords.territory import territory


def brute_force(board: Board, players: tuple[str, ...], turn: int = 0, passes: int = 0) -> dict[str, int]:
    """Settlers each player still places when ``players[0]`` maximises its lead over the
    other (two players) or its own count against a coalition (more players)."""
    if passes == len(players):
        return dict.fromkeys(players, 0)
    player = players[turn]
    after = (turn + 1) % len(players)
    moves = settler_moves(board, player)
    if not moves:
        return brute_force(board, players, after, passes + 1)

    def value(counts: dict[str, int]) -> int:
        return counts[players[0]] - (counts[players[1]] if len(players) == 2 else 0)

    lines = []
    for move in moves:
        counts = brute_force(place(board, move), players, after)
        counts[player] += 1
        lines.append(counts)
    return (max if turn == 0 else min)(lines, key=value)


def settlers(board: Board, player: str) -> int:
    return sum(1 for p in board.pieces if p.kind == "settler" and p.player == player)


def small_position(seed: int, players: tuple[str, ...]) -> Board:
    board = random_position(seed, radius=1 + seed % 2, settlers=4 + 8 * (seed % 2), players=players)
    if sum(1 for h in board.tiles if not board.pieces_at(h)) > 8:
        board = random_position(seed, radius=1, settlers=4, players=players)
    return board


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10**6))
def test_two_players_match_brute_force(seed):
    players = ("red", "blue")
    board = small_position(seed, players)
    solution = solve(board, "red", players=players)
    expected = brute_force(board, players)
    assert solution.exact
    lead = solution.scores["red"] - solution.scores["blue"]
    assert lead == settlers(board, "red") + expected["red"] - settlers(board, "blue") - expected["blue"]
    for p in players:
        assert solution.lower[p] <= solution.scores[p] <= solution.upper[p]
    t = territory(board)
    for p in players:
        assert t.secured_minimum[p] <= solution.lower[p] and solution.upper[p] <= t.reachable_maximum[p]
    if solution.best_move is None:
        assert settler_moves(board, "red") == []
    else:
        assert solution.best_move in settler_moves(board, "red")
        reply = brute_force(place(board, solution.best_move), ("blue", "red"))
        assert 1 + reply["red"] - reply["blue"] == expected["red"] - expected["blue"]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6))
def test_three_players_paranoid_matches_brute_force(seed):
    players = ("red", "blue", "green")
    board = small_position(seed, players)
    solution = solve(board, "red", players=players)
    assert solution.exact
    assert solution.lower["red"] == settlers(board, "red") + brute_force(board, players)["red"]


def test_the_player_to_move_must_pass_without_a_move():
    board = place(AROUND_CONTESTED, Piece(Hex(0, 0), 0, "settler", "red"))
    solution = solve(board, "blue", players=("red", "blue"))
    assert solution.best_move is None
    assert solution.exact and solution.scores == {"red": 4, "blue": 0}


def test_taking_the_shared_tile_first_wins():
    # The doc's position "territory-around" with blue behind (-1,1): whoever settles (0,0) first
    # cuts the other off.
    for mover, other in (("red", "blue"), ("blue", "red")):
        solution = solve(AROUND_CONTESTED, mover)
        assert solution.exact
        assert solution.best_move == Piece(Hex(0, 0), 0 if mover == "red" else 6, "settler", mover)
        assert solution.scores == {mover: 4, other: 0}
        assert solution.lower == solution.upper == solution.scores


def test_a_private_region_is_counted_and_its_move_is_real():
    solution = solve(AROUND, "red", players=("red", "blue"))
    assert solution.scores == {"red": 4, "blue": 0}
    assert solution.best_move == Piece(Hex(0, 0), 0, "settler", "red")
    assert solution.nodes <= 2


def test_out_of_time_gives_proven_bounds_not_a_guess():
    board = random_position(16, radius=3, plain=0.75, houses=3)  # tens of thousands of nodes
    hurried = solve(board, "red", players=("red", "blue"), time_budget=0.0)
    assert not hurried.exact
    assert hurried.best_move in settler_moves(board, "red")
    for p in ("red", "blue"):
        assert hurried.lower[p] <= hurried.scores[p] <= hurried.upper[p]
    assert hurried.to_json()["exact"] is False


def test_a_generous_budget_changes_nothing():
    board = random_position(36, radius=3, plain=0.75, houses=3, settlers=6)
    unhurried = solve(board, "red", players=("red", "blue"))
    budgeted = solve(board, "red", players=("red", "blue"), time_budget=60.0)
    assert unhurried.exact and budgeted.exact
    assert (budgeted.scores, budgeted.lower, budgeted.upper) == (unhurried.scores, unhurried.lower, unhurried.upper)


def test_solver_bounds_hold_when_stopped_early():
    board = random_position(30, radius=3, plain=0.75, houses=3, settlers=4)  # about 3000 nodes
    truth = solve(board, "red", players=("red", "blue"))
    hurried = solve(board, "red", players=("red", "blue"), time_budget=0.0)
    assert truth.exact and not hurried.exact
    lead = truth.scores["red"] - truth.scores["blue"]
    assert hurried.lower["red"] - hurried.upper["blue"] <= lead <= hurried.upper["red"] - hurried.lower["blue"]
