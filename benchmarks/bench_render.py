"""How fast the renderer makes labelled photos on this machine.

Prints images per second at 2016×1512 and at 640×480 (one process, wall
clock), the CPU seconds each photo costs (all threads; unlike the wall clock
this barely changes when other jobs share the machine), the labelled crops
(tiles + pieces) those photos hold, and the time 50,000 crops would take with
every core busy. Run: ``python benchmarks/bench_render.py [--count N]``.
"""

from __future__ import annotations

import argparse
import os
import time

from renderer import render_random


def bench(width: int, height: int, count: int, first_seed: int = 1000) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and labelled crops per photo, after one warm-up render."""
    render_random(first_seed - 1, width=width, height=height)
    crops = 0
    start, cpu = time.perf_counter(), time.process_time()
    for seed in range(first_seed, first_seed + count):
        truth = render_random(seed, width=width, height=height).truth
        crops += len(truth["tiles"]) + len(truth["pieces"])
    return (time.perf_counter() - start) / count, (time.process_time() - cpu) / count, crops / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10, help="photos per size (default 10)")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    for width, height in ((2016, 1512), (640, 480)):
        seconds, cpu, crops = bench(width, height, args.count)
        minutes = 50_000 / crops * cpu / cores / 60
        print(f"{width}x{height}: {1 / seconds:.2f} images/s ({seconds:.2f} s wall, {cpu:.2f} s CPU each), "
              f"{crops:.0f} labelled crops per photo; 50,000 crops in {minutes:.1f} min of {cores} busy cores")


if __name__ == "__main__":
    main()
