"""Stage 4: find every tile and fit the lattice.

Tile-centre candidates from :mod:`scanner.locate` are given axial positions by
a grown lattice hypothesis (:mod:`scanner.lattice_assign`), the board-plane →
photo model (homography + barrel distortion, :mod:`scanner.lattice_model`) is
fitted to them, and every lattice cell near the board is then judged present
or not from the tile-top probability inside its projected hexagon. The model
is refitted on the edges the tiles show, again for a look chosen far off them
(:func:`converge`), and each present tile's corners are finally refined on its
own (tiles sit a little turned and shifted on a real table).

    python -m scanner.lattice evaluate --count 50 --seed 0
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np

from fjords.geometry import Hex
from scanner.lattice_assign import MATCH_TOLERANCE, Assignment, lattice_hypotheses
from scanner.lattice_model import MIN_LENS_TILES, LatticeModel, fit_model, hex_centres, hex_corners, nearest_hex
from scanner.lattice_refine import LOOSE_PRIOR, TilePoses, edge_response, rectify, refine_poses
from scanner.locate import BoardRegion, NoBoardFound

#: Mean tile-top probability inside a cell's (shrunk) hexagon above which the tile is present.
PRESENCE_THRESHOLD = 0.5
#: Share of the circumradius sampled when judging presence (keeps clear of the gaps).
PRESENCE_SHRINK = 0.75
#: Fewest map pixels of a cell's shrunk hexagon (inside the frame) to judge it on.
MIN_CELL_PIXELS = 4
#: A previous frame's fit is reused when this share of its tiles is found again.
TRACKING_SHARE = 0.7
#: Share of a tile's edge samples that must find an edge for the tile to count as supported.
SUPPORTED_EDGES = 0.5
#: Share of supported tiles at which a fit is believed (chosen on renders of training seeds
#: 900000–900079: a lattice off the tiles has almost none; see models/README.md).
GOOD_SUPPORT = 0.2
#: Most further refits of the chosen look's lattice on the tiles' edges (:func:`converge`).
EXTRA_REFITS = 4
#: A refit moving the tiles' corners less than this (board units, median) is the edges' noise: it ends the
#: further refits unkept, and after a look's own refit none is tried.
CONVERGED_MOVE = 0.04
#: Runner-up lattice hypotheses tried, in order, while the fit has fewer supported tiles than that.
RUNNERS_UP = 2
#: A posed cell whose hexagon is not convex, or whose circumradius is more than this many times the median
#: cell's or less than its share, is the lens model extrapolated past the tiles it was fitted on, not a tile:
#: it is left out. On a bold print (seed 984,651) such a cell's corner lay 3.6 million pixels away and the
#: scan failed for want of 1.4 TiB; a real tile is never this far from the median, at any elevation.
MAX_CELL_SIZE_RATIO = 4.0
#: Two fits' tiles are the same tile when their centres lie within this many tile radii (:meth:`LatticeFit.same_tiles`).
SAME_TILE = 0.3


@dataclass(frozen=True)
class CellGeometry:
    """One tile in the photo.

    Attributes
    ----------
    hex : Hex
    center_px : tuple of float
    corners_px : ndarray (6, 2)
        Corner ``k`` at ``30 + 60·k`` degrees in the lattice frame, counter-clockwise in the image.
    visible : float
        Share (0..1) of the top face inside the frame and not occluded.
    confidence : float
    """

    hex: Hex
    center_px: tuple[float, float]
    corners_px: np.ndarray
    visible: float
    confidence: float


@dataclass(frozen=True)
class LatticeFit:
    """The tiles believed present and the lattice model they lie on."""

    cells: dict[Hex, CellGeometry]
    model: LatticeModel
    tile_radius_px: float
    timings: dict[str, float] = field(default_factory=dict, compare=False)
    #: Tiles whose own edges were found around them (a lattice on the real tiles has most).
    supported_tiles: int = 0
    #: How far the last refit on the tiles' edges moved the lattice (board units, median over the corners).
    refit_move: float = 0.0

    @property
    def supported_share(self) -> float:
        """Share of the tiles whose edges were found: low when the lattice does not lie on the tiles."""
        return self.supported_tiles / len(self.cells) if self.cells else 0.0

    def translated(self, offset: tuple[float, float]) -> "LatticeFit":
        """The same fit in a frame where this one's pixel (0, 0) sits at ``offset`` (a crop's corner)."""
        shift = np.asarray(offset, dtype=np.float64)
        move = np.array([[1.0, 0.0, shift[0]], [0.0, 1.0, shift[1]], [0.0, 0.0, 1.0]])
        model = replace(self.model, homography=move @ self.model.homography,
                        centre=tuple(float(v) for v in np.asarray(self.model.centre) + shift))
        cells = {h: replace(c, center_px=(c.center_px[0] + float(shift[0]), c.center_px[1] + float(shift[1])),
                            corners_px=np.asarray(c.corners_px) + shift) for h, c in self.cells.items()}
        return replace(self, cells=cells, model=model)

    def empty_positions(self, image_size: tuple[int, int], min_inside: float = 0.75) -> list[CellGeometry]:
        """The lattice positions next to the tiles where no tile lies, inside the photo.

        Where a rune stone may stand beside the tiles (Odin, on an empty lattice
        position). Each comes with its corners on the fitted lattice and the
        share of it inside the frame as ``visible``; positions less than
        ``min_inside`` in the frame are left out, and so are those the lens model
        throws out of shape (:data:`MAX_CELL_SIZE_RATIO`); the confidence is 0.

        Parameters
        ----------
        image_size : (width, height) of the photo, pixels.
        min_inside : float
            Least share of a position inside the frame.
        """
        width, height = image_size
        beside = sorted({n for h in self.cells for n in h.neighbours()} - set(self.cells))
        if not beside:
            return []
        corners = self.model.board_to_image(hex_corners(beside).reshape(-1, 2)).reshape(-1, 6, 2)
        found = []
        for h, c in zip(beside, corners):
            inside = share_inside(c, width, height) if _tile_like(c, self.tile_radius_px) else 0.0
            if inside >= min_inside:
                centre = c.mean(axis=0)
                found.append(CellGeometry(h, (float(centre[0]), float(centre[1])), c, inside, 0.0))
        return found

    def same_tiles(self, other: "LatticeFit", tolerance: float = SAME_TILE) -> bool:
        """Whether ``other`` finds the same tiles in the photo: as many, each of ours with one of its centres within
        ``tolerance`` tile radii (its lattice positions may be numbered otherwise)."""
        if len(self.cells) != len(other.cells) or not self.cells:
            return len(self.cells) == len(other.cells)
        ours = np.array([c.center_px for c in self.cells.values()])
        theirs = np.array([c.center_px for c in other.cells.values()])
        nearest = np.linalg.norm(ours[:, None] - theirs[None], axis=-1).min(axis=1)
        return bool(np.all(nearest <= tolerance * self.tile_radius_px))

    def board_to_image(self, pts: np.ndarray) -> np.ndarray:
        """Board-plane coordinates (spec top-down frame, circumradius 1) → photo pixels."""
        return self.model.board_to_image(pts)

    def image_to_board(self, px: np.ndarray) -> np.ndarray:
        return self.model.image_to_board(px)


def fit_lattice(image_bgr: np.ndarray, board_region: BoardRegion, *,
                previous: LatticeFit | None = None) -> LatticeFit:
    """Find the tiles of a located board and fit the lattice.

    Parameters
    ----------
    image_bgr : ndarray (H, W, 3)
    board_region : BoardRegion
        From :func:`scanner.locate.locate_board` on the same image.
    previous : LatticeFit, optional
        The previous video frame's fit: when most of its tiles are found again
        near where they were, the lattice search is skipped.

    Raises
    ------
    NoBoardFound
        When no lattice explains the tile candidates.

    Notes
    -----
    The candidates alone cannot always tell the real lattice from a sheared one
    through most of them; when the best hypothesis's tiles do not sit on tile
    edges (fewer than :data:`GOOD_SUPPORT` of them supported), up to
    :data:`RUNNERS_UP` runners-up are fitted too, and the first whose own tiles
    are supported (with more supported tiles) replaces it.
    """
    start = time.perf_counter()
    height, width = image_bgr.shape[:2]
    points, weights = board_region.centre_candidates()
    tracked = _track(previous, points) if previous is not None else None
    hypotheses = ([tracked] if tracked is not None else
                  lattice_hypotheses(points, weights, (width, height), limit=1 + RUNNERS_UP))
    if not hypotheses:
        raise NoBoardFound("no lattice of tiles found in the photo: is the whole board in the picture?")
    assign_time = time.perf_counter() - start
    best: LatticeFit | None = None
    for assignment in hypotheses:
        fit = fit_assignment(image_bgr, board_region, assignment, points)
        if fit is None:
            continue
        # The candidates cannot tell a sheared lattice from the real one; the tiles' edges can. A runner-up
        # replaces the best hypothesis only when its own tiles sit on the edges: among fits that all miss
        # them, one or two supported tiles more is chance.
        if best is None or (fit.supported_share >= GOOD_SUPPORT and fit.supported_tiles > best.supported_tiles):
            best = fit
        if best.supported_share >= GOOD_SUPPORT:
            break
    if best is None:
        raise NoBoardFound("no tiles found in the photo: is the board in the picture and in focus?")
    best.timings["assign"] = assign_time
    return best


def fit_assignment(image_bgr: np.ndarray, board_region: BoardRegion, assignment: Assignment, points: np.ndarray
                   ) -> LatticeFit | None:
    """The lattice fit of one hypothesis: refitted, its present cells judged, refined on tile edges.

    None when no cell of it holds a tile.
    """
    start = time.perf_counter()
    height, width = image_bgr.shape[:2]
    size = (width, height)
    timings: dict[str, float] = {}
    # Every photo measures its own lens where it shows enough tiles: one measured on another photo holds only
    # for the camera and zoom it was taken with, and misplaced tiles where it stood in (docs/calibration.md).
    inliers = int(assignment.inlier.sum())
    model = assignment.model
    if inliers >= 8:
        # Robust refit: a candidate on a piece or a neighbour's edge must not pull the whole lattice.
        model = fit_model(hex_centres(assignment.axial[assignment.inlier]), points[assignment.inlier], size,
                          initial=model, fit_distortion=inliers >= MIN_LENS_TILES,
                          loss_scale_px=0.1 * model.scale_px(hex_centres(assignment.axial[assignment.inlier]).mean(0)))
    cells = _present_cells(model, board_region, assignment)
    timings["cells"] = time.perf_counter() - start
    if not cells:
        return None
    model, cells, supported, moved = _refine(image_bgr, model, cells)
    timings["refine"] = time.perf_counter() - start - timings["cells"]
    return LatticeFit(cells, model, _median_radius(cells), timings, supported, moved)


def _track(previous: LatticeFit, points: np.ndarray) -> Assignment | None:
    """Match candidates to the previous frame's lattice; None when the board moved too much."""
    if len(points) == 0 or not previous.cells:
        return None
    board = previous.model.image_to_board(points)
    axial = nearest_hex(board)
    residual = np.linalg.norm(board - hex_centres(axial), axis=1)
    known = {(h.q, h.r) for h in previous.cells}
    inlier = (residual < MATCH_TOLERANCE) & np.array([(int(q), int(r)) in known for q, r in axial])
    if inlier.sum() < max(3, TRACKING_SHARE * len(previous.cells)):
        return None
    return Assignment(previous.model, axial, inlier, residual)


