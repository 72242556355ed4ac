"""Boards to photograph: the engine's simulated games, or a simple grown layout.

:func:`random_board` asks :func:`fjords.simulate.simulate_game` when that module
is installed; otherwise it grows a legal-looking table itself (tiles that match
their neighbours and touch at least two earlier ones, houses on plains,
settlers chained to their owner's pieces), so the renderer never waits on the
engine.
"""

from __future__ import annotations

import random
from typing import Any

from fjords import Board, Hex, Piece, Tile
from fjords.geometry import LAND, SECTORS, cyclic_runs, facing_sector, segments

PLAYER_COLOURS = ("red", "yellow", "blue", "black", "white", "green", "grey", "beige", "brown", "orange",
                  "purple")
# The colours real boxes ship with come first; the rest appear at home-made tables.
BOXED_COLOURS = {"classic": ("red", "yellow", "blue", "green"), "2022": ("red", "yellow", "blue", "black", "white")}
TILES_PER_EDITION = {"classic": 40, "2022": 40}
HOUSES_PER_PLAYER = 4
START = (Hex(0, 0), Hex(1, 0), Hex(0, 1))


def random_board(seed: int, edition: str = "classic", players: int = 2, **kw: Any) -> Board:
    """A table in a random phase of a game; ``kw`` may give ``stop_fraction`` (0..1) and ``colours``."""
    rng = random.Random(seed)
    stop_fraction = kw.pop("stop_fraction", None)
    if stop_fraction is None:
        stop_fraction = rng.choice([rng.uniform(0.2, 0.6), rng.uniform(0.6, 0.95), 1.0])
    try:
        from fjords.simulate import simulate_game
    except ImportError:
        simulate_game = None
    if simulate_game is not None:
        return simulate_game(edition, players, seed, stop_fraction=stop_fraction, **kw)
    return _grown_board(rng, edition, players, stop_fraction, kw.get("colours"))


def _grown_board(rng: random.Random, edition: str, players: int, stop_fraction: float,
                 colours: tuple[str, ...] | None) -> Board:
    names = list(colours) if colours else _pick_colours(rng, edition, players)
    total = TILES_PER_EDITION[edition]
    n_tiles = max(4, round(total * min(1.0, stop_fraction * 1.6)))
    tiles: dict[Hex, Tile] = {}
    pieces: dict[Hex, Piece] = {}
    houses = {p: 0 for p in names}
    turn = 0
    for h in START:
        terrain = _terrain_for(rng, h, tiles, start=True)
        while tiles and not _keeps_land_whole(h, terrain, tiles):
            terrain = _terrain_for(rng, h, tiles, start=True)
        tiles[h] = Tile(h, terrain, start=True)
    while len(tiles) < n_tiles:
        placed = _place_tile(rng, tiles)
        if placed is None:
            break
        player = names[turn % len(names)]
        turn += 1
        if houses[player] < HOUSES_PER_PLAYER and rng.random() < 0.45 and _house_allowed(placed, tiles, pieces):
            pieces[placed] = Piece(placed, rng.choice(segments(tiles[placed].terrain))[0], "house", player)
            houses[player] += 1
    phase = "exploration"
    if stop_fraction > 0.6 and len(tiles) >= n_tiles:
        phase = "settlement"
        budget = round((stop_fraction - 0.6) / 0.4 * 20 * len(names))
        _settle(rng, tiles, pieces, names, budget)
        if stop_fraction >= 1.0:
            phase = "finished"
    if edition == "2022" and rng.random() < 0.4:
        _add_runestones(rng, tiles, pieces)
    board = Board.from_tiles(tiles.values(), pieces.values(), edition=edition, phase=phase,
                             extra={"players": names})
    return board


def _pick_colours(rng: random.Random, edition: str, players: int) -> list[str]:
    pool = list(BOXED_COLOURS[edition]) if rng.random() < 0.8 else list(PLAYER_COLOURS)
    if len(pool) < players:
        pool = list(PLAYER_COLOURS)
    return rng.sample(pool, players)


def _frontier(tiles: dict[Hex, Tile]) -> list[Hex]:
    """Empty positions touching at least two tiles, in a stable order."""
    seen: dict[Hex, int] = {}
    for h in tiles:
        for n in h.neighbours():
            if n not in tiles:
                seen[n] = seen.get(n, 0) + 1
    return sorted(h for h, count in seen.items() if count >= 2)


