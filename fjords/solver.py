"""Exact solver of the settlement phase.

Two players: alpha-beta on the final score difference (the game is zero-sum),
with a transposition table of proven bounds, move ordering and region
splitting. Three or four players: paranoid search (the player to move against
a coalition of the others), which yields a *proven* guaranteed score; max^n
would need a guess about how opponents break ties. ``docs/rules.md`` ("Solver")
gives the rules read and the soundness arguments.

The root value is found by null-window probes that bisect the interval of
proven bounds, so a search stopped by its time budget still returns bounds it
has proven (``exact=False``), never a guess presented as exact.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Sequence

from fjords.board import Board, Piece
from fjords.rules import Rules
from fjords.plains import PlainsIndex, bits
from fjords.settlement import position, solo_maximum
from fjords.territory import current_points

__all__ = ["Solution", "solve"]

# A search position: free segments, then per player (in turn order from the
# root player) frontier, settlers left and private moves left, and whose turn.
State = tuple[int, tuple[int, ...], tuple[int, ...], tuple[int, ...], int]
PRIVATE_MOVE = -1  # a move in the player's private regions (see _Game)
_CHECK_EVERY = 128


@dataclass(frozen=True)
class Solution:
    """What optimal play of the rest of the settlement phase gives.

    ``scores``: final points along a principal variation (exact when ``exact``;
    otherwise a plausible line, clipped to the bounds). ``lower``/``upper``:
    proven bounds on each player's final points under optimal play (two
    players: the difference is played optimally; more: see the module doc).
    ``best_move``: a settler the player to move should place (None: must pass).
    """

    exact: bool
    scores: dict[str, int]
    lower: dict[str, int]
    upper: dict[str, int]
    best_move: Piece | None
    nodes: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        move = self.best_move
        return {
            "exact": self.exact,
            "scores": dict(self.scores),
            "lower": dict(self.lower),
            "upper": dict(self.upper),
            "best_move": None if move is None else
            {"q": move.hex.q, "r": move.hex.r, "sector": move.sector, "kind": move.kind, "player": move.player},
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


class _OutOfTime(Exception):
    pass


class _Game:
    """The search over one position's contested regions.

    Regions reachable by one player only are *private*: nobody else can ever
    enter them and nothing there changes anything elsewhere, so they collapse
    to a count of moves the owner may make whenever it likes (``PRIVATE_MOVE``);
    keeping them as optional moves, rather than simply adding them, keeps the
    tempo they give exact. The value of a state is the weighted sum of the
    settlers each player will still place: weights +1 (root) and -1 (the other)
    for two players, +1 and 0 for paranoid search.
    """

    def __init__(self, index: PlainsIndex, weights: tuple[int, ...], deadline: float | None):
        self.index = index
        self.neighbours = index.neighbours
        self.same_tile = tuple(index.same_tile(s) for s in range(len(index.segments)))
        self.weights = weights
        self.players = len(weights)
        self.deadline = deadline
        self.table: dict[State, tuple[int, int, int | None]] = {}
        self.solo_table: dict[tuple[int, int], int] = {}
        self.nodes = 0
        self.history: list[dict[int, int]] = [{} for _ in weights]

    # -- helpers -------------------------------------------------------------

    def solo(self, frontier: int, free: int) -> int:
        key = (frontier & free, free)
        value = self.solo_table.get(key)
        if value is None:
            value = self.solo_table[key] = solo_maximum(self.index, frontier, free)
        return value

    def player_bounds(self, state: State, exact: bool = False) -> tuple[list[int], list[int]]:
        """Per player, the fewest and the most settlers it will still place.

        Most: the tiles its flood reaches (``exact``: its solo maximum). Fewest:
        its private moves plus what it can settle alone through tiles no other
        player's flood reaches (nobody can take those from it).
        """
        free, frontier, left, private, _ = state
        index = self.index
        reach = [index.tiles_in(index.reach(f, free)) if n else 0 for f, n in zip(frontier, left)]
        lows, highs = [], []
        for i, (f, n, extra) in enumerate(zip(frontier, left, private)):
            if not reach[i]:
                lows.append(min(n, extra))
                highs.append(min(n, extra))
                continue
            others = 0
            for j, tiles in enumerate(reach):
                if j != i:
                    others |= tiles
            own = index.segments_of_tiles(reach[i] & ~others) & free
            lows.append(min(n, extra + (self.solo(f, own) if own else 0)))
            highs.append(min(n, extra + (self.solo(f, free) if exact else reach[i].bit_count())))
        return lows, highs

    def bounds(self, state: State) -> tuple[int, int]:
        """Static proven bounds on the value of ``state``."""
        lo = hi = 0
        for w, low, high in zip(self.weights, *self.player_bounds(state)):
            lo += w * (low if w > 0 else high)
            hi += w * (high if w > 0 else low)
        return lo, hi

    def moves(self, state: State) -> list[int]:
        """The mover's moves, most promising first: contested tiles, then by new reach."""
        free, frontier, left, private, turn = state
        if not left[turn]:
            return []
        mine = frontier[turn] & free
        others = 0
        for i, f in enumerate(frontier):
            if i != turn and left[i]:
                others |= f
        neighbours = self.neighbours
        history = self.history[turn]
        index = self.index
        contested = index.segments_of_tiles(index.tiles_in(index.reach(others, free)))
        ranked = sorted(bits(mine), key=lambda s: (not (others >> s) & 1, not (contested >> s) & 1,
                                                    -(neighbours[s] & contested & ~mine).bit_count(),
                                                    -history.get(s, 0)))
        if private[turn]:
            ranked.append(PRIVATE_MOVE)
        return ranked

    def child(self, state: State, move: int) -> State:
        free, frontier, left, private, turn = state
        left = left[:turn] + (left[turn] - 1,) + left[turn + 1:]
        nxt = (turn + 1) % self.players
        if move == PRIVATE_MOVE:
            private = private[:turn] + (private[turn] - 1,) + private[turn + 1:]
            if left[turn]:
                return free, frontier, left, private, nxt
            return self.normalised(free, frontier, left, private, nxt, free)
        taken = self.same_tile[move]
        free &= ~taken
        grown = frontier[turn] | self.neighbours[move]
        frontier = tuple((grown if i == turn else f) & free for i, f in enumerate(frontier))
        # Only the region of the settled tile can split, unless the mover ran out of settlers.
        touched = free if not left[turn] else self.index.adjacent_to(taken) & free
        return self.normalised(free, frontier, left, private, nxt, touched)

    def normalised(self, free: int, frontier: tuple[int, ...], left: tuple[int, ...], private: tuple[int, ...],
                   turn: int, touched: int) -> State:
        """Drop the regions around ``touched`` that no one can enter; fold one-player regions into private moves."""
        private = list(private)
        for region in self.index.regions(free, touched):
            entering = [i for i, f in enumerate(frontier) if f & region and left[i]]
            if len(entering) > 1:
                continue
            free &= ~region
            if entering:
                owner = entering[0]
                private[owner] += self.solo(frontier[owner], region)
        return free, tuple(f & free for f in frontier), left, tuple(private), turn

    def closed_form(self, state: State) -> list[int] | None:
        """Settlers each player will place, when at most one player can still move in shared land."""
        free, frontier, left, private, _ = state
        active = [i for i in range(self.players) if left[i] and frontier[i] & free]
        if len(active) > 1:
            return None
        counts = [min(left[i], private[i]) for i in range(self.players)]
        for i in active:
            counts[i] = min(left[i], private[i] + self.solo(frontier[i], free))
        return counts

    # -- search --------------------------------------------------------------

    def value(self, state: State, alpha: int, beta: int) -> int:
        """Fail-soft alpha-beta value of ``state`` within ``(alpha, beta)``."""
        self.nodes += 1
        if self.deadline is not None and not self.nodes % _CHECK_EVERY and time.perf_counter() > self.deadline:
            raise _OutOfTime
        counts = self.closed_form(state)
        if counts is not None:
            return _weighted(self.weights, counts)
        entry = self.table.get(state)
        if entry is not None:
            lo, hi, hint = entry
        else:
            (lo, hi), hint = self.bounds(state), None
        if lo >= beta or lo == hi:
            return lo
        if hi <= alpha:
            return hi
        if entry is not None:  # search only inside what an earlier search proved
            alpha, beta = max(alpha, lo), min(beta, hi)
        turn = state[4]
        moves = self.moves(state)
        if not moves:  # the player to move must pass
            return self.value(state[:4] + ((turn + 1) % self.players,), alpha, beta)
        if hint is not None and hint in moves:
            moves.remove(hint)
            moves.insert(0, hint)
        w = self.weights[turn]
        maximise = turn == 0
        best = None
        best_value = -10**9 if maximise else 10**9
        a, b = alpha, beta
        for move in moves:
            v = w + self.value(self.child(state, move), a - w, b - w)
            if maximise and v > best_value or not maximise and v < best_value:
                best_value, best = v, move
                if maximise:
                    a = max(a, v)
                else:
                    b = min(b, v)
                if a >= b:
                    history = self.history[turn]
                    history[move] = history.get(move, 0) + 1
                    break
        # Record what this search proved, on top of the bounds known before it.
        if best_value <= alpha:
            hi = min(hi, best_value)
        elif best_value >= beta:
            lo = max(lo, best_value)
        else:
            lo = hi = best_value
        self.table[state] = (lo, hi, best)
        return best_value

    def optimal_move(self, state: State, v: int) -> int | None:
        """A move of the player to move that keeps the value ``v`` of ``state`` (None: no move)."""
        w = self.weights[state[4]]
        for move in self.moves(state):
            if self.value(self.child(state, move), v - w - 1, v - w + 1) == v - w:
                return move
        return None

    def principal_counts(self, state: State, v: int) -> list[int]:
        """Settlers each player places along a line of optimal play from ``state`` (value ``v``)."""
        counts = [0] * self.players
        while True:
            closed = self.closed_form(state)
            if closed is not None:
                return [c + d for c, d in zip(counts, closed)]
            turn = state[4]
            moves = self.moves(state)
            if not moves:
                state = state[:4] + ((turn + 1) % self.players,)
                continue
            w = self.weights[turn]
            move = self.optimal_move(state, v)
            counts[turn] += 1
            state, v = self.child(state, move), v - w

    def playout_counts(self, state: State) -> list[int]:
        """Settlers each player places when every player takes its first-ranked move."""
        counts = [0] * self.players
        while (closed := self.closed_form(state)) is None:
            moves = self.moves(state)
            if moves:
                counts[state[4]] += 1
                state = self.child(state, moves[0])
            else:
                state = state[:4] + ((state[4] + 1) % self.players,)
        return [c + d for c, d in zip(counts, closed)]


