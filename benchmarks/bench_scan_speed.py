"""Scan time as a ratio to JPEG decode time of the same photo, and peak memory.

    python benchmarks/bench_scan_speed.py PHOTO_OR_DIR [...] [--limit N] [--repeat R]

For each photo: the median time to decode its JPEG bytes with OpenCV, and the
median time of a whole ``Scanner.scan_path`` (load, quality, locate, lattice,
sectors, pieces, assemble), with the models loaded once beforehand as a
long-running scanner (the phone page, the overlay) would. Prints per-photo
figures, the medians, the ratio, the process's peak resident memory, and the median seconds of each stage
(``ScanResult.timings``: where a scan's time goes; the stages a scan runs on its second thread overlap the others,
so they add up to more than the scan). The median scan comes with a distribution-free 95 % interval
and the 90th percentile: scan times spread widely (a photo whose first look is not believed reads several
lattices), so a median of ten photos says little; ``docs/benchmarks.md`` uses a hundred.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from pathlib import Path

import cv2
import numpy as np
from scipy.stats import binom

from scanner.pipeline import Scanner

PHOTO_SUFFIXES = {".jpg", ".jpeg"}


def photos_in(paths: list[str], limit: int | None) -> list[Path]:
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        found += sorted(p for p in path.iterdir() if p.suffix.lower() in PHOTO_SUFFIXES) if path.is_dir() else [path]
    return found[:limit]


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float]:
    """Distribution-free interval for the median of the population ``values`` were drawn from: the order
    statistics a binomial(n, ½) count puts around it (the whole range for fewer than six values)."""
    ordered = sorted(values)
    n = len(ordered)
    k = max(int(binom.ppf((1.0 - level) / 2.0, n, 0.5)), 1) if n >= 6 else 1
    return ordered[k - 1], ordered[n - k]


def median_seconds(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    scanner = Scanner()
    decode_times, scan_times, stage_times = [], [], []
    print(f"{'photo':<28} {'size':>11} {'decode s':>9} {'scan s':>8} {'ratio':>6}")
    for photo in photos_in(args.paths, args.limit):
        data = np.frombuffer(photo.read_bytes(), np.uint8)
        decode = median_seconds(lambda: cv2.imdecode(data, cv2.IMREAD_COLOR), args.repeat)
        results = []
        scan = median_seconds(lambda: results.append(scanner.scan_path(photo)), args.repeat)
        stage_times.append({stage: statistics.median(r.timings.get(stage, 0.0) for r in results)
                            for stage in results[0].timings})
        height, width = cv2.imdecode(data, cv2.IMREAD_REDUCED_COLOR_2).shape[:2]
        decode_times.append(decode)
        scan_times.append(scan)
        print(f"{photo.name:<28} {f'{2 * width}x{2 * height}':>11} {decode:9.3f} {scan:8.3f} {scan / decode:6.1f}")
    decode, scan = statistics.median(decode_times), statistics.median(scan_times)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    low, high = median_interval(scan_times)
    print(f"median over {len(scan_times)} photos: decode {decode:.3f} s, scan {scan:.3f} s "
          f"(95 % interval {low:.3f}-{high:.3f} s; 90th percentile {np.percentile(scan_times, 90):.3f} s), "
          f"scan/decode {scan / decode:.1f}; peak memory {peak_mib:.0f} MiB")
    stages = {stage: statistics.median(times.get(stage, 0.0) for times in stage_times)
              for stage in dict.fromkeys(stage for times in stage_times for stage in times)}
    print("median seconds per stage: " + ", ".join(f"{stage} {seconds:.3f}" for stage, seconds in stages.items()))


if __name__ == "__main__":
    main()
