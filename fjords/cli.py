"""Engine subcommands of ``fjords``: check, score, territory, solve (and simulate).

Readable tables by default, ``--json`` for programs. Exit codes: 0 success
(``check``: legal), 1 ``check`` found violations, 2 unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable

from fjords.board import Board
from fjords.boardjson import FormatError, parse_board, read_board_file
from fjords.cli_simulate import register as register_simulate
from fjords.legality import Violation, undecided
from fjords.rules import Rules
from fjords.scoring import match_result, score_breakdown
from fjords.solver import solve
from fjords.table import format_table
from fjords.violation import tile_name


def register(subparsers: argparse._SubParsersAction) -> None:
    check_parser = _board_command(subparsers, "check", "Report every rule the board breaks (exit 1 when any).",
                                  run_check)
    check_parser.add_argument("--epic", action="store_true", help="the 2022 two-player epic variant's supply")
    score_parser = subparsers.add_parser("score", help="Points per player; three classic boards give the match result.")
    score_parser.add_argument("boards", nargs="+", metavar="BOARD.json",
                              help="one board, or three rounds of a classic match")
    score_parser.add_argument("--json", action="store_true", help="print JSON for programs")
    score_parser.set_defaults(run=run_score)
    _board_command(subparsers, "territory", "Secured, contested and dead land in the settlement phase.", run_territory)
    solve_parser = _board_command(subparsers, "solve", "Final scores under perfect play and the best next move.",
                                  run_solve)
    solve_parser.add_argument("--to-move", metavar="PLAYER", help="the player to move (default: the board's to_move)")
    solve_parser.add_argument("--time", type=float, default=None, metavar="SECONDS",
                              help="time budget; when it runs out, proven bounds are printed instead")
    register_simulate(subparsers)


def _board_command(subparsers: argparse._SubParsersAction, name: str, help_text: str,
                   run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(name, help=help_text, description=help_text)
    parser.add_argument("board", metavar="BOARD.json", help="a fjords-board/1 document ('-' reads stdin)")
    parser.add_argument("--json", action="store_true", help="print JSON for programs")
    parser.set_defaults(run=run)
    return parser


def load_board(path: str) -> Board:
    if path == "-":
        try:
            return parse_board(sys.stdin.buffer.read())
        except OSError as exc:
            raise FormatError(f"cannot read standard input: {exc}") from None
    return read_board_file(path)


def emit_json(value: Any) -> None:
    json.dump(value, sys.stdout, indent=2)
    sys.stdout.write("\n")


def run_check(args: argparse.Namespace) -> int:
    board = load_board(args.board)
    rules = _rules(board, args.epic)
    violations = board.legal_violations(rules)
    unsure = undecided(board, rules)
    score = board.score()
    if args.json:
        emit_json({"legal": not violations, "violations": [_violation_json(v) for v in violations],
                   "undecided": [_violation_json(v) for v in unsure], "score": score})
    else:
        print(f"{len(board.tiles)} tiles, {len(board.pieces)} pieces, {board.edition} edition")
        if violations:
            print(f"ILLEGAL: {len(violations)} violation(s)")
            for v in violations:
                print(f"  [{v.rule}] {v.message}")
        else:
            print("legal")
        for v in unsure:
            print(f"  undecided [{v.rule}] {v.message}")
        print("score: " + (", ".join(f"{p} {s}" for p, s in score.items()) or "no pieces"))
    return 1 if violations else 0


def _violation_json(violation: Violation) -> dict[str, Any]:
    """A violation as ``check --json`` prints it: rule, message and tiles (``to_json`` adds the pieces)."""
    return {key: value for key, value in violation.to_json().items() if key in ("rule", "message", "tiles")}


def _rules(board: Board, epic: bool) -> Rules:
    try:
        return Rules.for_edition(board.edition, epic=epic)
    except ValueError as exc:
        raise FormatError(str(exc)) from None


def run_score(args: argparse.Namespace) -> int:
    boards = [load_board(p) for p in args.boards]
    if len(boards) not in (1, 3):
        raise FormatError("give one board, or the three rounds of a classic match")
    breakdowns = [score_breakdown(b) for b in boards]
    if len(boards) == 1:
        lines = breakdowns[0]
        if args.json:
            emit_json({p: line.to_json() for p, line in lines.items()})
        else:
            rows = [(p, line.settlers, line.rune_bonus, line.total) for p, line in lines.items()]
            print(format_table(("player", "settlers", "rune bonus", "total"), rows))
        return 0
    if any(b.edition != "classic" for b in boards):
        raise FormatError("a three-round match is the classic edition's; all three boards must be classic")
    result = match_result([{p: line.total for p, line in lines.items()} for lines in breakdowns])
    if args.json:
        emit_json(result.to_json())
    else:
        players = sorted(result.totals)
        rows = [(f"round {i + 1}", *(rnd.get(p, 0) for p in players)) for i, rnd in enumerate(result.rounds)]
        rows.append(("total", *(result.totals[p] for p in players)))
        print(format_table(("", *players), rows))
        print(f"winner: {' and '.join(result.winners)} ({result.reason})")
    return 0


def run_territory(args: argparse.Namespace) -> int:
    board = load_board(args.board)
    terr = board.territory()
    if args.json:
        emit_json(terr.to_json())
        return 0
    rows = [(p, terr.points.get(p, 0), len(terr.secured.get(p, ())), terr.secured_minimum.get(p, 0),
             terr.reachable_maximum.get(p, 0)) for p in sorted(set(terr.points) | set(terr.secured))]
    print(format_table(("player", "points", "secured tiles", "secured minimum", "reachable maximum"), rows))
    contested = ", ".join(tile_name(h) for h in sorted(terr.contested))
    print(f"contested tiles: {len(terr.contested)}" + (f"  {contested}" if contested else ""))
    print(f"dead tiles: {len(terr.dead)}")
    return 0


def run_solve(args: argparse.Namespace) -> int:
    board = load_board(args.board)
    to_move = args.to_move or board.to_move
    if to_move is None:
        raise FormatError("say who is to move: --to-move PLAYER (or to_move in the document)")
    if to_move not in board.players:
        raise FormatError(f"{to_move!r} has no piece on the board; players are {', '.join(board.players) or 'none'}")
    if args.time is not None and not args.time > 0:  # also refuses nan
        raise FormatError("--time must be a positive number of seconds")
    solution = solve(board, to_move, time_budget=args.time)
    if args.json:
        emit_json(solution.to_json())
        return 0
    kind = "exact" if solution.exact else "bounds (time ran out)"
    rows = [(p, solution.scores.get(p, "") if solution.exact else "", solution.lower[p], solution.upper[p])
            for p in solution.lower]
    print(f"{kind}; {solution.nodes} nodes in {solution.seconds:.3f} s")
    print(format_table(("player", "final score", "at least", "at most"), rows))
    move = solution.best_move
    print("best move: " + ("pass" if move is None else
                           f"{move.kind} of {move.player} on ({move.hex.q}, {move.hex.r}) sector {move.sector}"))
    return 0
