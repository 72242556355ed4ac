"""Solver time against the number of contested empty tiles, on simulated two-player games.

Positions come from seeded games of ``fjords.simulate`` (both editions, random
policy): for each target size, the first settlement-phase position of a game
whose contested empty tiles number exactly that size. Run:

    nice -n 10 python benchmarks/bench_solver.py [--positions 9] [--budget 60]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Iterator

from fjords.board import Board
from fjords.simulate import simulate_states
from fjords.solver import solve
from fjords.territory import territory

SIZES = (10, 15, 20, 25)
EDITIONS = ("classic", "2022")


def positions(size: int, count: int, max_games: int) -> Iterator[tuple[int, str, Board]]:
    """Up to ``count`` settlement positions with ``size`` contested tiles, one per game."""
    found = 0
    for game in range(max_games):
        seed, edition = game // 2, EDITIONS[game % 2]
        for board in simulate_states(edition, 2, seed):
            if board.phase != "settlement":
                continue
            contested = len(territory(board).contested)
            if contested == size:
                yield seed, edition, board
                found += 1
                break
            if contested < size:
                break
        if found == count:
            return


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=9, help="positions per size")
    parser.add_argument("--budget", type=float, default=60.0, help="time budget per solve, seconds")
    parser.add_argument("--games", type=int, default=600, help="most games simulated per size")
    parser.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    parser.add_argument("--verbose", action="store_true", help="one line per position")
    args = parser.parse_args()

    print(f"{'contested':>9} {'positions':>9} {'exact':>5} {'median s':>9} {'max s':>8} {'median nodes':>12}")
    for size in args.sizes:
        times, nodes, exact = [], [], 0
        for seed, edition, board in positions(size, args.positions, args.games):
            started = time.perf_counter()
            solution = solve(board, time_budget=args.budget)
            times.append(time.perf_counter() - started)
            nodes.append(solution.nodes)
            exact += solution.exact
            if args.verbose:
                print(f"    {edition} seed {seed}: {times[-1]:.3f} s, {solution.nodes} nodes, "
                      f"exact {solution.exact}, scores {solution.scores}")
        if not times:
            print(f"{size:>9} {0:>9} (no simulated position has exactly {size} contested tiles)")
            continue
        print(f"{size:>9} {len(times):>9} {exact:>5} {statistics.median(times):>9.3f} {max(times):>8.3f} "
              f"{statistics.median(nodes):>12.0f}")


if __name__ == "__main__":
    main()
