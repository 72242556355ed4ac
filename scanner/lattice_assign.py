"""Give detected tile centres their axial positions and fit the lattice model to them.

A hypothesis starts at one candidate (the seed) and two of its neighbours,
read as two lattice steps, which fixes a local affine lattice (its
orientation chosen so the board is never mirrored). It then grows: candidates
near the seed that fall close to a lattice centre join, the model is refitted
(affine, then homography), and the reach widens ring by ring so that
perspective and barrel distortion are followed gradually; the distortion is
fitted last. The hypothesis that explains the most candidate weight wins;
among near ties, the one that stretches the board least (a shear of the
lattice explains the same centres, but no camera above 40 degrees sees it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from scanner.lattice_model import (
    DIRECTION_STEPS,
    MIN_LENS_TILES,
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
#: Angle range (degrees) between two neighbour vectors that are not in line.
SPREAD_ANGLES = (25.0, 155.0)
#: Second neighbours of a seed tried against its nearest one.
SECOND_NEIGHBOURS = 3
#: Strongest candidates tried as seeds.
MAX_SEEDS = 8
#: Least isotropy (smaller over larger singular value of the board → photo map) of a plausible view;
#: a camera 40 degrees above the table gives about 0.64, less with strong perspective.
MIN_ISOTROPY = 0.4
#: Isotropy of a hypothesis good enough to stop looking for others.
CONFIDENT_ISOTROPY = 0.62
#: Share of the candidates a plausible hypothesis must explain for the seeds it explains to be skipped.
SETTLED_SHARE = 0.75
#: Hypotheses scoring at least this share of the best one compete on how little they stretch the board.
TIE_SHARE = 0.97
#: Runners-up explaining at least this share of the best hypothesis's score are offered to the caller.
RUNNER_UP_SHARE = 0.85
#: Candidates up to this multiple of the nearest one's distance may be neighbours of a seed (a view
#: from 40 degrees with strong perspective makes one lattice direction twice as long as another).
NEIGHBOUR_RATIO = 2.6


GrowthFits = dict[bytes, tuple[LatticeModel, tuple[np.ndarray, np.ndarray, np.ndarray] | None]]
"""The growth refits of one lattice search (:func:`_grow`): centres fitted → the view fitted to them and every
candidate's match under it (None where the centres fit no view)."""