def _place_tile(rng: random.Random, tiles: dict[Hex, Tile]) -> Hex | None:
    spots = _frontier(tiles)
    rng.shuffle(spots)
    for h in spots[:12]:
        for _ in range(20):
            terrain = _terrain_for(rng, h, tiles)
            if _keeps_land_whole(h, terrain, tiles):
                tiles[h] = Tile(h, terrain)
                return h
    return None


def _terrain_for(rng: random.Random, h: Hex, tiles: dict[Hex, Tile], start: bool = False) -> str:
    """Twelve letters matching every neighbour, with free stretches filled by natural runs."""
    fixed: list[str | None] = [None] * SECTORS
    for i in range(SECTORS):
        other = tiles.get(h.neighbour(i // 2))
        if other is not None:
            fixed[i] = other.terrain[facing_sector(i)]
    if all(f is None for f in fixed):
        fixed[rng.randrange(0, SECTORS, 2)] = "P" if start else rng.choice("SMPPP")
    letters = list(fixed)
    anchor = next(i for i in range(SECTORS) if fixed[i] is not None)
    current = fixed[anchor]
    for step in range(1, SECTORS):
        i = (anchor + step) % SECTORS
        if fixed[i] is not None:
            current = fixed[i]
            continue
        # Terrain changes at edge midpoints or corners, about once per edge on average.
        if rng.random() < 0.3:
            current = rng.choice([c for c in "SMPP" if c != current])
        letters[i] = current
    terrain = "".join(letters)
    if not start and rng.random() < 0.03 and all(f in (None, "M") for f in fixed):
        terrain = "M" * SECTORS
    return terrain


def _keeps_land_whole(h: Hex, terrain: str, tiles: dict[Hex, Tile]) -> bool:
    """Every run of land on the new tile touches land already on the table."""
    return all(any(_faces_land(h, i, tiles) for i in run) for run in cyclic_runs(terrain, LAND))


def _faces_land(h: Hex, sector: int, tiles: dict[Hex, Tile]) -> bool:
    other = tiles.get(h.neighbour(sector // 2))
    return other is not None and other.terrain[facing_sector(sector)] in LAND


def _house_allowed(h: Hex, tiles: dict[Hex, Tile], pieces: dict[Hex, Piece]) -> bool:
    if not segments(tiles[h].terrain) or h in pieces:
        return False
    return not any(n in pieces and pieces[n].kind == "house" for n in h.neighbours())


def _settle(rng: random.Random, tiles: dict[Hex, Tile], pieces: dict[Hex, Piece], names: list[str],
            budget: int) -> None:
    """Players take turns putting a settler on a free plain segment adjacent to their own pieces."""
    placed = 0
    stuck = set()
    while placed < budget and len(stuck) < len(names):
        player = names[placed % len(names)] if not stuck else rng.choice([p for p in names if p not in stuck])
        options = _settler_options(tiles, pieces, player)
        if not options:
            stuck.add(player)
            continue
        h, sector = rng.choice(options)
        pieces[h] = Piece(h, sector, "settler", player)
        placed += 1


def _settler_options(tiles: dict[Hex, Tile], pieces: dict[Hex, Piece], player: str) -> list[tuple[Hex, int]]:
    options = set()
    for piece in pieces.values():
        if piece.player != player:
            continue
        own = tiles[piece.hex].terrain
        run = next(r for r in segments(own) if piece.sector in r)
        for i in run:
            n = piece.hex.neighbour(i // 2)
            other = tiles.get(n)
            j = facing_sector(i)
            if other is not None and n not in pieces and other.terrain[j] == "P":
                options.add((n, next(r for r in segments(other.terrain) if j in r)[0]))
    return sorted(options)


def _add_runestones(rng: random.Random, tiles: dict[Hex, Tile], pieces: dict[Hex, Piece]) -> None:
    free = sorted(h for h in tiles if h not in pieces)
    for h in rng.sample(free, min(len(free), rng.randint(1, 2))):
        terrain = tiles[h].terrain
        rune = "thor" if terrain == "M" * SECTORS else ("laguz" if "S" in terrain else "gyfu")
        sector = terrain.find("S") if rune == "laguz" else rng.randrange(SECTORS)
        pieces[h] = Piece(h, sector, "runestone", None, rune)