def _private_move(index: PlainsIndex, player: str, frontier: int, regions: list[int]) -> Piece:
    """A first settler of an optimal solo filling of one of the player's private regions."""
    for region in regions:
        total = solo_maximum(index, frontier, region)
        for s in bits(frontier & region):
            rest = region & ~index.same_tile(s)
            if total and 1 + solo_maximum(index, (frontier | index.neighbours[s]) & rest, rest) == total:
                return index.piece(s, "settler", player)
    raise AssertionError("a private move was counted in a region with no move")


def _weighted(weights: Sequence[int], counts: Sequence[int]) -> int:
    return sum(w * c for w, c in zip(weights, counts))


def solve(board: Board, to_move: str | None = None, *, players: Sequence[str] | None = None,
          time_budget: float | None = None, rules: Rules | None = None) -> Solution:
    """Solve the rest of the settlement phase of ``board`` for ``to_move``.

    ``players``: who plays, in turn order (default: the board's players);
    ``to_move`` (default: the board's ``to_move``, else the first player) moves
    first. ``time_budget`` in seconds; when it runs out the answer has
    ``exact=False`` and the bounds proven so far.
    """
    started = time.perf_counter()
    players = tuple(board.players if players is None else players)
    to_move = to_move or board.to_move or (players[0] if players else None)
    if to_move is None:
        raise ValueError("the board has no players to solve for")
    if to_move not in players:
        players = players + (to_move,)
    first = players.index(to_move)
    order = players[first:] + players[:first]
    weights = (1, -1) if len(order) == 2 else (1,) + (0,) * (len(order) - 1)
    deadline = None if time_budget is None else started + time_budget

    pos = position(board, order, rules)
    index = pos.index
    private = [0] * len(order)
    private_regions: list[list[int]] = [[] for _ in order]
    shared = 0
    for region in index.regions(pos.free):
        entering = [i for i, p in enumerate(order) if pos.frontier[p] & region and pos.settlers_left[p]]
        if len(entering) == 1:
            owner = order[entering[0]]
            private[entering[0]] += solo_maximum(index, pos.frontier[owner], region)
            private_regions[entering[0]].append(region)
        elif entering:
            shared |= region
    # The search numbers only the shared segments: smaller bit sets, faster floods.
    search_index = index.subset(shared)
    root: State = ((1 << len(search_index.segments)) - 1,
                   tuple(index.translate(pos.frontier[p] & shared, search_index) for p in order),
                   tuple(pos.settlers_left[p] for p in order), tuple(private), 0)
    game = _Game(search_index, weights, deadline)

    lo, hi = game.bounds(root)
    guess = min(max(_weighted(weights, game.playout_counts(root)), lo), hi)
    proven: int | None = None  # a root move proven to reach the lower bound
    try:
        while lo < hi:  # MTD(f): null-window probes around the best guess
            probe = guess + 1 if guess == lo else guess
            guess = game.value(root, probe - 1, probe)
            if guess >= probe:
                lo, proven = guess, game.table.get(root, (0, 0, None))[2]
            else:
                hi = guess
        exact = True
    except _OutOfTime:
        exact = False

    points = current_points(board, order)
    lows, highs = game.player_bounds(root, exact=True)
    if len(order) == 2:  # tighten each player's bounds with the proven difference
        lows = [max(lows[0], lows[1] + lo), max(lows[1], lows[0] - hi)]
        highs = [min(highs[0], highs[1] + hi), min(highs[1], highs[0] - lo)]
    else:
        lows[0] = max(lows[0], lo)
    moves = game.moves(root)
    if exact:
        game.deadline = None  # the line of play re-searches a warm table: quick, and must finish
        best = game.optimal_move(root, lo)
        counts = game.principal_counts(root, lo)
    else:
        best = proven if proven is not None else (moves[0] if moves else None)
        counts = game.playout_counts(root)
    counts = [min(max(c, low), high) for c, low, high in zip(counts, lows, highs)]
    if best == PRIVATE_MOVE:
        best_move = _private_move(index, order[0], pos.frontier[order[0]], private_regions[0])
    else:
        best_move = None if best is None else search_index.piece(best, "settler", order[0])
    return Solution(
        exact=exact,
        scores={p: points[p] + c for p, c in zip(order, counts)},
        lower={p: points[p] + c for p, c in zip(order, lows)},
        upper={p: points[p] + c for p, c in zip(order, highs)},
        best_move=best_move,
        nodes=game.nodes,
        seconds=time.perf_counter() - started,
    )
