"""Territory: the positions of docs/rules.md ("Territory") and exact reach against brute force."""

from __future__ import annotations

from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from positions import AROUND, AROUND_CONTESTED, doc_examples, draw, random_position

from fjords import Board, Hex, Rules
from fjords.plains import plains_index
from fjords.settlement import place, position, reachable_tiles, settler_moves, solo_maximum
from fjords.territory import Territory, territory

# The ring around (0,0), whose two segments a walk through the ring would use both of.
RING = [Hex(0, 0), Hex(1, -1), Hex(0, -1), Hex(-1, 0)]


@pytest.mark.parametrize("position", doc_examples("Territory"), ids=lambda e: e.name)
def test_doc_position_is_drawn_from_its_data(position):
    assert draw(position.board) == position.drawing, "the drawing in docs/rules.md drifted from its data"


def test_a_flood_overestimates_and_territory_does_not():
    pos = position(AROUND)
    flooded = {pos.index.segments[s][0] for s in range(len(pos.index.segments))
               if pos.index.reach(pos.frontier["red"], pos.free) >> s & 1}
    assert Hex(-1, 1) in flooded
    t = territory(AROUND)
    assert sorted(t.secured["red"]) == sorted(RING)
    assert t.dead == (Hex(-1, 1),)
    assert t.contested == ()
    assert t.points == {"red": 0}
    assert t.secured_minimum == {"red": 4}
    assert t.reachable_maximum == {"red": 4}


def test_an_opponent_behind_the_tile_contests_the_ring():
    t = territory(AROUND_CONTESTED)
    assert sorted(t.contested) == sorted(RING)
    assert t.secured == {"red": (), "blue": ()}
    assert t.dead == ()
    assert t.reach[Hex(0, 0)] == ("red", "blue")
    assert t.secured_minimum == {"red": 0, "blue": 0}
    assert t.reachable_maximum == {"red": 4, "blue": 4}


def test_reach_is_limited_by_settlers_left():
    pos = position(AROUND, rules=Rules(settlers_per_player=2))
    tiles = reachable_tiles(pos.index, pos.frontier["red"], pos.free, pos.settlers_left["red"])
    assert sorted(pos.index.hexes[t] for t in range(len(pos.index.hexes)) if tiles >> t & 1) == sorted(
        [Hex(0, 0), Hex(1, -1), Hex(0, -1)])


def test_settling_the_shared_tile_cuts_the_opponent_off():
    board = place(AROUND_CONTESTED, settler_moves(AROUND, "red")[0])
    t = territory(board)
    assert t.points == {"red": 1, "blue": 0}
    doc = t.to_json()
    assert doc["dead"] == [] and doc["contested"] == []
    assert sorted(map(tuple, doc["secured"]["red"])) == [(-1, 0), (0, -1), (1, -1)]
    assert doc["players"]["red"] == {"points": 1, "secured_tiles": 3, "secured_minimum": 4,
                                     "reachable_maximum": 4}
    assert doc["players"]["blue"]["reachable_maximum"] == 0
    assert board.territory() == t


# -- exactness against brute force -------------------------------------------

def solo_plays(board: Board, player: str, limit: int) -> tuple[set[Hex], int]:
    """Every tile ``player`` can settle alone within ``limit`` settlers, and the most it can settle."""
    reached: set[Hex] = set()
    best = 0
    seen: set[frozenset] = set()

    def play(board: Board, placed: int) -> None:
        nonlocal best
        key = frozenset((p.hex, p.sector) for p in board.pieces)
        if key in seen:
            return
        seen.add(key)
        best = max(best, placed)
        if placed == limit:
            return
        for move in settler_moves(board, player):
            reached.add(move.hex)
            play(place(board, move), placed + 1)

    play(board, 0)
    return reached, best


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(2, 14), st.integers(1, 20))
def test_territory_is_exact(seed, settlers, supply):
    board = random_position(seed, radius=1 + seed % 2, settlers=settlers, houses=1 + seed % 2)
    free = sum(1 for h in board.tiles if not board.pieces_at(h))
    if free > 9:
        board = random_position(seed, radius=1, settlers=settlers)
    rules = Rules(settlers_per_player=supply + settlers // 2)
    pos = position(board, rules=rules)
    t = territory(board)  # default rules: 20 settlers
    for player in board.players:
        reached, best = solo_plays(board, player, pos.settlers_left[player])
        tiles = reachable_tiles(pos.index, pos.frontier[player], pos.free, pos.settlers_left[player])
        assert {pos.index.hexes[i] for i in range(len(pos.index.hexes)) if tiles >> i & 1} == reached
        assert solo_maximum(pos.index, pos.frontier[player], pos.free, pos.settlers_left[player]) == best
        unlimited, most = solo_plays(board, player, 20)
        assert {h for h, players in t.reach.items() if player in players} == unlimited
        assert t.reachable_maximum[player] - t.points[player] == most
        assert t.points[player] <= t.secured_minimum[player] <= t.reachable_maximum[player]
    classified = set(t.contested) | set(t.dead) | {h for hs in t.secured.values() for h in hs}
    assert classified == {h for h in plains_index(board).hexes if not board.pieces_at(h)}


def moved_territory(t: Territory, move: Callable[[Hex], Hex]) -> dict[str, object]:
    """What ``t`` says, with every tile moved by ``move``, as sets (the order of tiles may change)."""
    return {"secured": {p: {move(h) for h in hs} for p, hs in t.secured.items()},
            "contested": {move(h) for h in t.contested}, "dead": {move(h) for h in t.dead},
            "reach": {move(h): players for h, players in t.reach.items()},
            "points": t.points, "secured_minimum": t.secured_minimum, "reachable_maximum": t.reachable_maximum}


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(0, 12), st.integers(1, 5), st.integers(-4, 4), st.integers(-4, 4))
def test_territory_unchanged_by_rotation_and_translation(seed, settlers, k, dq, dr):
    board = random_position(seed, settlers=settlers, runestones=seed % 3)
    expected = moved_territory(territory(board), lambda h: h)
    assert moved_territory(territory(board.rotated(k)), lambda h: h.rotated(-k)) == expected
    assert moved_territory(territory(board.translated(dq, dr)), lambda h: h.translated(-dq, -dr)) == expected
