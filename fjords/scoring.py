"""Points as a board stands, rune-stone bonuses of the 2022 edition, and the classic three-round match.

One point per settler (a classic field, a 2022 Viking); houses score nothing.
A settler that breaks a rule still scores: legality reports the break, scoring
counts what is on the table (spec, "Score"). The 2022 rune stones add bonuses
by our own reading of the variant, written down in ``docs/rules.md``
("Scoring"): each stone rewards the players whose settlers stand on the tiles
around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping, Sequence

from fjords.board import Board, Piece


@dataclass(frozen=True)
class RuneRule:
    """What a rune stone gives: ``points`` to the player with the most settlers around it
    (``majority``; a tie splits them, rounded down), or ``points`` to every player with a
    settler around it (not ``majority``)."""

    points: int
    majority: bool


RUNE_RULES: Mapping[str, RuneRule] = MappingProxyType({
    "thor": RuneRule(points=3, majority=True),   # the all-mountain tile: hardest ground to surround
    "laguz": RuneRule(points=2, majority=True),  # water
    "odin": RuneRule(points=2, majority=True),   # a hole in the layout
    "gyfu": RuneRule(points=1, majority=False),  # a gift: to every neighbour
})


@dataclass(frozen=True)
class ScoreLine:
    """One player's points: settlers on the board, rune-stone bonus, and their sum."""

    settlers: int
    rune_bonus: int = 0

    @property
    def total(self) -> int:
        return self.settlers + self.rune_bonus

    def to_json(self) -> dict[str, int]:
        return {"settlers": self.settlers, "rune_bonus": self.rune_bonus, "total": self.total}


def score(board: Board) -> dict[str, int]:
    """Points per player, for every player with a house or settler on the board."""
    return {player: line.total for player, line in score_breakdown(board).items()}


def score_breakdown(board: Board) -> dict[str, ScoreLine]:
    """Settlers, rune-stone bonus and total per player, in order of the players' first pieces."""
    players = list(dict.fromkeys(p.player for p in board.pieces if p.is_player_piece and p.player is not None))
    settlers = {player: 0 for player in players}
    for piece in board.pieces:
        if piece.kind == "settler" and piece.player in settlers:
            settlers[piece.player] += 1
    bonus = rune_bonuses(board)
    return {player: ScoreLine(settlers[player], bonus.get(player, 0)) for player in players}


def rune_bonuses(board: Board) -> dict[str, int]:
    """Bonus points per player from the rune stones (2022 edition only; players without a bonus omitted)."""
    if board.edition != "2022":
        return {}
    bonus: dict[str, int] = {}
    for stone in board.pieces:
        rule = RUNE_RULES.get(infer_rune(board, stone)) if stone.kind == "runestone" else None
        if rule is None:
            continue
        around = _settlers_around(board, stone)
        if not around:
            continue
        if rule.majority:
            most = max(around.values())
            leaders = [p for p, n in around.items() if n == most]
            share = {p: rule.points // len(leaders) for p in leaders}
        else:
            share = {p: rule.points for p in around}
        for player, points in share.items():
            if points:
                bonus[player] = bonus.get(player, 0) + points
    return bonus


def infer_rune(board: Board, stone: Piece) -> str:
    """The stone's rune: its own ``rune``, else read from where it stands.

    Odin on an empty lattice position (or with no sector), Thor on an all-mountain tile, Laguz on a
    sea sector, Gyfu anywhere else. On an unread sector the tile's read letters decide: only
    mountain → Thor, only sea → Laguz, otherwise Gyfu.
    """
    if stone.rune:
        return stone.rune
    tile = board.tiles.get(stone.hex)
    if tile is None or stone.sector is None:
        return "odin"
    letter = tile.terrain[stone.sector]
    read = set(tile.terrain) - {"?"}
    if letter == "?":
        letter = next(iter(read)) if len(read) == 1 else "P"
    if letter == "M" and read == {"M"}:
        return "thor"
    return "laguz" if letter == "S" else "gyfu"


def _settlers_around(board: Board, stone: Piece) -> dict[str, int]:
    """Settlers per player on the six positions next to the stone, in order of first appearance."""
    around: dict[str, int] = {}
    for h in stone.hex.neighbours():
        for piece in board.pieces_at(h):
            if piece.kind == "settler" and piece.player is not None:
                around[piece.player] = around.get(piece.player, 0) + 1
    return around


def winners(scores: Mapping[str, int]) -> tuple[str, ...]:
    """The players with the most points (several on a tie: the 2022 edition shares a win)."""
    if not scores:
        return ()
    best = max(scores.values())
    return tuple(p for p, s in scores.items() if s == best)


@dataclass(frozen=True)
class MatchResult:
    """A classic match: points per round, totals, each round's sole winner (None on a tie) and the winners."""

    rounds: tuple[Mapping[str, int], ...]
    totals: dict[str, int]
    round_winners: tuple[str | None, ...]
    winners: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"rounds": [dict(r) for r in self.rounds], "totals": dict(self.totals),
                "round_winners": list(self.round_winners), "winners": list(self.winners), "reason": self.reason}


def match_result(rounds: Sequence[Mapping[str, int]]) -> MatchResult:
    """The classic match of three rounds: most points in all wins; on a tie, the tied player who won
    two rounds (a majority of the rounds) wins; otherwise the win is shared.

    A player missing from a round scored 0 in it.
    """
    if not rounds:
        raise ValueError("a match needs at least one round")
    players = list(dict.fromkeys(p for r in rounds for p in r))
    totals = {p: sum(r.get(p, 0) for r in rounds) for p in players}
    round_winners = tuple(_sole_winner(r) for r in rounds)
    leaders = winners(totals)
    if len(leaders) == 1:
        return MatchResult(tuple(rounds), totals, round_winners, leaders, "most points")
    majority = len(rounds) // 2 + 1
    decided = tuple(p for p in leaders if round_winners.count(p) >= majority)
    if decided:
        return MatchResult(tuple(rounds), totals, round_winners, decided,
                           f"tied on points; won {majority} of {len(rounds)} rounds")
    return MatchResult(tuple(rounds), totals, round_winners, leaders, "tied on points and rounds: shared win")


def _sole_winner(points: Mapping[str, int]) -> str | None:
    top = winners(points)
    return top[0] if len(top) == 1 else None
