"""How far the lattice fit puts the tiles in view from their true corners, on folders of rendered photos.

    python benchmarks/bench_geometry.py DIR [DIR ...] [--in-view 0.95] [--json]

Each DIR holds ``NAME.jpg`` + ``NAME.json`` (``fjords render --out DIR``). Every
photo goes through locate + lattice (:func:`scanner.looks.find_lattice`, as a
scan does) and is scored by :func:`scanner.lattice_eval.score_fit` against its
true tiles at least ``--in-view`` in view. A tile's error is its six corners'
mean distance from the true ones, in true tile radii. Prints the tiles matched,
adjacency errors, the mean error, how many tiles are 0.05, 0.1 and 0.2 radii or
more off (a tenth of a radius already puts sector windows on the neighbours'
print), and the photos with the most tiles 0.1 off.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import cv2
import numpy as np

from fjords.errors import FjordsError
from scanner.lattice_eval import GeometryScore, score_fit

OFF_RADII = (0.05, 0.1, 0.2)


def photo_geometry(image: np.ndarray, truth: dict, net, in_view: float) -> dict:
    """One photo's per-tile corner errors (true radii), matched and true tiles in view, adjacency errors, seconds."""
    from scanner.looks import find_lattice

    start = time.perf_counter()
    try:
        cells = find_lattice(image, net).cells
    except FjordsError:
        cells = {}
    seconds = time.perf_counter() - start
    seen = {"tiles": [t for t in truth["tiles"] if "corners_px" in t and t.get("visible", 1.0) >= in_view]}
    score = GeometryScore()
    score_fit(cells, seen, score)
    errors = np.asarray(score.corner_errors).reshape(-1, 6).mean(axis=1) if score.corner_errors else np.zeros(0)
    return {"tile_errors": [round(float(e), 4) for e in errors], "true_tiles": score.true_tiles,
            "matched": score.matched, "adjacency_errors": score.adjacency_errors, "seconds": round(seconds, 3)}


def summary(photos: dict[str, dict]) -> dict:
    """Pooled figures of :func:`photo_geometry` results."""
    errors = np.concatenate([np.asarray(p["tile_errors"], dtype=float) for p in photos.values()] or [np.zeros(0)])
    worst = sorted(photos, key=lambda n: -sum(e >= 0.1 for e in photos[n]["tile_errors"]))[:5]
    return {
        "photos": len(photos),
        "true_tiles": sum(p["true_tiles"] for p in photos.values()),
        "matched": sum(p["matched"] for p in photos.values()),
        "adjacency_errors": sum(p["adjacency_errors"] for p in photos.values()),
        "mean_error": round(float(errors.mean()), 4) if errors.size else 0.0,
        **{f"tiles_off_{r}": int(np.sum(errors >= r)) for r in OFF_RADII},
        "median_seconds": round(float(np.median([p["seconds"] for p in photos.values()])), 3) if photos else 0.0,
        "most_off": {n: int(sum(e >= 0.1 for e in photos[n]["tile_errors"])) for n in worst},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    parser.add_argument("--in-view", type=float, default=0.95, help="least share of a true tile in view")
    parser.add_argument("--json", action="store_true", help="print the summary and every photo as JSON")
    args = parser.parse_args()

    from scanner.locate import TileTopNet

    net = TileTopNet()
    photos = {}
    for folder in args.dirs:
        for jpg in sorted(folder.glob("*.jpg")):
            truth = json.loads(jpg.with_suffix(".json").read_text())
            photos[f"{folder.name}/{jpg.name}"] = photo_geometry(cv2.imread(str(jpg)), truth, net, args.in_view)
    result = summary(photos)
    if args.json:
        print(json.dumps({"summary": result, "photos": photos}))
        return
    print(f"photos {result['photos']}: matched {result['matched']} of {result['true_tiles']} tiles in view, "
          f"adjacency errors {result['adjacency_errors']}")
    print(f"mean corner error {result['mean_error']:.4f} tile radii; tiles off by "
          + ", ".join(f">= {r}: {result[f'tiles_off_{r}']}" for r in OFF_RADII))
    print(f"locate + lattice median {result['median_seconds']:.3f} s; most tiles >= 0.1 off: {result['most_off']}")


if __name__ == "__main__":
    main()
