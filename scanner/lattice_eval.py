"""Measure the geometry stages on rendered photos against their truth.

A fitted tile matches the true tile whose centre is within half a tile radius
of its own. Over the matches, the rotation ``k`` and translation that map the
most fitted axial positions onto the true ones define the alignment (the spec
allows any rotation and translation, never a mirror); a match that disagrees
with it counts as an adjacency error. Corner errors are measured with the
corner numbering turned by ``k`` and expressed in true tile radii.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from fjords.errors import FjordsError


@dataclass
class GeometryScore:
    """Counts and errors pooled over photos."""

    true_tiles: int = 0
    fitted_tiles: int = 0
    matched: int = 0
    adjacency_errors: int = 0
    failures: int = 0
    corner_errors: list[float] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.matched / self.true_tiles if self.true_tiles else 1.0

    @property
    def precision(self) -> float:
        return self.matched / self.fitted_tiles if self.fitted_tiles else 1.0

    def summary(self) -> str:
        errors = np.asarray(self.corner_errors) if self.corner_errors else np.zeros(1)
        times = np.asarray(self.seconds) if self.seconds else np.zeros(1)
        return (f"photos {len(self.seconds)}  failures {self.failures}\n"
                f"tile recall {self.recall:.5f} ({self.matched}/{self.true_tiles})  "
                f"precision {self.precision:.5f} ({self.matched}/{self.fitted_tiles})\n"
                f"adjacency errors {self.adjacency_errors}\n"
                f"corner error / tile radius: median {np.median(errors):.4f}  p99 {np.quantile(errors, 0.99):.4f}  "
                f"max {errors.max():.4f}\n"
                f"time locate+lattice: median {np.median(times) * 1000:.0f} ms  "
                f"p90 {np.quantile(times, 0.9) * 1000:.0f} ms")


def score_fit(cells: dict, truth: dict, score: GeometryScore) -> list[str]:
    """Add one photo's fit to ``score``; returns notes on what went wrong."""
    true_tiles = [t for t in truth["tiles"] if "corners_px" in t]
    score.true_tiles += len(true_tiles)
    score.fitted_tiles += len(cells)
    if not true_tiles or not cells:
        return [f"{len(true_tiles)} true tiles, {len(cells)} fitted"]
    true_centres = np.array([np.mean(t["corners_px"], axis=0) for t in true_tiles])
    true_radius = np.array([np.max(np.linalg.norm(np.asarray(t["corners_px"]) - c, axis=1))
                            for t, c in zip(true_tiles, true_centres)])
    fitted = list(cells.values())
    fitted_centres = np.array([np.mean(c.corners_px, axis=0) for c in fitted])
    distance = np.linalg.norm(fitted_centres[:, None] - true_centres[None], axis=2)
    pairs = []
    used: set[int] = set()
    for i in np.argsort(distance.min(axis=1)):
        j = int(np.argmin(distance[i]))
        if distance[i, j] < 0.5 * true_radius[j] and j not in used:
            used.add(j)
            pairs.append((int(i), j))
    score.matched += len(pairs)
    notes = []
    if len(pairs) < len(true_tiles):
        missed = [(true_tiles[j]["q"], true_tiles[j]["r"], round(true_tiles[j].get("visible", 1.0), 2))
                  for j in set(range(len(true_tiles))) - used]
        notes.append(f"missed {missed[:8]}")
    if len(pairs) < len(fitted):
        extra = [fitted[i].hex for i in set(range(len(fitted))) - {i for i, _ in pairs}]
        notes.append(f"invented {len(extra)}: {extra[:5]}")
    best_k, best_count = 0, -1
    for k in range(6):
        votes = Counter()
        for i, j in pairs:
            turned = fitted[i].hex.rotated(k)
            votes[(true_tiles[j]["q"] - turned.q, true_tiles[j]["r"] - turned.r)] += 1
        count = votes.most_common(1)[0][1] if votes else 0
        if count > best_count:
            best_k, best_count = k, count
    wrong = len(pairs) - best_count
    score.adjacency_errors += wrong
    if wrong:
        notes.append(f"{wrong} tiles off the common alignment")
    for i, j in pairs:
        fitted_corners = np.roll(np.asarray(fitted[i].corners_px), best_k, axis=0)
        error = np.linalg.norm(fitted_corners - np.asarray(true_tiles[j]["corners_px"]), axis=1)
        score.corner_errors.extend((error / true_radius[j]).tolist())
    return notes


def cached_render(seed: int, size: tuple[int, int], cache: Path | None) -> tuple[np.ndarray, dict]:
    """A rendered photo and its truth, kept under ``cache`` (PNG + JSON) when given."""
    from renderer import render_random

    if cache is not None:
        image_path = cache / f"{seed}_{size[0]}x{size[1]}.png"
        truth_path = image_path.with_suffix(".json")
        if image_path.exists() and truth_path.exists():
            return cv2.imread(str(image_path), cv2.IMREAD_COLOR), json.loads(truth_path.read_text())
    render = render_random(seed, width=size[0], height=size[1])
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(image_path), render.image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        truth_path.write_text(json.dumps(render.truth))
    return render.image, render.truth


def evaluate_renders(count: int, seed: int, size: tuple[int, int], verbose: bool = False,
                     cache: Path | None = None) -> GeometryScore:
    """Render ``count`` photos from ``seed`` on, run locate + lattice, print the pooled measures."""
    from scanner.locate import TileTopNet
    from scanner.looks import find_lattice

    net = TileTopNet()
    score = GeometryScore()
    for s in range(seed, seed + count):
        image, truth = cached_render(s, size, cache)
        start = time.perf_counter()
        try:
            fit = find_lattice(image, net)
            cells = fit.cells
        except FjordsError as exc:
            cells = {}
            score.failures += 1
            if verbose:
                print(f"seed {s}: {exc}")
        score.seconds.append(time.perf_counter() - start)
        notes = score_fit(cells, truth, score)
        if verbose and notes:
            print(f"seed {s}: " + "; ".join(notes))
    print(score.summary())
    return score



