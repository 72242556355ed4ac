"""Refine each tile's pose on the tile edges seen in a rectified (top-down) view of the board.

The photo is resampled onto the board plane through the lattice model, so
every tile is a regular hexagon there whatever the camera. Along each of a
tile's six edges, the strongest edge response across the edge (tile borders
and the gaps between tiles) is found near where the current pose puts it; a
small rigid motion (shift and turn) of the hexagon is then fitted to those
points by least squares. Real tiles sit up to a few degrees turned and a
millimetre or so off the ideal lattice; this recovers that.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from scipy.ndimage import map_coordinates

from scanner.lattice_model import UNIT_CORNERS, LatticeModel

#: Rectified pixels per board unit (tile circumradius).
RECTIFIED_SCALE = 28.0
#: How far (board units) across an edge the search for it reaches.
SEARCH_REACH = 0.16
#: Points sampled along each edge, away from the corners.
EDGE_SAMPLES = np.linspace(0.15, 0.85, 8)
#: Largest correction accepted (board units, degrees); more means the edges were not found.
MAX_SHIFT = 0.2
MAX_TURN_DEG = 8.0


def rectify(grey: np.ndarray, model: LatticeModel, board_min: np.ndarray, board_max: np.ndarray,
            scale: float = RECTIFIED_SCALE) -> tuple[np.ndarray, np.ndarray]:
    """Top-down view of the board-plane box ``[board_min, board_max]``.

    Returns the rectified float32 image and its origin (board point of pixel (0, 0)).
    """
    width = int(math.ceil((board_max[0] - board_min[0]) * scale)) + 1
    height = int(math.ceil((board_max[1] - board_min[1]) * scale)) + 1
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    board = np.stack([xs / scale + board_min[0], ys / scale + board_min[1]], axis=-1)
    photo = model.board_to_image(board).astype(np.float32)
    # Shrinking the photo onto the rectified grid would alias: blur in proportion first.
    shrink = model.scale_px((board_min + board_max) / 2.0) / scale
    source = cv2.GaussianBlur(grey, (0, 0), 0.5 * shrink) if shrink > 1.5 else grey
    rectified = cv2.remap(source.astype(np.float32), photo[..., 0], photo[..., 1], cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=float("nan"))
    return rectified, board_min.astype(np.float64)


def edge_response(rectified: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gradient ``(gx, gy)`` of the rectified view, lightly smoothed (NaN outside the photo → 0)."""
    valid = np.isfinite(rectified)
    image = np.where(valid, rectified, 0.0).astype(np.float32)
    image = cv2.GaussianBlur(image, (0, 0), 0.8)
    gx = cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=3) / 8.0
    gy = cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3) / 8.0
    invalid = cv2.dilate((~valid).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    gx[invalid] = 0.0
    gy[invalid] = 0.0
    return gx, gy


def refine_poses(gx: np.ndarray, gy: np.ndarray, origin: np.ndarray, centres: np.ndarray,
                 scale: float = RECTIFIED_SCALE, iterations: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit each hexagon's shift and turn to the edges of the rectified view.

    Parameters
    ----------
    gx, gy : gradient of the rectified view.
    origin : board point of rectified pixel (0, 0).
    centres : ndarray (N, 2)
        Lattice centres of the tiles (board units).

    Returns
    -------
    shift : ndarray (N, 2)   board-unit offset of each tile's centre
    turn : ndarray (N,)      turn in radians (counter-clockwise in the board's y-down frame as angle sign)
    support : ndarray (N,)   share of edge samples that found an edge (0..1)
    """
    n = len(centres)
    shift = np.zeros((n, 2))
    turn = np.zeros(n)
    support = np.zeros(n)
    # Edge e runs from corner e-1 to corner e... use corners k and k+1 (edge between them).
    a = UNIT_CORNERS
    b = np.roll(UNIT_CORNERS, -1, axis=0)
    t = EDGE_SAMPLES[None, :, None]
    base = a[:, None, :] * (1 - t) + b[:, None, :] * t            # (6, S, 2) points on the unit hexagon
    normals = (a + b) / np.linalg.norm(a + b, axis=1, keepdims=True)  # (6, 2) outward normals
    offsets = np.arange(-SEARCH_REACH, SEARCH_REACH + 1e-9, 1.0 / scale)
    for _ in range(iterations):
        cos, sin = np.cos(turn), np.sin(turn)
        rot = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)  # (N, 2, 2)
        pts = np.einsum("nij,esj->nesi", rot, base) + (centres + shift)[:, None, None, :]
        nrm = np.einsum("nij,ej->nei", rot, normals)                              # (N, 6, 2)
        probe = pts[..., None, :] + offsets[None, None, None, :, None] * nrm[:, :, None, None, :]
        px = (probe - origin) * scale
        sx = _sample(gx, px)
        sy = _sample(gy, px)
        strength = np.abs(sx * nrm[:, :, None, None, 0] + sy * nrm[:, :, None, None, 1])  # (N, 6, S, O)
        best = np.argmax(strength, axis=-1)
        peak = np.take_along_axis(strength, best[..., None], -1)[..., 0]
        # Sub-sample position of the peak by a parabola through its neighbours.
        lo = np.take_along_axis(strength, np.clip(best - 1, 0, len(offsets) - 1)[..., None], -1)[..., 0]
        hi = np.take_along_axis(strength, np.clip(best + 1, 0, len(offsets) - 1)[..., None], -1)[..., 0]
        curvature = lo - 2 * peak + hi
        frac = np.where(curvature < -1e-6, 0.5 * (lo - hi) / np.where(curvature < -1e-6, curvature, -1.0), 0.0)
        distance = offsets[best] + np.clip(frac, -0.5, 0.5) / scale                 # (N, 6, S)
        interior = (best > 0) & (best < len(offsets) - 1)
        level = np.median(strength, axis=-1)
        weight = np.where(interior & (peak > 2.0 * level + 1.0), peak, 0.0)
        step, turn_step, ok = _solve_rigid(pts - (centres + shift)[:, None, None, :], nrm, distance, weight)
        shift = shift + np.where(ok[:, None], step, 0.0)
        turn = turn + np.where(ok, turn_step, 0.0)
        support = (weight > 0).mean(axis=(1, 2))
    bad = (np.linalg.norm(shift, axis=1) > MAX_SHIFT) | (np.abs(np.degrees(turn)) > MAX_TURN_DEG)
    shift[bad] = 0.0
    turn[bad] = 0.0
    support[bad] = 0.0
    return shift, turn, support


def _sample(image: np.ndarray, px: np.ndarray) -> np.ndarray:
    """Bilinear samples of ``image`` at pixel positions ``px (..., 2)`` (x, y); 0 outside."""
    coords = np.stack([px[..., 1].ravel(), px[..., 0].ravel()])
    return map_coordinates(image, coords, order=1, mode="constant", cval=0.0).reshape(px.shape[:-1])


def _solve_rigid(rel: np.ndarray, nrm: np.ndarray, distance: np.ndarray, weight: np.ndarray):
    """Least-squares small rigid motion moving each sample along its normal by ``distance``.

    A point ``p`` (relative to the tile centre) moved by shift ``s`` and small turn
    ``w`` goes to ``p + s + w·perp(p)``; its displacement along the normal
    ``n`` is ``n·s + w·(n·perp(p))``.
    """
    n_tiles = rel.shape[0]
    perp = np.stack([-rel[..., 1], rel[..., 0]], axis=-1)                        # (N, 6, S, 2)
    nn = np.broadcast_to(nrm[:, :, None, :], rel.shape)
    design = np.concatenate([nn, np.sum(nn * perp, axis=-1, keepdims=True)], axis=-1).reshape(n_tiles, -1, 3)
    w = weight.reshape(n_tiles, -1)
    y = distance.reshape(n_tiles, -1)
    ata = np.einsum("nk,nki,nkj->nij", w, design, design) + np.eye(3) * 1e-6
    aty = np.einsum("nk,nki,nk->ni", w, design, y)
    # Enough edges in at least three directions are needed for a well-posed fit.
    sides_seen = (weight > 0).sum(axis=2) >= 3
    ok = sides_seen.sum(axis=1) >= 3
    solution = np.linalg.solve(ata, aty[..., None])[..., 0]
    return solution[:, :2], solution[:, 2], ok