def _present_cells(model: LatticeModel, region: BoardRegion, assignment: Assignment) -> dict[Hex, CellGeometry]:
    """Judge every cell near the found tiles by the mean tile-top probability inside its (shrunk) hexagon."""
    prob = region.tile_probability
    map_h, map_w = prob.shape
    ys, xs = np.mgrid[0:map_h, 0:map_w]
    board = model.image_to_board(region.to_photo(np.stack([xs.ravel(), ys.ravel()], axis=-1)))
    axial = nearest_hex(board)
    inner = _hex_norm(board - hex_centres(axial)) <= PRESENCE_SHRINK
    found = assignment.axial[assignment.inlier]
    low, high = found.min(axis=0) - 2, found.max(axis=0) + 2
    inner &= np.all((axial >= low) & (axial <= high), axis=1)
    # One integer key per cell makes the grouping a fast 1-D unique.
    keys = (axial[inner, 0] - low[0]) * (high[1] - low[1] + 1) + (axial[inner, 1] - low[1])
    cell_keys, index = np.unique(keys, return_inverse=True)
    cells_axial = np.stack([cell_keys // (high[1] - low[1] + 1) + low[0], cell_keys % (high[1] - low[1] + 1) + low[1]], 1)
    counts = np.bincount(index.ravel(), minlength=len(cells_axial))
    scores = np.bincount(index.ravel(), weights=prob.ravel()[inner], minlength=len(cells_axial)) / np.maximum(counts, 1)
    width, height = region.image_size
    cells: dict[Hex, CellGeometry] = {}
    for (q, r), score, count in zip(cells_axial, scores, counts):
        # Judge on the part inside the frame: a tile cut by the frame is still a tile.
        if score < PRESENCE_THRESHOLD or count < MIN_CELL_PIXELS:
            continue
        h = Hex(int(q), int(r))
        corners = model.board_to_image(hex_corners([h])[0])
        centre = model.board_to_image(hex_centres([h]))[0]
        visible = share_inside(corners, width, height) * min(1.0, score / 0.9)
        cells[h] = CellGeometry(h, (float(centre[0]), float(centre[1])), corners, visible,
                                float(np.clip(2.0 * (score - 0.5), 0.0, 1.0)))
    return cells


def _hex_norm(offset: np.ndarray) -> np.ndarray:
    """Hexagonal norm of board-plane offsets: 1 on the rim of a tile of circumradius 1."""
    normals = np.array([[1.0, 0.0], [0.5, math.sqrt(3.0) / 2.0], [-0.5, math.sqrt(3.0) / 2.0]])
    return np.max(np.abs(offset @ normals.T), axis=1) / (math.sqrt(3.0) / 2.0)


def _refine(image: np.ndarray, model: LatticeModel, cells: dict[Hex, CellGeometry]
            ) -> tuple[LatticeModel, dict[Hex, CellGeometry], int, float]:
    """Refit the lattice through the tiles' own edges, then fit every tile's own pose to its edges.

    Also returns how many of the tiles kept are supported (:func:`_posed`) and how far the refit moved the
    lattice (:func:`_move`; 0 without a refit).
    """
    hexes = list(cells)
    centres = hex_centres(hexes)
    low, high = _board_box(centres)
    gradients, origin = _edges(image, model, low, high)
    # The centre candidates can sit off the tiles (a hand, a piece): move the lattice onto the edges.
    refitted, poses = _refit_on_edges(model, hexes, gradients, origin, (image.shape[1], image.shape[0]))
    moved = 0.0
    if refitted is not None:
        moved = _move(model, refitted, hexes)
        model = refitted
        gradients, origin = _edges(image, model, low, high)
        poses = refine_poses(gradients, origin, centres)
    return model, *_posed(cells, model, poses, centres), moved


def converge(image: np.ndarray, fit: LatticeFit) -> LatticeFit:
    """The fit with its lattice refitted on the tiles' edges again: the refit that puts its tiles on the most edge.

    Parameters
    ----------
    image : ndarray (H, W, 3)
        The photo ``fit`` was made in (or for, when it was made in a crop of it).
    fit : LatticeFit
        The look chosen (:func:`scanner.looks.find_lattice`).

    Notes
    -----
    An edge is searched only :data:`~scanner.lattice_refine.SEARCH_REACH` from where the lattice puts it, so
    one refit moves a lattice that the centre candidates put far off the tiles (a low photo, where they sit on
    the tiles' sides and shadows) only part of the way. Up to :data:`EXTRA_REFITS` further refits are made, each
    from the one before, until one moves the lattice by less than :data:`CONVERGED_MOVE`; of the start and
    those refits, the one that puts the tiles on the most edge (their mean support, held firmly to their cells)
    is kept. A refit can lose a little support on the way to a lattice with much more (on a photo of the
    independent renderer, 0.638 -> 0.634 -> 0.649 -> 0.725: the far tiles come onto their edges a step at a
    time), so the first refit that gains none does not end the search (it did until the thirty-second session;
    models/README.md). A smaller move is the edges' noise, not a correction: kept, such moves let a lattice
    slide on texture where few edges show, gaining a little support at every step. So nothing is refitted when
    the look's own refit moved the lattice less than that
    (:attr:`LatticeFit.refit_move`), as on most photos. It runs on the looks to be read only, after they are
    chosen (:func:`scanner.looks.find_lattices`), because the support it raises is also what tells a look on the
    real tiles from one on half tiles or every other tile.
    """
    if fit.refit_move < CONVERGED_MOVE:
        return fit
    hexes = list(fit.cells)
    centres = hex_centres(hexes)
    low, high = _board_box(centres)
    size = (image.shape[1], image.shape[0])
    model = fit.model
    gradients, origin = _edges(image, model, low, high)
    poses = refine_poses(gradients, origin, centres)
    last_move = fit.refit_move
    best = (poses.support.mean(), model, poses, last_move)
    for _ in range(EXTRA_REFITS):
        refitted, _ = _refit_on_edges(model, hexes, gradients, origin, size)
        if refitted is None:
            break
        moved = _move(model, refitted, hexes)
        if moved < CONVERGED_MOVE:
            break
        gradients, origin = _edges(image, refitted, low, high)
        model, poses, last_move = refitted, refine_poses(gradients, origin, centres), moved
        if poses.support.mean() > best[0]:
            best = (poses.support.mean(), model, poses, last_move)
    _, model, poses, last_move = best
    if model is fit.model:
        return fit
    cells, supported = _posed(fit.cells, model, poses, centres)
    return replace(fit, cells=cells, model=model, tile_radius_px=_median_radius(cells),
                   supported_tiles=supported, refit_move=last_move)


def _move(model: LatticeModel, refitted: LatticeModel, hexes: list[Hex]) -> float:
    """How far ``refitted`` puts the tiles' corners from where ``model`` puts them: board units, median."""
    corners = hex_corners(hexes)
    shift = np.linalg.norm(refitted.board_to_image(corners) - model.board_to_image(corners), axis=-1)
    return float(np.median(shift)) / model.scale_px(hex_centres(hexes).mean(axis=0))


def _board_box(centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Board-plane box around tiles of these centres, with room for the edge search beyond their rims."""
    return centres.min(axis=0) - 1.3, centres.max(axis=0) + 1.3


def _edges(image: np.ndarray, model: LatticeModel, low: np.ndarray, high: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of the top-down view of the board box through ``model``, and that view's origin."""
    rectified, inside, origin = rectify(image, model, low, high)
    return edge_response(rectified, inside), origin


def _refit_on_edges(model: LatticeModel, hexes: list[Hex], gradients: np.ndarray, origin: np.ndarray,
                    size: tuple[int, int]) -> tuple[LatticeModel | None, TilePoses]:
    """The lattice refitted to the edges the tiles find held loosely to their cells (None when fewer than four
    find them), and those loose poses."""
    centres = hex_centres(hexes)
    poses = refine_poses(gradients, origin, centres, prior=LOOSE_PRIOR)
    good = poses.support >= SUPPORTED_EDGES
    if good.sum() < 4:
        return None, poses
    lattice = hex_corners(hexes)[good]
    shifted = model.board_to_image(lattice + poses.shift[good][:, None, :]).reshape(-1, 2)
    return fit_model(lattice.reshape(-1, 2), shifted, size, initial=model,
                     fit_distortion=good.sum() >= MIN_LENS_TILES,
                     loss_scale_px=0.05 * model.scale_px(centres.mean(axis=0))), poses


def _posed(cells: dict[Hex, CellGeometry], model: LatticeModel, poses: TilePoses, centres: np.ndarray
           ) -> tuple[dict[Hex, CellGeometry], int]:
    """The cells with the corners and centres of their tiles' own poses on ``model``, those that could be tiles
    only (:func:`_plausible`), and how many of those are supported (edge support at least
    :data:`SUPPORTED_EDGES`): a cell left out counts in neither :attr:`LatticeFit.supported_share`'s numerator
    nor its denominator."""
    posed = {}
    for h, corners in zip(cells, model.board_to_image(poses.corners(centres))):
        centre = corners.mean(axis=0)
        posed[h] = replace(cells[h], center_px=(float(centre[0]), float(centre[1])), corners_px=corners)
    kept = _plausible(posed)
    supported = sum(bool(s >= SUPPORTED_EDGES) for h, s in zip(cells, poses.support) if h in kept)
    return kept, supported


def _plausible(cells: dict[Hex, CellGeometry]) -> dict[Hex, CellGeometry]:
    """The cells whose hexagons could be tiles (:data:`MAX_CELL_SIZE_RATIO`)."""
    median = _median_radius(cells)
    return {h: c for h, c in cells.items() if _tile_like(c.corners_px, median)}


def _tile_like(corners: np.ndarray, median_radius: float) -> bool:
    """Whether a hexagon is convex and near the median tile's size (:data:`MAX_CELL_SIZE_RATIO`)."""
    radius = _radius(corners)
    return (cv2.isContourConvex(np.asarray(corners, np.float32))
            and median_radius / MAX_CELL_SIZE_RATIO <= radius <= median_radius * MAX_CELL_SIZE_RATIO)


def share_inside(corners: np.ndarray, width: int, height: int) -> float:
    """Share of a polygon's area inside the photo frame."""
    poly = corners.astype(np.float32)
    frame = np.array([[-0.5, -0.5], [width - 0.5, -0.5], [width - 0.5, height - 0.5], [-0.5, height - 0.5]],
                     np.float32)
    area = abs(cv2.contourArea(poly))
    if area <= 0:
        return 0.0
    inter, _ = cv2.intersectConvexConvex(poly, frame)
    return float(min(1.0, inter / area))


def _median_radius(cells: dict[Hex, CellGeometry]) -> float:
    """The tiles' median circumradius in pixels (0 without tiles)."""
    return float(np.median([_radius(c.corners_px) for c in cells.values()])) if cells else 0.0


def _radius(corners: np.ndarray) -> float:
    return float(np.max(np.linalg.norm(corners - corners.mean(axis=0), axis=1)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scanner.lattice", description="Lattice stage tools.")
    sub = parser.add_subparsers(dest="step", required=True)
    evaluate = sub.add_parser("evaluate", help="tile recall/precision, corner error and time on renders")
    evaluate.add_argument("--count", type=int, default=50)
    evaluate.add_argument("--seed", type=int, default=0)
    evaluate.add_argument("--width", type=int, default=2016)
    evaluate.add_argument("--height", type=int, default=1512)
    evaluate.add_argument("--verbose", action="store_true", help="say what went wrong on each photo")
    evaluate.add_argument("--cache", type=Path, default=None, metavar="DIR",
                          help="keep the renders in DIR (e.g. out/render-cache) to measure again quickly")
    args = parser.parse_args(argv)
    from scanner.lattice_eval import evaluate_renders

    evaluate_renders(args.count, args.seed, (args.width, args.height), verbose=args.verbose, cache=args.cache)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