@dataclass(frozen=True)
class Assignment:
    """One lattice hypothesis of :func:`lattice_hypotheses`.

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


def lattice_hypotheses(points: np.ndarray, weights: np.ndarray, image_size: tuple[int, int], *,
                       fit_distortion: bool = True, limit: int = 1) -> list[Assignment]:
    """The best lattice through candidate tile centres (photo pixels) and up to ``limit − 1`` runners-up.

    Best first; empty when no lattice holds. Runners-up explain at least
    :data:`RUNNER_UP_SHARE` of the best one's candidate weight, are plausible views
    (isotropy at least :data:`CONFIDENT_ISOTROPY`) and differ from the best and from
    each other; the caller judges them on the photo itself (do their tiles sit on
    tile edges?), which the candidates cannot tell.

    Parameters
    ----------
    points : ndarray (N, 2)
        Candidate tile centres in photo pixels.
    weights : ndarray (N,)
        Confidence of each candidate (higher is surer).
    image_size : (width, height)
    fit_distortion : bool
        Fit barrel distortion once a hypothesis holds enough candidates.
    limit : int
        Most hypotheses returned.
    """
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    weights = np.asarray(weights, dtype=np.float64).reshape(-1)
    if len(points) < 3:
        return []
    tree = cKDTree(points)
    # Tile centres are about one spacing apart: a lattice much finer than that is explaining noise.
    heavy = points[np.argsort(-weights)[: max(3, len(points) // 2)]]
    spacing = float(np.median(cKDTree(heavy).query(heavy, k=2)[0][:, 1]))
    found_all: list[tuple[float, float, Assignment]] = []
    fits: GrowthFits = {}
    for seed in np.argsort(-weights)[:MAX_SEEDS]:
        if any(f.inlier[seed] and isotropy >= CONFIDENT_ISOTROPY and f.inlier.sum() >= SETTLED_SHARE * len(points)
               for _, isotropy, f in found_all):
            continue  # a plausible lattice already explains this seed and most others: it would be found again
        for affine in _seed_hypotheses(points, tree, seed):
            try:
                found = _grow(points, weights, seed, affine, image_size, fit_distortion, fits)
            except np.linalg.LinAlgError:  # a degenerate hypothesis
                continue
            if found is None or _spacing(found) < 0.6 * spacing or _isotropy(found) < MIN_ISOTROPY:
                continue
            score = float(weights[found.inlier].sum() - 0.1 * found.residual[found.inlier].sum())
            found_all.append((score, _isotropy(found), found))
            if found.inlier.sum() >= 0.9 * len(points) and found_all[-1][1] >= CONFIDENT_ISOTROPY:
                return [found]
    if not found_all:
        return []
    # A sheared lattice can explain the same centres (the lattice maps onto itself under shears), but it
    # needs a far more stretched view than any camera above 40 degrees gives: among hypotheses explaining
    # about as much, take the least stretched.
    top = max(score for score, _, _ in found_all)
    plausible = [f for f in found_all if f[0] >= TIE_SHARE * top]
    ranked = [max(plausible, key=lambda f: f[1])[2]]
    for score, isotropy, found in sorted(found_all, key=lambda f: -f[0]):
        if len(ranked) >= limit:
            break
        if (score >= RUNNER_UP_SHARE * top and isotropy >= CONFIDENT_ISOTROPY
                and not any(_same_lattice(found, other) for other in ranked)):
            ranked.append(found)
    return ranked


def _same_lattice(a: Assignment, b: Assignment) -> bool:
    """Whether two hypotheses put the candidates they share on the same lattice (up to a shift and turn)."""
    shared = a.inlier & b.inlier
    if shared.sum() < 3:
        return False
    # The same lattice numbered from another origin or turned keeps every pairwise step's length.
    steps_a = a.axial[shared] - a.axial[shared][0]
    steps_b = b.axial[shared] - b.axial[shared][0]
    return bool(np.allclose(_hex_lengths(steps_a), _hex_lengths(steps_b)))


def _hex_lengths(steps: np.ndarray) -> np.ndarray:
    """Hex distance of axial steps."""
    q, r = steps[:, 0], steps[:, 1]
    return (np.abs(q) + np.abs(r) + np.abs(q + r)) / 2


def _seed_hypotheses(points: np.ndarray, tree: cKDTree, seed: int) -> list[np.ndarray]:
    """Affine board → image maps putting the seed at hex (0, 0) and its nearest neighbour at hex (1, 0).

    A second neighbour, not in line with the first, may be the next lattice
    direction, the one after it, or the second ring between them (a steep view
    or a hole in the board can hide the others); each reading is a hypothesis,
    always turning the same way on screen as in the board plane (never mirrored).
    """
    dist, idx = tree.query(points[seed], k=min(8, len(points)))
    dist, idx = dist[1:], idx[1:]
    if len(dist) < 2:
        return []
    near = [i for d, i in zip(dist, idx) if d < NEIGHBOUR_RATIO * dist[0]]
    v1 = points[near[0]] - points[seed]
    hypotheses = []
    for i in near[1:SECOND_NEIGHBOURS + 1]:
        v2 = points[i] - points[seed]
        cos = float(np.dot(v1, v2) / (np.linalg.norm(v1) * np.linalg.norm(v2)))
        if not SPREAD_ANGLES[0] <= np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))) <= SPREAD_ANGLES[1]:
            continue
        # Image y grows downwards: a negative cross product means v2 is counter-clockwise of v1 on screen.
        side = 1 if v1[0] * v2[1] - v1[1] * v2[0] < 0 else 5
        for second in (DIRECTION_STEPS[side], DIRECTION_STEPS[(side * 2) % 6],
                       DIRECTION_STEPS[0] + DIRECTION_STEPS[side]):
            board = np.array([[0.0, 0.0], DIRECTION_STEPS[0], second])
            image = np.array([points[seed], points[seed] + v1, points[seed] + v2])
            hypotheses.append(affine_from(board, image))
    return hypotheses


def _grow(points: np.ndarray, weights: np.ndarray, seed: int, affine: np.ndarray,
          image_size: tuple[int, int], fit_distortion: bool,
          fits: GrowthFits) -> Assignment | None:
    """Grow a hypothesis from its seed's neighbourhood outwards (:data:`GROWTH_RADII`), refitting the view on the
    candidates matched so far. ``fits`` holds every growth refit of this search and its candidates' match, keyed
    by the centres fitted: most refits repeat one (a round whose match does not change, a radius that adds no
    candidate, another seed grown onto the same centres) and give the same model, so it is fitted once."""
    model = LatticeModel.for_image(affine, image_size)
    origin = model.image_to_board(points[seed])
    matched = _match(model.image_to_board(points), weights)
    inlier = np.zeros(len(points), dtype=bool)
    for radius in GROWTH_RADII:
        for _ in range(3):
            axial, residual, inlier_new = matched
            inlier_new = inlier_new & (np.linalg.norm(hex_centres(axial) - origin, axis=1) <= radius)
            if inlier_new.sum() < 3:
                return None
            board, image = hex_centres(axial[inlier_new]), points[inlier_new]
            key = model.k1.hex().encode() + board.tobytes() + image.tobytes()
            if key not in fits:
                refitted = _refit(model, board, image, image_size, False)
                fits[key] = refitted, (_match(refitted.image_to_board(points), weights)
                                       if refitted.fits_a_view else None)
            model, matched = fits[key]
            if not model.fits_a_view:  # these centres fit no view of the table
                return None
            if np.array_equal(inlier_new, inlier):
                break
            inlier = inlier_new
        if radius > 1e8:
            break
    if fit_distortion and inlier.sum() >= MIN_LENS_TILES:
        model = _refit(model, hex_centres(axial[inlier]), points[inlier], image_size, True)
        matched = _match(model.image_to_board(points), weights)
    axial, residual, inlier = matched
    if inlier.sum() < 3 or model.is_mirrored(hex_centres(axial[inlier]).mean(axis=0)):
        return None
    return Assignment(model, axial, inlier, residual)


def _isotropy(found: Assignment) -> float:
    """Smaller over larger singular value of the board → photo map at the found tiles' centroid."""
    centre = hex_centres(found.axial[found.inlier]).mean(axis=0)
    probe = np.array([centre, centre + [1e-3, 0.0], centre + [0.0, 1e-3]])
    image = found.model.board_to_image(probe)
    jacobian = np.stack([image[1] - image[0], image[2] - image[0]], axis=-1)
    singular = np.linalg.svd(jacobian, compute_uv=False)
    return float(singular[-1] / singular[0])


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
    claimants = order[inlier[order]]
    # A stable sort by position keeps each position's claimants in that order: the first of each run wins.
    positions = axial[claimants]
    by_position = np.lexsort((positions[:, 1], positions[:, 0]))
    ranked = positions[by_position]
    first = np.ones(len(ranked), dtype=bool)
    first[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    inlier[:] = False
    inlier[claimants[by_position[first]]] = True
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
