"""Video frames: the time to scan a frame that follows the previous one, against scanning it afresh.

    python benchmarks/bench_video.py --count 8 --seed 500000

For each rendered 2016×1512 table, a short clip as an overhead camera films a still board:
three frames of sensor noise (σ = 2 levels, new noise each frame), two with a hand (a
skin-coloured ellipse two tile radii across) over the board's middle tile, and one
after the hand has gone. Every frame is scanned afresh and following the previous
frame's scan (``Scanner.scan(frame, previous=...)``), and following only the previous
lattice (its readings dropped). Prints the median seconds of each, the followed frame's
ratio to the fresh one, the share of positions whose sector readings (tiles, and the gaps where a
missed tile may lie) and of positions whose piece readings were reused, and the mean errors against the render's truth
(:func:`fjords.compare.compare`) of the frames scanned afresh, followed, and followed
with the previous lattice alone (every tile read again), so that what reusing
readings costs in accuracy is seen apart from what following the lattice does.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace

import cv2
import numpy as np


def clip(image: np.ndarray, hand_at: tuple[int, int], hand_radius: int, rng: np.random.Generator) -> list:
    """The frames (name, image) of one clip of ``image``."""
    def noisy(frame: np.ndarray) -> np.ndarray:
        return np.clip(frame + rng.normal(0.0, 2.0, frame.shape), 0, 255).astype(np.uint8)

    hand = image.copy()
    cv2.ellipse(hand, hand_at, (hand_radius, int(hand_radius * 0.7)), 30, 0, 360, (120, 160, 215), -1)
    return [("still", noisy(image)) for _ in range(3)] + [("hand", noisy(hand)) for _ in range(2)] + \
        [("still", noisy(image))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--seed", type=int, default=500_000)
    args = parser.parse_args()

    from fjords.board import Board
    from fjords.compare import compare
    from fjords.errors import FjordsError
    from renderer import render_random
    from scanner.pipeline import Scanner

    scanner = Scanner()
    rng = np.random.default_rng(args.seed)
    fresh_s, followed_s, read_again_s = ({"still": [], "hand": []} for _ in range(3))
    reused, errors = [], []
    for seed in range(args.seed, args.seed + args.count):
        render = render_random(seed, width=2016, height=1512)
        image, truth = render.image, Board.from_json(render.truth)
        try:
            previous = scanner.scan(image)
        except FjordsError:
            continue
        tiles = [c for c in previous.lattice.cells.values() if c.visible >= 0.95]
        middle = min(tiles, key=lambda c: np.linalg.norm(np.asarray(c.center_px) - np.mean(
            [t.center_px for t in tiles], axis=0)))
        radius = float(np.linalg.norm(np.asarray(middle.corners_px) - middle.center_px, axis=1).mean())
        for kind, frame in clip(image, tuple(int(v) for v in middle.center_px), int(radius), rng):
            start = time.perf_counter()
            fresh = scanner.scan(frame)
            fresh_s[kind].append(time.perf_counter() - start)
            start = time.perf_counter()
            read_again = scanner.scan(frame, previous=replace(previous, readings=None))
            read_again_s[kind].append(time.perf_counter() - start)
            start = time.perf_counter()
            previous = scanner.scan(frame, previous=previous)
            followed_s[kind].append(time.perf_counter() - start)
            looks = previous.readings.looks
            sectors_read = sum(look.sectors is not None for look in looks.values())  # tiles and gaps
            reused.append((previous.readings.reused["sectors"], sectors_read,
                           previous.readings.reused["pieces"], len(looks)))
            errors.append([compare(board, truth).errors for board in (fresh.board, previous.board, read_again.board)])
    for kind in ("still", "hand"):
        fresh_median, followed_median = statistics.median(fresh_s[kind]), statistics.median(followed_s[kind])
        print(f"{kind:5s} frames: {len(fresh_s[kind])}, median afresh {fresh_median:.3f} s, following the lattice "
              f"only {statistics.median(read_again_s[kind]):.3f} s, following {followed_median:.3f} s (ratio to "
              f"afresh {followed_median / fresh_median:.2f})")
    sums = np.sum(reused, axis=0)
    print(f"reused: sectors of {sums[0]} of {sums[1]} positions read ({sums[0] / sums[1]:.1%}), pieces of {sums[2]} of "
          f"{sums[3]} positions ({sums[2] / sums[3]:.1%})")
    fresh_errors, followed_errors, read_again_errors = np.mean(errors, axis=0)
    print(f"mean errors per board against the truth: afresh {fresh_errors:.2f}, following {followed_errors:.2f}, "
          f"following with every tile read again {read_again_errors:.2f}")


if __name__ == "__main__":
    main()
