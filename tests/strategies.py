"""Test support for the rules engine: random legal boards and an independent brute-force oracle.

Nothing here imports :mod:`fjords.legality`: the oracle works on sectors one by one, the slow and
obvious way, so that the engine is checked against something written differently.
"""

from __future__ import annotations

import random
from functools import lru_cache
from itertools import product
from typing import Iterable, Mapping

from hypothesis import strategies as st

from fjords import Board, Hex, Piece, Tile
from fjords.geometry import SECTORS, facing_sector

LAND = frozenset("MP")

# -- the oracle: sectors one by one --------------------------------------------------------------------


def land_is_one_mass(terrains: Mapping[Hex, str], land: Iterable[str] = LAND) -> bool:
    """Whether the ``land`` sectors of the tiles form one connected mass (none at all counts as one)."""
    land = frozenset(land)
    nodes = {(h, i) for h, t in terrains.items() for i in range(SECTORS) if t[i] in land}
    if not nodes:
        return True
    seen = {next(iter(nodes))}
    stack = list(seen)
    while stack:
        h, i = stack.pop()
        nearby = [(h, (i + 1) % SECTORS), (h, (i - 1) % SECTORS), (h.neighbour(i // 2), facing_sector(i))]
        for node in nearby:
            if node in nodes and node not in seen:
                seen.add(node)
                stack.append(node)
    return len(seen) == len(nodes)


def triangles(hexes: Iterable[Hex]) -> list[frozenset[Hex]]:
    """Every set of three mutually adjacent positions among ``hexes``."""
    hexes = set(hexes)
    found = set()
    for a in hexes:
        for b in a.neighbours():
            for c in b.neighbours():
                if b in hexes and c in hexes and c in set(a.neighbours()):
                    found.add(frozenset((a, b, c)))
    return sorted(found, key=sorted)


def buildable(terrains: Mapping[Hex, str], start: frozenset[Hex] | None = None) -> bool:
    """Brute force over placement orders: from some start triple (``start`` when given), can every
    tile be placed touching two placed ones with the land one mass after every placement?"""
    tiles = frozenset(terrains)

    @lru_cache(maxsize=None)
    def completes(placed: frozenset[Hex]) -> bool:
        if placed == tiles:
            return True
        for t in tiles - placed:
            touching = sum(n in placed for n in t.neighbours())
            if touching >= 2 and land_is_one_mass({h: terrains[h] for h in placed | {t}}) and completes(placed | {t}):
                return True
        return False

    starts = [start] if start is not None else triangles(tiles)
    return any(land_is_one_mass({h: terrains[h] for h in s}) and completes(frozenset(s)) for s in starts)


def readings(terrains: Mapping[Hex, str]) -> list[dict[Hex, str]]:
    """Every way of reading the ``?`` sectors as ``S``, ``M`` or ``P``."""
    holes = [(h, i) for h, t in terrains.items() for i, c in enumerate(t) if c == "?"]
    out = []
    for letters in product("SMP", repeat=len(holes)):
        grid = {h: list(t) for h, t in terrains.items()}
        for (h, i), c in zip(holes, letters):
            grid[h][i] = c
        out.append({h: "".join(t) for h, t in grid.items()})
    return out


# -- random legal boards --------------------------------------------------------------------------------


START = (Hex(0, 0), Hex(1, 0), Hex(1, -1))
LETTER_WEIGHTS = {"P": 5, "M": 2, "S": 3}


def natural_terrain(rng: random.Random, forced: Mapping[int, str]) -> str:
    """Twelve letters in runs, as printed tiles look: ``forced`` sectors keep their letter, the others
    mostly continue the run before them."""
    letters = list(LETTER_WEIGHTS)
    weights = list(LETTER_WEIGHTS.values())
    first = min(forced) if forced else 0
    out = [""] * SECTORS
    previous = forced.get(first) or rng.choices(letters, weights)[0]
    for step in range(SECTORS):
        i = (first + step) % SECTORS
        if i in forced:
            out[i] = forced[i]
        elif rng.random() < 0.7:
            out[i] = previous
        else:
            out[i] = rng.choices(letters, weights)[0]
        previous = out[i]
    return "".join(out)


def forced_sectors(terrains: Mapping[Hex, str], h: Hex) -> dict[int, str]:
    """The letters a tile at ``h`` must carry to match its placed neighbours."""
    forced = {}
    for i in range(SECTORS):
        other = terrains.get(h.neighbour(i // 2))
        if other is not None:
            forced[i] = other[facing_sector(i)]
    return forced


def grow_layout(rng: random.Random, n_tiles: int, attempts: int = 30) -> dict[Hex, str]:
    """A layout built as the game builds it: a start triangle, then tiles touching two placed ones,
    every shared edge matching, the land one mass after every placement. May stop short of
    ``n_tiles`` when no tile fits anywhere."""
    while True:  # a start triangle whose land is one mass
        terrains: dict[Hex, str] = {}
        for h in START:
            terrains[h] = natural_terrain(rng, forced_sectors(terrains, h))
        if land_is_one_mass(terrains):
            break
    for _ in range(attempts * n_tiles):
        if len(terrains) >= n_tiles:
            break
        open_positions = sorted({n for h in terrains for n in h.neighbours() if n not in terrains
                                 and sum(m in terrains for m in n.neighbours()) >= 2})
        h = rng.choice(open_positions)
        terrain = natural_terrain(rng, forced_sectors(terrains, h))
        if land_is_one_mass({**terrains, h: terrain}):
            terrains[h] = terrain
    return terrains


def place_pieces(rng: random.Random, board: Board, players: tuple[str, ...], houses: int = 2,
                 settlers: int = 20, runestones: bool = False) -> Board:
    """Houses on random plain segments (not on start or all-mountain tiles), then settlers grown from
    each player's pieces over adjacent segments, one piece per tile; a few rune stones if asked."""
    pieces: list[Piece] = []
    taken: set[Hex] = set()
    plain_tiles = sorted(h for h, t in board.tiles.items() if "P" in t.terrain)
    for player in players:
        spots = [h for h in plain_tiles if h not in taken and not board.tiles[h].start
                 and board.tiles[h].terrain != "M" * SECTORS]
        for h in rng.sample(spots, min(houses, len(spots))):
            segment = rng.choice(board.tiles[h].segments())
            pieces.append(Piece(h, segment[0], "house", player))
            taken.add(h)
    placed = {player: 0 for player in players}
    graph = board.segment_graph
    for _ in range(settlers * len(players)):
        player = rng.choice(players)
        if placed[player] >= settlers:
            continue
        own = {board.segment_id(p.hex, p.sector) for p in pieces if p.player == player}
        moves = sorted({seg for node in own for seg in graph.get(node, ()) if seg[0] not in taken})
        if moves:
            h, sector = rng.choice(moves)
            pieces.append(Piece(h, sector, "settler", player))
            taken.add(h)
            placed[player] += 1
    if runestones:
        empty = sorted(set(board.tiles) - taken)
        for h in rng.sample(empty, min(2, len(empty))):
            pieces.append(Piece(h, rng.randrange(SECTORS), "runestone"))
        holes = sorted({n for h in board.tiles for n in h.neighbours()} - set(board.tiles))
        pieces.append(Piece(rng.choice(holes), None, "runestone"))
    return board.with_pieces(pieces)


def random_legal_board(seed: int, n_tiles: int = 12, players: int = 2, edition: str = "classic",
                       runestones: bool = False) -> Board:
    """A seeded random legal board: :func:`grow_layout` plus :func:`place_pieces`."""
    rng = random.Random(seed)
    terrains = grow_layout(rng, n_tiles)
    board = Board.from_tiles([Tile(h, t, start=h in START) for h, t in terrains.items()], edition=edition)
    colours = ("red", "yellow", "blue", "black")[:players]
    return place_pieces(rng, board, colours, runestones=runestones)


def legal_boards(min_tiles: int = 3, max_tiles: int = 16, runestones: bool = False) -> st.SearchStrategy[Board]:
    """Hypothesis strategy for random legal boards (both editions, two to four players)."""
    return st.builds(
        lambda seed, n, players, edition: random_legal_board(seed, n, players, edition,
                                                             runestones and edition == "2022"),
        st.integers(0, 2**32 - 1), st.integers(min_tiles, max_tiles), st.integers(2, 4),
        st.sampled_from(("classic", "2022")))
