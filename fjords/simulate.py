"""Whole legal games of Fjords, played by simple policies, deterministically per seed.

The renderer draws its synthetic tables from here and the tests use the games
as legal positions. A game has two phases: **exploration**, in which the
players lay the tiles of the shuffled stack (and may put a house on the tile
they laid), and **settlement**, in which they place settlers next to their own
pieces until nobody can. Every interpretation of the rules made here is written
down in ``docs/simulator.md``.

All randomness comes from one ``random.Random(seed)`` per game, never from the
global generator, so a seed always gives the same game.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Iterator, Sequence

from fjords.board import Board, Piece, Tile
from fjords.catalogue import ALL_MOUNTAIN, catalogue, start_layout
from fjords.geometry import Hex, segment_of
from fjords.rules import Rules
from fjords.scoring import MatchResult, match_result
from fjords.settlement import house_moves, place, settler_moves
from fjords.solver import solve
from fjords.territory import territory
from fjords.tile_laying import GrowingLayout, Placement

POLICIES = ("random", "greedy", "solver")
COLOURS = {"classic": ("red", "yellow", "blue", "black"),
           "2022": ("red", "yellow", "blue", "black", "green", "white")}
PLAYER_COUNTS = {"classic": (2,), "2022": (2, 3, 4)}
ROW_LENGTH = 4  # the 2022 edition's face-up row of tiles to choose from
RANDOM_HOUSE_CHANCE = 0.5  # how often the random policy builds a house when it may

# -- exploration ---------------------------------------------------------------


class _Game:
    """The state of one game while it is played; :meth:`board` snapshots it."""

    def __init__(self, edition: str, colours: Sequence[str], rng: random.Random, policy: str) -> None:
        self.edition = edition
        self.colours = tuple(colours)
        self.rng = rng
        self.policy = policy
        self.rules = Rules.for_edition(edition)
        self.tiles: dict[Hex, Tile] = {t.hex: t for t in start_layout(edition)}
        self.layout = GrowingLayout(self.tiles)
        self.pieces: list[Piece] = []
        self.stack = list(catalogue(edition)[3:])
        rng.shuffle(self.stack)
        self.set_aside: list[str] = []

    def board(self, phase: str, to_move: str | None) -> Board:
        extra = {"players": list(self.colours), "set_aside": list(self.set_aside)}
        return Board(edition=self.edition, tiles=self.tiles, pieces=tuple(self.pieces), phase=phase,
                     to_move=to_move, extra=extra)

    def lay(self, player: str, placements: list[Placement]) -> None:
        """Lay one of the placements (the policy chooses), then perhaps build a house on it."""
        if self.policy == "random":
            h, terrain, _ = self.rng.choice(placements)
        else:  # greedy and solver: the most compact layout, which leaves the most fitting places
            most = max(p[2] for p in placements)
            h, terrain, _ = self.rng.choice([p for p in placements if p[2] == most])
        self.tiles[h] = Tile(hex=h, terrain=terrain)
        self.layout.add(h, terrain)
        houses = house_moves(self.board("exploration", player), h, player, self.rules)
        if not houses:
            return
        if self.policy == "random":
            if self.rng.random() < RANDOM_HOUSE_CHANCE:
                self.pieces.append(self.rng.choice(houses))
        else:  # the largest run of plains is the best start for settlers
            self.pieces.append(max(houses, key=lambda p: len(segment_of(terrain, p.sector))))

    def classic_turn(self, player: str) -> None:
        """Take a fitting set-aside tile, or draw until a tile fits (misfits are set aside face up)."""
        fitting = [t for t in self.set_aside if self.layout.fits(t)]
        if fitting and (not self.stack or self.policy != "random" or self.rng.random() < 0.5):
            terrain = self.rng.choice(fitting)
            self.set_aside.remove(terrain)
            self.lay(player, self.layout.placements(terrain))
            return
        while self.stack:
            terrain = self.stack.pop()
            placements = self.layout.placements(terrain)
            if placements:
                self.lay(player, placements)
                return
            self.set_aside.append(terrain)

    def classic_exploring(self) -> bool:
        return bool(self.stack) or any(self.layout.fits(t) for t in self.set_aside)

    def row_turn(self, player: str, row: list[str]) -> None:
        """2022: lay a tile of the face-up row; when none fits, set the oldest aside and refill."""
        while row:
            choices = {i: self.layout.placements(t) for i, t in enumerate(row)}
            choices = {i: p for i, p in choices.items() if p}
            if choices:
                if self.policy == "random":
                    pick = self.rng.choice(sorted(choices))
                else:
                    pick = max(choices, key=lambda i: max(p[2] for p in choices[i]))
                row.pop(pick)
                self._refill(row)
                self.lay(player, choices[pick])
                return
            self.set_aside.append(row.pop(0))
            self._refill(row)

    def _refill(self, row: list[str]) -> None:
        while len(row) < ROW_LENGTH and self.stack:
            row.append(self.stack.pop())


def _explore(game: _Game, first: int) -> Iterator[Board]:
    """Yield the start and the board after every exploration turn but the last; return who is next."""
    n = len(game.colours)
    turn = first
    row: list[str] = []
    if game.edition == "2022":
        game._refill(row)
    while True:
        player = game.colours[turn % n]
        exploring = bool(row) if game.edition == "2022" else game.classic_exploring()
        if not exploring:
            game.set_aside.extend(row)
            return turn % n
        yield game.board("exploration", player)
        if game.edition == "2022":
            game.row_turn(player, row)
        else:
            game.classic_turn(player)
        turn += 1


# -- rune stones -----------------------------------------------------------------


def _place_runestones(game: _Game) -> None:
    """The 2022 rune stone variant: Thor, Laguz, Gyfu and Odin where they belong (see the doc)."""
    empty = [t for t in game.tiles.values() if not any(p.hex == t.hex for p in game.pieces)]
    stones: list[Piece] = []

    def pick(candidates: list[Tile]) -> Tile | None:
        free = [t for t in candidates if all(s.hex != t.hex for s in stones)]
        return game.rng.choice(free) if free else None

    thor = pick([t for t in empty if t.terrain == ALL_MOUNTAIN])
    if thor is not None:
        stones.append(Piece(hex=thor.hex, sector=0, kind="runestone", rune="thor"))
    sea = [t for t in empty if "S" in t.terrain]
    laguz = pick([t for t in sea if "P" not in t.terrain and "M" not in t.terrain] or sea)
    if laguz is not None:
        stones.append(Piece(hex=laguz.hex, sector=laguz.terrain.index("S"), kind="runestone", rune="laguz"))
    gyfu = pick([t for t in empty if "P" in t.terrain])
    if gyfu is not None:
        stones.append(Piece(hex=gyfu.hex, sector=gyfu.segments()[0][0], kind="runestone", rune="gyfu"))
    open_positions = sorted(game.layout.open)
    stones.append(Piece(hex=game.rng.choice(open_positions), sector=None, kind="runestone", rune="odin"))
    game.pieces.extend(stones)


# -- settlement ------------------------------------------------------------------


def _next_mover(board: Board, colours: Sequence[str], turn: int, rules: Rules) -> tuple[int, list[Piece]] | None:
    """The first player from ``turn`` on who can place a settler, with the moves; None when nobody can."""
    for offset in range(len(colours)):
        index = (turn + offset) % len(colours)
        moves = settler_moves(board, colours[index], rules)
        if moves:
            return index, moves
    return None


def _choose_settler(game: _Game, board: Board, player: str, moves: list[Piece]) -> Piece:
    if game.policy == "random" or len(moves) == 1:
        return game.rng.choice(moves)
    if game.policy == "solver":
        # No time budget: a search cut short by the clock would make a seed's game vary.
        best = solve(board, player, players=game.colours, rules=game.rules).best_move
        if best is not None:
            return best
    return _greedy_settler(board, player, game.colours, moves, game.rng)


def _greedy_settler(board: Board, player: str, colours: Sequence[str], moves: list[Piece],
                    rng: random.Random) -> Piece:
    """The move after which the player can reach the most land the others cannot."""

    def value(move: Piece) -> int:
        reach = territory(place(board, move)).reachable_maximum
        return reach.get(player, 0) - max((reach.get(c, 0) for c in colours if c != player), default=0)

    values = [value(m) for m in moves]
    best = max(values)
    return rng.choice([m for m, v in zip(moves, values) if v == best])


def _settle(game: _Game, turn: int) -> Iterator[Board]:
    board = game.board("settlement", None)
    nxt = _next_mover(board, game.colours, turn, game.rules)
    while nxt is not None:
        index, moves = nxt
        player = game.colours[index]
        board = replace(board, to_move=player)
        yield board
        board = place(board, _choose_settler(game, board, player, moves))
        nxt = _next_mover(board, game.colours, index + 1, game.rules)
    yield replace(board, phase="finished", to_move=None)


# -- the public API ----------------------------------------------------------------


def _colours(edition: str, players: int, player_colours: Sequence[str] | None, rng: random.Random) -> tuple[str, ...]:
    if players not in PLAYER_COUNTS[edition]:
        counts = ", ".join(str(n) for n in PLAYER_COUNTS[edition])
        raise ValueError(f"the {edition} edition is played by {counts} players, not {players}")
    if player_colours is None:
        return tuple(rng.sample(COLOURS[edition], players))
    colours = tuple(c.strip().lower() for c in player_colours)
    if len(colours) != players or len(set(colours)) != players or not all(colours):
        raise ValueError(f"player_colours must name {players} different colours, not {list(player_colours)}")
    return colours


def _play(edition: str, colours: Sequence[str], rng: random.Random, policy: str, runestones: bool,
          first: int) -> Iterator[Board]:
    game = _Game(edition, colours, rng, policy)
    turn = yield from _explore(game, first)
    if runestones:
        _place_runestones(game)
    yield from _settle(game, turn)


def _check_options(edition: str, policy: str, runestones: bool) -> None:
    Rules.for_edition(edition)  # refuses an unknown edition
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}; expected one of {', '.join(POLICIES)}")
    if runestones and edition != "2022":
        raise ValueError("the rune stone variant belongs to the 2022 edition")


def simulate_states(edition: str = "classic", players: int = 2, seed: int = 0, *, policy: str = "random",
                    runestones: bool = False, player_colours: Sequence[str] | None = None) -> Iterator[Board]:
    """Every board of one game, the first with the start tiles only, the last ``finished``.

    One board per turn that changed the table: a laid tile (with the house
    built on it, if any), a placed settler. The rune stones of the variant
    appear on the board that ends exploration. Each board's ``phase`` and
    ``to_move`` say what happens next; ``extra`` lists the players in turn
    order (``players``) and the tiles set aside so far (``set_aside``).
    """
    _check_options(edition, policy, runestones)
    rng = random.Random(seed)
    colours = _colours(edition, players, player_colours, rng)
    return _play(edition, colours, rng, policy, runestones, first=0)


def simulate_game(edition: str = "classic", players: int = 2, seed: int = 0, *, policy: str = "random",
                  stop_fraction: float | None = None, runestones: bool = False,
                  player_colours: Sequence[str] | None = None) -> Board:
    """One game's final board, or the board ``stop_fraction`` of the way through its states.

    ``stop_fraction`` 0 is the start tiles, 1 the finished game; in between the
    board is the state at that share of the game's boards (so 0.3 is usually in
    exploration and 0.8 in settlement).
    """
    if stop_fraction is not None and not 0.0 <= stop_fraction <= 1.0:
        raise ValueError(f"stop_fraction must be between 0 and 1, not {stop_fraction}")
    states = simulate_states(edition, players, seed, policy=policy, runestones=runestones,
                             player_colours=player_colours)
    if stop_fraction is None:
        board = None
        for board in states:
            pass
        assert board is not None  # a game has at least its start board
        return board
    boards = list(states)
    return boards[round(stop_fraction * (len(boards) - 1))]


def simulate_match(seed: int = 0, *, policy: str = "random") -> tuple[list[Board], MatchResult]:
    """A classic match: three rounds between the same two players, who take turns to start."""
    _check_options("classic", policy, False)
    rng = random.Random(seed)
    colours = _colours("classic", 2, None, rng)
    boards = []
    for round_number in range(3):
        *_, final = _play("classic", colours, rng, policy, False, first=round_number % 2)
        boards.append(final)
    return boards, match_result([b.score() for b in boards])
