"""Does this machine draw the held-out photos as the machine the figures were measured on did?

The held-out render sets are not kept: every session renders them again from their seeds
(``benchmarks/measure_scanner.sh``). With the pinned libraries (``benchmarks/constraints.txt``)
the renderer's pixels can still differ a little between CPUs, and a set drawn otherwise reads a
little otherwise (``docs/benchmarks.md``, sixty-seventh session). This renders the first photos of
each held-out set exactly as ``fjords render`` does and prints the SHA-256 of each JPEG file; compare
them with the ones ``docs/benchmarks.md`` records before comparing figures across sessions.
Run: ``python benchmarks/render_fingerprint.py [--count N] [--json]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import tempfile
from pathlib import Path

from fjords_cli.main import main as fjords

# The first seed and the options of each held-out set, as measure_scanner.sh renders them.
HELD_OUT_SETS = {
    "own": (1000000, []),
    "bold": (1400000, ["--style", "patchwork"]),
    "copy1": (1200100, ["--style", "vintage", "--colours", "orange,purple", "--copy", "1"]),
}


def fingerprints(count: int) -> dict[str, list[str]]:
    """The first 16 hex digits of the SHA-256 of the first ``count`` JPEG files of each held-out set."""
    out = {}
    for name, (seed, options) in HELD_OUT_SETS.items():
        with tempfile.TemporaryDirectory() as folder:
            if fjords(["render", "--count", str(count), "--seed", str(seed), "--out", folder, *options]) != 0:
                raise SystemExit(f"render of {name} failed")
            out[name] = [hashlib.sha256(photo.read_bytes()).hexdigest()[:16]
                         for photo in sorted(Path(folder).glob("*.jpg"))]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3, help="photos per set (default 3)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    prints = fingerprints(args.count)
    if args.json:
        print(json.dumps(prints, indent=1))
        return
    for name, digests in prints.items():
        print(f"{name:6s} {' '.join(digests)}")


if __name__ == "__main__":
    main()
