"""Give detected tile centres their axial positions and fit the lattice model to them.

A hypothesis starts at one candidate and two of its neighbours 60° apart,
which fixes a local affine lattice (its orientation chosen so the board is
never mirrored). It then grows: candidates near the seed that fall close to a
lattice centre join, the model is refitted (affine, then homography, then
homography with distortion), and the reach widens ring by ring so that
perspective and barrel distortion are followed gradually. The hypothesis that
explains the most candidate weight wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from scanner.lattice_model import (
    DIRECTION_STEPS,
    LatticeModel,
    affine_from,
    direct_homography,
    fit_model,
    hex_centres,
    nearest_hex,
)

#: Largest distance (board units, circumradius 1) between a candidate and its lattice centre.
MATCH_TOLERANCE = 0.42
#: Board-plane reach of the successive growth rings around the seed.
GROWTH_RADII = (2.1, 3.8, 5.6, 8.0, 12.0, 1e9)
#: Angle range (degrees) between two neighbour vectors taken as adjacent lattice directions.
ADJACENT_ANGLES = (30.0, 100.0)
MAX_SEEDS = 8
#: Candidates up to this multiple of the nearest one's distance count as neighbours of a seed
#: (a view from 40° shortens one lattice direction to about 0.64 of the others; the second ring is at √3).
NEIGHBOUR_RATIO = 1.6


@dataclass(frozen=True)
class Assignment:
    """Result of :func:`assign_lattice`.

    Attributes
    ----------
    model : LatticeModel
    axial : ndarray (N, 2) int
        Axial ``(q, r)`` of each candidate (meaningful where ``inlier``).
    inlier : ndarray (N,) bool
        Candidates explained by the lattice (one per position, the closest).
    residual : ndarray (N,)
        Board-plane distance of each candidate to its lattice centre.
    """

    model: LatticeModel
    axial: np.ndarray
    inlier: np.ndarray
    residual: np.ndarray


def assign_lattice(points: np.ndarray, weights: np.ndarray, image_size: tuple[int, int],
                   *, fit_distortion: bool = True) -> Assignment | None:
    """Best lattice through candidate tile centres (photo pixels), or None when none holds.

    Parameters
    ----------
    points : ndarray (N, 2)
        Candidate tile centres in photo pixels.
    weights : ndarray (N,)
        Confidence of each candidate (higher is surer).
    image_size : (width, height)
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(points) < 3:
        return None
    tree = cKDTree(points)
    # Tile centres are about one spacing apart: a lattice much finer than that is explaining noise.
    heavy = points[np.argsort(-weights)[: max(3, len(points) // 2)]]
    spacing = float(np.median(cKDTree(heavy).query(heavy, k=2)[0][:, 1]))
    best: Assignment | None = None
    best_score = -1.0
    for seed in np.argsort(-weights)[:MAX_SEEDS]:
        for affine in _seed_hypotheses(points, tree, seed):
            found = _grow(points, weights, seed, affine, image_size, fit_distortion)
            if found is None or _spacing(found) < 0.6 * spacing:
                continue
            score = float(weights[found.inlier].sum() - 0.1 * found.residual[found.inlier].sum())
            if score > best_score:
                best, best_score = found, score
        if best is not None and best.inlier.sum() >= 0.9 * len(points):
            break
    return best


def _seed_hypotheses(points: np.ndarray, tree: cKDTree, seed: int) -> list[np.ndarray]:
    """Affine board → image maps putting the seed at hex (0, 0) and two neighbours at adjacent hexes."""
    k = min(8, len(points))
    dist, idx = tree.query(points[seed], k=k)
    dist, idx = dist[1:], idx[1:]
    if len(dist) < 2:
        return []
    nearest = dist[0]
    near = [i for d, i in zip(dist, idx) if d < NEIGHBOUR_RATIO * nearest]
    vectors = [points[i] - points[seed] for i in near]
    hypotheses = []
    v1 = vectors[0]
    for v2 in vectors[1:]:
        cos = float(np.dot(v1, v2) / (np.linalg.norm(v1) * np.linalg.norm(v2)))
        angle = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
        if not ADJACENT_ANGLES[0] <= angle <= ADJACENT_ANGLES[1]:
            continue
        # Image y grows downwards: a negative cross product means v2 is counter-clockwise of v1 on screen.
        counter_clockwise = v1[0] * v2[1] - v1[1] * v2[0] < 0
        second = DIRECTION_STEPS[1] if counter_clockwise else DIRECTION_STEPS[5]
        board = np.array([[0.0, 0.0], DIRECTION_STEPS[0], second])
        image = np.array([points[seed], points[seed] + v1, points[seed] + v2])
        hypotheses.append(affine_from(board, image))
        if len(hypotheses) == 4:
            break
    return hypotheses


def _grow(points: np.ndarray, weights: np.ndarray, seed: int, affine: np.ndarray,
          image_size: tuple[int, int], fit_distortion: bool) -> Assignment | None:
    model = LatticeModel.for_image(affine, image_size)
    origin = model.image_to_board(points[seed])
    inlier = np.zeros(len(points), dtype=bool)
    for radius in GROWTH_RADII:
        for _ in range(3):
            board = model.image_to_board(points)
            axial, residual, inlier_new = _match(board, weights)
            near = np.linalg.norm(hex_centres(axial) - origin, axis=1) <= radius
            inlier_new &= near
            if inlier_new.sum() < 3:
                return None
            model = _refit(model, hex_centres(axial[inlier_new]), points[inlier_new], image_size, False)
            if np.array_equal(inlier_new, inlier):
                break
            inlier = inlier_new
        if radius > 1e8:
            break
    if fit_distortion and inlier.sum() >= 12:
        model = _refit(model, hex_centres(axial[inlier]), points[inlier], image_size, True)
    board = model.image_to_board(points)
    axial, residual, inlier = _match(board, weights)
    if inlier.sum() < 3 or model.is_mirrored(hex_centres(axial[inlier]).mean(axis=0)):
        return None
    return Assignment(model, axial, inlier, residual)


def _spacing(found: Assignment) -> float:
    """Median distance in pixels between neighbouring lattice centres under the found model."""
    centres = hex_centres(found.axial[found.inlier])
    return found.model.scale_px(np.median(centres, axis=0)) * math.sqrt(3.0)


def _match(board: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Nearest lattice position of each board point; one candidate (best) per position."""
    axial = nearest_hex(board)
    residual = np.linalg.norm(board - hex_centres(axial), axis=1)
    inlier = residual < MATCH_TOLERANCE
    # Where several candidates claim one position keep the closest (ties: the heaviest).
    order = np.lexsort((-weights, residual))
    seen: set[tuple[int, int]] = set()
    for i in order:
        if not inlier[i]:
            continue
        key = (int(axial[i, 0]), int(axial[i, 1]))
        if key in seen:
            inlier[i] = False
        else:
            seen.add(key)
    return axial, residual, inlier


def _refit(model: LatticeModel, board: np.ndarray, image: np.ndarray, image_size: tuple[int, int],
           fit_distortion: bool) -> LatticeModel:
    if len(board) < 6 or _collinear(board):
        return LatticeModel.for_image(affine_from(board, image), image_size, model.k1)
    if not fit_distortion:
        return LatticeModel.for_image(direct_homography(board, model.undistort(image)), image_size, model.k1)
    return fit_model(board, image, image_size, initial=model)


def _collinear(board: np.ndarray) -> bool:
    centred = board - board.mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)
    return singular[-1] < 0.2 * singular[0]
