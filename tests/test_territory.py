"""Territory: the positions of docs/rules-settlement.md and exact reach against brute force."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st
from test_settlement import board_of, random_position

from fjords import Board, Hex, Rules
from fjords.settlement import place, plains_index, position, reachable_tiles, settler_moves, solo_maximum
from fjords.territory import territory

# Position 4: the route around a two-segment tile.
#                 (0,-1) PPPPPPPPPPMP   (1,-1) SSSSSSPPPPSS
#   (-1,0) PPPPSSSSSSSS    (0,0) PPPPPMPPPPMM    (1,0) SSSSSSPPSSSS  house red
#          (-1,1) SSPPSSSSSSSS
# (0,0) has two segments: "a" (sectors 0-4: east, north-east, half the north-west edge)
# and "b" (6-9: west, south-west). Red enters a, goes round the north through
# (1,-1), (0,-1), (-1,0) and back into b, which touches (-1,1). That walk uses
# (0,0) twice; a tile takes one piece, so (-1,1) is out of reach.
AROUND = {(0, 0): "PPPPPMPPPPMM", (1, 0): "SSSSSSPPSSSS", (1, -1): "SSSSSSPPPPSS",
          (0, -1): "PPPPPPPPPPMP", (-1, 0): "PPPPSSSSSSSS", (-1, 1): "SSPPSSSSSSSS"}
RING = [Hex(0, 0), Hex(1, -1), Hex(0, -1), Hex(-1, 0)]


def test_a_flood_overestimates_and_territory_does_not():
    board = board_of(AROUND, [(1, 0, 6, "house", "red")])
    pos = position(board)
    flooded = {pos.index.segments[s][0] for s in range(len(pos.index.segments))
               if pos.index.reach(pos.frontier["red"], pos.free) >> s & 1}
    assert Hex(-1, 1) in flooded
    t = territory(board)
    assert sorted(t.secured["red"]) == sorted(RING)
    assert t.dead == (Hex(-1, 1),)
    assert t.contested == ()
    assert t.points == {"red": 0}
    assert t.secured_minimum == {"red": 4}
    assert t.reachable_maximum == {"red": 4}


def test_an_opponent_behind_the_tile_contests_the_ring():
    board = board_of(AROUND, [(1, 0, 6, "house", "red"), (-1, 1, 2, "house", "blue")])
    t = territory(board)
    assert sorted(t.contested) == sorted(RING)
    assert t.secured == {"red": (), "blue": ()}
    assert t.dead == ()
    assert t.reach[Hex(0, 0)] == ("red", "blue")
    assert t.secured_minimum == {"red": 0, "blue": 0}
    assert t.reachable_maximum == {"red": 4, "blue": 4}


def test_reach_is_limited_by_settlers_left():
    board = board_of(AROUND, [(1, 0, 6, "house", "red")])
    pos = position(board, rules=Rules(settlers_per_player=2))
    tiles = reachable_tiles(pos.index, pos.frontier["red"], pos.free, pos.settlers_left["red"])
    assert sorted(pos.index.hexes[t] for t in range(len(pos.index.hexes)) if tiles >> t & 1) == sorted(
        [Hex(0, 0), Hex(1, -1), Hex(0, -1)])


def test_settling_the_shared_tile_cuts_the_opponent_off():
    board = place(board_of(AROUND, [(1, 0, 6, "house", "red"), (-1, 1, 2, "house", "blue")]),
                  settler_moves(board_of(AROUND, [(1, 0, 6, "house", "red")]), "red")[0])
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


def test_territory_is_fast():
    board = random_position(7, radius=4, houses=4, settlers=12, players=("red", "blue", "green", "black"))
    territory(board)
    start = time.perf_counter()
    for _ in range(10):
        territory(board)
    assert (time.perf_counter() - start) / 10 < 0.02  # target 2 ms; loose for a loaded CI machine
