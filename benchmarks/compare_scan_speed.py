"""Paired scan times of two checkouts of this project on the same photos: is the change faster, and by how much.

    python benchmarks/compare_scan_speed.py OLD_CHECKOUT NEW_CHECKOUT PHOTO_OR_DIR [...] [--limit N]

One run of ``bench_scan_speed.py`` cannot see a change of a few per cent: on a shared two-core machine one code's
median over the same hundred photos moved by a tenth between runs (docs/benchmarks.md, seventieth session). Here
each checkout scans in a long-running worker process of its own, the two in turn on every photo (which goes first
alternates), so both meet the machine as it is at that moment, and the change is measured photo by photo: the
median of the new/old ratios of scan time, with the distribution-free 95 % interval ``bench_scan_speed.py`` gives a
median. A photo either checkout refuses (no board found) is left out of both.

Each worker runs in its checkout's folder with that folder on ``PYTHONPATH``: ``python -c`` puts the current folder
first on the import path, so workers started from one checkout would both import it (the seventy-first session
found its first paired timings had compared a code with itself that way).

With ``--follow`` the photos are video frames, one clip per folder: each frame, in the order given (a folder given
whole in name order), is scanned after the one before in its folder (``Scanner.scan(frame, previous=...)``, as the
overhead-camera overlay scans them), a folder's first frame afresh and left out of the figures. Unpaired runs of
``bench_video.py`` one after the other could not tell a 6 % change on this machine (the seventy-third session: the
second run of a pair was the slower in four of five).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench_scan_speed import median_interval, photos_in

WORKER = """
import sys, time
from pathlib import Path
from fjords.errors import FjordsError
from scanner.pipeline import Scanner
scanner = Scanner()
follow = sys.argv[1] == "follow"
if follow:
    from scanner.load import load_image
previous = folder = None
print("ready", flush=True)
for line in sys.stdin:
    path = Path(line.strip())
    first = path.parent != folder
    folder = path.parent
    start = time.perf_counter()
    try:
        if follow:  # load and scan as scan_path does, following the frame before (which older checkouts' scan_path cannot)
            loaded = load_image(path)
            previous = scanner.scan(loaded.image_bgr, previous=None if first else previous, scale=loaded.scale,
                                    original_size=loaded.original_size, file=path.name)
        else:
            scanner.scan_path(path)
    except FjordsError:
        previous = None
        print("refused", flush=True)
        continue
    print(("first " if follow and first else "") + str(time.perf_counter() - start), flush=True)
"""


class ScanWorker:
    """A scanner of one checkout in a process of its own: :meth:`seconds` times one scan."""

    def __init__(self, checkout: Path, follow: bool = False):
        self.process = subprocess.Popen([sys.executable, "-c", WORKER, "follow" if follow else "photos"],
                                        cwd=checkout, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env={**os.environ, "PYTHONPATH": str(checkout)})
        if self.process.stdout.readline().strip() != "ready":
            raise SystemExit(f"error: the scanner of {checkout} did not start (see the message above)")

    def seconds(self, photo: Path) -> float | None:
        """Seconds the scan of ``photo`` took; None where the scanner refused the photo, or where it was the first
        frame of its folder when following frames."""
        self.process.stdin.write(f"{photo.resolve()}\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline().strip()
        if not answer:
            raise SystemExit(f"error: the scanner stopped while scanning {photo} (see the message above)")
        return None if answer == "refused" or answer.startswith("first") else float(answer)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def paired_ratio(old: list[float], new: list[float]) -> tuple[float, float, float]:
    """Median of the per-photo ratios ``new / old`` and its 95 % interval (:func:`median_interval`)."""
    ratios = [after / before for before, after in zip(old, new, strict=True)]
    return (statistics.median(ratios), *median_interval(ratios))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path, help="checkout of the code before the change")
    parser.add_argument("new", type=Path, help="checkout of the code after it")
    parser.add_argument("paths", nargs="+", help="photos, or folders of them")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--follow", action="store_true",
                        help="the photos are video frames: scan each folder's frames each after the one before")
    args = parser.parse_args(argv)
    for checkout in (args.old, args.new):
        if not (checkout / "scanner" / "pipeline.py").is_file():
            parser.error(f"{checkout} is not a checkout of this project (no scanner/pipeline.py)")
    photos = photos_in(args.paths, args.limit)
    if len(photos) < 2:
        parser.error("give at least two photos")
    workers = [ScanWorker(args.old.resolve(), args.follow), ScanWorker(args.new.resolve(), args.follow)]
    try:
        # The first scan of a process loads what later scans reuse; following frames, each folder's first frame is
        # left out anyway.
        for worker in workers if not args.follow else []:
            worker.seconds(photos[0])
        times: list[tuple[float, float]] = []
        for n, photo in enumerate(photos):
            order = workers if n % 2 == 0 else workers[::-1]
            seconds = {worker: worker.seconds(photo) for worker in order}
            old, new = (seconds[worker] for worker in workers)
            if old is not None and new is not None:
                times.append((old, new))
    finally:
        for worker in workers:
            worker.close()
    if len(times) < 2:
        print("error: fewer than two photos were scanned by both checkouts", file=sys.stderr)
        return 1
    old, new = ([pair[k] for pair in times] for k in range(2))
    ratio, low, high = paired_ratio(old, new)
    print(f"{len(times)} {'frames following another' if args.follow else 'photos'} scanned by both (of {len(photos)})")
    for name, seconds in (("old", old), ("new", new)):
        print(f"{name}: median scan {statistics.median(seconds):.3f} s, mean {statistics.mean(seconds):.3f} s")
    print(f"new / old scan time, median per photo: {ratio:.3f} (95 % interval {low:.3f}-{high:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
