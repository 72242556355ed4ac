"""Time the geometry stages (quality, locate, lattice) on rendered 2016×1512 photos.

    python benchmarks/bench_lattice.py --count 20 --seed 500000

Prints the median and 90th percentile of each stage, and of a video-style
refit from the previous frame's lattice. Renders are made before timing starts.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=500_000)
    parser.add_argument("--width", type=int, default=2016)
    parser.add_argument("--height", type=int, default=1512)
    args = parser.parse_args()

    from fjords.errors import FjordsError
    from renderer import render_random
    from scanner.locate import TileTopNet
    from scanner.looks import find_lattice
    from scanner.quality import assess_quality

    photos = [render_random(s, width=args.width, height=args.height).image
              for s in range(args.seed, args.seed + args.count)]
    net = TileTopNet()
    # "lattice" is locate + fit, with the second looks where the first fit is doubtful.
    stages: dict[str, list[float]] = {"quality": [], "lattice": [], "total": [], "tracking": []}
    for image in photos:
        start = time.perf_counter()
        assess_quality(image)
        after_quality = time.perf_counter()
        try:
            fit = find_lattice(image, net)
        except FjordsError:
            continue
        end = time.perf_counter()
        find_lattice(image, net, previous=fit)
        stages["tracking"].append(time.perf_counter() - end)
        stages["quality"].append(after_quality - start)
        stages["lattice"].append(end - after_quality)
        stages["total"].append(end - start)
    for name, values in stages.items():
        if values:
            print(f"{name:9s} median {np.median(values) * 1000:6.0f} ms   p90 {np.quantile(values, 0.9) * 1000:6.0f} ms")


if __name__ == "__main__":
    main()
