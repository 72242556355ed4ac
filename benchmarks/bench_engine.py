"""Median time of legality + score + territory on 64-tile boards.

Boards are grown by ``tests/strategies.py`` (seeded, legal, start tiles marked, houses and settlers of
three players). Each timing runs on a fresh copy of the board, so nothing cached by an earlier call
is reused; "warm" repeats the call on one board. Times are CPU time of this process (robust on a
shared machine). Variants: start tiles unmarked (as a scanner reports), and a tenth of the sectors
unread (``?``), which makes the engine read the land twice.

Run: ``python benchmarks/bench_engine.py [--boards N] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from strategies import random_legal_board  # noqa: E402

from fjords import Board  # noqa: E402
from fjords.legality import legal_violations, undecided  # noqa: E402
from fjords.scoring import score  # noqa: E402
from fjords.territory import territory  # noqa: E402


def unmarked(board: Board) -> Board:
    return board.with_tiles([replace(t, start=False) for t in board.tiles.values()])


def unread(board: Board, share: float = 0.1, seed: int = 0) -> Board:
    rng = random.Random(seed)
    tiles = [replace(t, terrain="".join("?" if rng.random() < share else c for c in t.terrain))
             for t in board.tiles.values()]
    return board.with_tiles(tiles)


def median_ms(boards: list[Board], work: Callable[[Board], object], repeats: int, fresh: bool) -> float:
    times = []
    for board in boards:
        work(replace(board))  # warm the per-terrain caches, as a long-running program has them
        for _ in range(repeats):
            subject = replace(board) if fresh else board
            start = time.process_time()
            work(subject)
            times.append(time.process_time() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boards", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    boards = [random_legal_board(seed, n_tiles=64, players=3) for seed in range(args.boards)]
    sizes = sorted({len(b.tiles) for b in boards})
    print(f"{args.boards} boards of {sizes} tiles, {sum(len(b.pieces) for b in boards) / len(boards):.0f} pieces "
          f"on average; median of {args.repeats} runs each")

    def legality(b: Board) -> None:
        legal_violations(b)
        undecided(b)

    def everything(b: Board) -> None:
        legality(b)
        score(b)
        territory(b)

    variants = {"start marked": boards, "start unmarked": [unmarked(b) for b in boards],
                "10% sectors unread": [unread(unmarked(b), seed=n) for n, b in enumerate(boards)]}
    print(f"{'board':<20}{'legality ms':>13}{'score ms':>10}{'all ms':>9}{'all warm ms':>13}")
    for name, group in variants.items():
        row = [median_ms(group, legality, args.repeats, fresh=True), median_ms(group, score, args.repeats, fresh=True),
               median_ms(group, everything, args.repeats, fresh=True),
               median_ms(group, everything, args.repeats, fresh=False)]
        print(f"{name:<20}" + "".join(f"{v:>{w}.2f}" for v, w in zip(row, (13, 10, 9, 13))))


if __name__ == "__main__":
    main()
