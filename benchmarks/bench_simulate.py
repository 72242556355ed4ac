"""Games per second of the simulator, per edition, player count and policy.

Run ``python benchmarks/bench_simulate.py [--games N]``; prints a table. Also
reports how many of the forty tiles a game lays on average, since a game that
sets many tiles aside makes a small, unrealistic board.
"""

from __future__ import annotations

import argparse
import statistics
import time

from fjords.simulate import simulate_states

CASES = (("classic", 2), ("2022", 2), ("2022", 4))
POLICIES = ("random", "greedy", "solver")


def measure(edition: str, players: int, policy: str, games: int) -> tuple[float, float, float, float]:
    """``(games per second, median ms, mean tiles laid, mean states)`` over seeds ``0..games-1``."""
    seconds, tiles, states = [], [], []
    for seed in range(games):
        start = time.perf_counter()
        boards = list(simulate_states(edition, players, seed, policy=policy))
        seconds.append(time.perf_counter() - start)
        tiles.append(len(boards[-1].tiles))
        states.append(len(boards))
    return games / sum(seconds), 1000 * statistics.median(seconds), statistics.mean(tiles), statistics.mean(states)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="games per row (seeds 0..N-1)")
    args = parser.parse_args()
    header = f"{'edition':8} {'players':>7} {'policy':7} {'games/s':>8} {'median ms':>9} {'tiles':>6} {'states':>6}"
    print(header)
    print("-" * len(header))
    for edition, players in CASES:
        for policy in POLICIES:
            rate, median_ms, tiles, states = measure(edition, players, policy, args.games)
            print(f"{edition:8} {players:7d} {policy:7} {rate:8.1f} {median_ms:9.1f} {tiles:6.1f} {states:6.1f}")


if __name__ == "__main__":
    main()
