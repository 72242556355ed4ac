"""``fjords simulate``: play one game by a policy and print its board."""

from __future__ import annotations

import argparse

from fjords.board import EDITIONS, Board
from fjords.errors import FjordsError
from fjords.simulate import POLICIES, simulate_game
from fjords.table import format_table


def register(subparsers: argparse._SubParsersAction) -> None:
    help_text = "Play a whole legal game (deterministic per seed) and print the board."
    parser = subparsers.add_parser("simulate", help=help_text, description=help_text)
    parser.add_argument("--edition", choices=EDITIONS, default="classic")
    parser.add_argument("--players", type=int, default=2, metavar="N", help="2 (classic), 2 to 4 (2022)")
    parser.add_argument("--seed", type=int, default=0, metavar="S")
    parser.add_argument("--policy", choices=POLICIES, default="random", help="how players choose moves")
    parser.add_argument("--runestones", action="store_true", help="the 2022 rune stone variant")
    parser.add_argument("--stop-fraction", type=float, default=None, metavar="F",
                        help="stop this share (0..1) of the way through the game")
    parser.add_argument("--json", action="store_true", help="print the fjords-board/1 document")
    parser.set_defaults(run=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    try:
        board = simulate_game(args.edition, args.players, args.seed, policy=args.policy,
                              stop_fraction=args.stop_fraction, runestones=args.runestones)
    except ValueError as exc:
        raise FjordsError(str(exc)) from None
    if args.json:
        print(board.dumps())
    else:
        print(board_summary(board))
    return 0


def board_summary(board: Board) -> str:
    """A readable table: the tiles, then per player the pieces and the score."""
    phase = board.phase or "unknown phase"
    lines = [f"{board.edition} edition, {phase}" + (f", {board.to_move} to move" if board.to_move else "")]
    occupant = {p.hex: p for p in board.pieces}
    rows = []
    for h in sorted(set(board.tiles) | set(occupant), key=lambda h: (h.r, h.q)):
        tile, piece = board.tiles.get(h), occupant.get(h)
        what = "" if piece is None else f"{piece.kind} {piece.player or piece.rune or ''}".strip()
        rows.append((f"({h.q}, {h.r})", "no tile" if tile is None else tile.terrain,
                     "start" if tile is not None and tile.start else "", what))
    lines.append(format_table(("tile", "terrain", "", "piece"), rows))
    score = board.score()
    rows = [(player, sum(p.kind == "house" and p.player == player for p in board.pieces),
             sum(p.kind == "settler" and p.player == player for p in board.pieces), score.get(player, 0))
            for player in board.players]
    lines.append("")
    lines.append(format_table(("player", "houses", "settlers", "score"), rows))
    return "\n".join(lines)
