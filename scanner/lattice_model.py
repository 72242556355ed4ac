"""The lattice's camera model: board plane → photo, as a homography plus barrel distortion.

The board plane is the spec's top-down frame with circumradius 1: the centre
of hex ``(q, r)`` is ``(√3·(q + r/2), 1.5·r)``, y growing "downwards" (towards
direction 4/5), so that an unmirrored view of the table maps it with a
homography of positive orientation. A single radial parameter ``k1`` about the
image centre models phone-lens barrel distortion::

    photo = c + (ideal − c) · (1 + k1 · |ideal − c|² / n²)

with ``n`` the longer image side (so ``k1`` does not depend on resolution).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable

import numpy as np
from scipy.optimize import least_squares

from fjords.geometry import Hex, corner_angle

SQRT3 = math.sqrt(3.0)
#: Tile corners about a centre at circumradius 1, corner ``k`` at ``30 + 60·k`` degrees counter-clockwise.
UNIT_CORNERS = np.array([(math.cos(math.radians(corner_angle(k))), -math.sin(math.radians(corner_angle(k))))
                         for k in range(6)])
#: Fewest tiles whose centres (or edges) are trusted to measure the lens's barrel distortion ``k1``.
MIN_LENS_TILES = 12
#: A homography whose last entry is this small against its largest sends the board's origin (nearly) to infinity.
DEGENERATE_SCALE = 1e-9
#: Board-plane step of each lattice direction ``d``.
DIRECTION_STEPS = np.array([(SQRT3 * (dq + dr / 2.0), 1.5 * dr) for dq, dr in
                            ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))])


def hex_centres(hexes: Iterable[Hex] | np.ndarray) -> np.ndarray:
    """Board-plane centres ``(N, 2)`` of axial positions (Hexes or an ``(N, 2)`` array of q, r)."""
    qr = np.asarray(list(hexes) if not isinstance(hexes, np.ndarray) else hexes, dtype=np.float64).reshape(-1, 2)
    return np.stack([SQRT3 * (qr[:, 0] + qr[:, 1] / 2.0), 1.5 * qr[:, 1]], axis=-1)


def hex_corners(hexes: Iterable[Hex] | np.ndarray) -> np.ndarray:
    """Board-plane corners ``(N, 6, 2)`` of axial positions."""
    return hex_centres(hexes)[:, None, :] + UNIT_CORNERS[None, :, :]


def nearest_hex(board_pts: np.ndarray) -> np.ndarray:
    """Axial ``(N, 2)`` integer positions of the hexes containing board-plane points."""
    pts = np.asarray(board_pts, dtype=np.float64).reshape(-1, 2)
    r = pts[:, 1] / 1.5
    q = pts[:, 0] / SQRT3 - r / 2.0
    # Cube rounding: round all three cube coordinates, fix the one with the largest error.
    x, z = q, r
    y = -x - z
    rx, ry, rz = np.round(x), np.round(y), np.round(z)
    dx, dy, dz = np.abs(rx - x), np.abs(ry - y), np.abs(rz - z)
    fix_x = (dx > dy) & (dx > dz)
    fix_z = ~fix_x & (dz >= dy)
    rx = np.where(fix_x, -ry - rz, rx)
    rz = np.where(fix_z, -rx - ry, rz)
    return np.stack([rx, rz], axis=-1).astype(np.int64)


@dataclass(frozen=True)
class LatticeModel:
    """Board plane → photo pixels.

    Attributes
    ----------
    homography : ndarray (3, 3)
        Board plane → ideal (undistorted) pixel coordinates.
    k1 : float
        Radial distortion (negative is barrel) on coordinates divided by ``norm``.
    centre : tuple of float
        Distortion centre in pixels (the image centre).
    norm : float
        Length that normalises radii (the longer image side).
    """

    homography: np.ndarray
    k1: float
    centre: tuple[float, float]
    norm: float

    @classmethod
    def for_image(cls, homography: np.ndarray, image_size: tuple[int, int], k1: float = 0.0) -> "LatticeModel":
        """A model for an image of ``(width, height)`` pixels."""
        width, height = image_size
        return cls(np.asarray(homography, dtype=np.float64), float(k1),
                   ((width - 1) / 2.0, (height - 1) / 2.0), float(max(width, height)))

    @property
    def fits_a_view(self) -> bool:
        """False for the all-NaN model of points that fit no view of a plane (:func:`direct_homography`)."""
        return bool(np.all(np.isfinite(self.homography)))

    def board_to_image(self, pts: np.ndarray) -> np.ndarray:
        """Photo pixel coordinates of board-plane points ``(..., 2)``."""
        return self.distort(apply_homography(self.homography, pts))

    def grid_to_image(self, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        """Photo pixels, float32 ``(len(ys), len(xs), 2)``, of the board points ``(xs[j], ys[i])``: a map for
        ``cv2.remap``, with the values of :meth:`board_to_image` rounded to float32.

        Computed on the grid's rows and columns broadcast, never on a list of its points: the views from above
        sample millions of board points, and the general path's temporaries made mapping them a tenth of a
        scan's time (models/README.md, sixtieth session).
        """
        h = self.homography
        x = np.asarray(xs, dtype=np.float64)[None, :]
        y = np.asarray(ys, dtype=np.float64)[:, None]
        w = h[2, 0] * x + h[2, 1] * y
        w += h[2, 2]
        w[np.abs(w) < 1e-12] = 1e-12
        # In place, in the order of operations of apply_homography and distort (whose matrix product may round the
        # last float64 digit otherwise): the same values to float32 precision.
        ideal = []
        for row, centre in enumerate(self.centre):
            d = h[row, 0] * x + h[row, 1] * y
            d += h[row, 2]
            d /= w
            d -= centre
            ideal.append(d)
        grow = ideal[0] * ideal[0]
        grow += ideal[1] * ideal[1]
        grow /= self.norm * self.norm
        grow *= self.k1
        grow += 1.0
        photo = np.empty((len(ys), len(xs), 2), dtype=np.float32)
        for axis, (d, centre) in enumerate(zip(ideal, self.centre)):
            d *= grow
            d += centre
            photo[..., axis] = d
        return photo

    def image_to_board(self, px: np.ndarray) -> np.ndarray:
        """Board-plane points seen at photo pixels ``(..., 2)``."""
        return apply_homography(self._inverse, self.undistort(px))

    @cached_property
    def _inverse(self) -> np.ndarray:
        # The lattice search maps thousands of point sets through one model: invert it once.
        return np.linalg.inv(self.homography)

    def distort(self, ideal: np.ndarray) -> np.ndarray:
        c = np.asarray(self.centre)
        d = np.asarray(ideal, dtype=np.float64) - c
        r2 = _squared_length(d) / (self.norm * self.norm)
        return c + d * (1.0 + self.k1 * r2)

    def undistort(self, photo: np.ndarray, iterations: int = 6) -> np.ndarray:
        c = np.asarray(self.centre)
        dd = np.asarray(photo, dtype=np.float64) - c
        d = dd.copy()
        for _ in range(iterations if self.k1 != 0.0 else 0):  # without distortion d = dd, exactly
            r2 = _squared_length(d) / (self.norm * self.norm)
            d = dd / (1.0 + self.k1 * r2)
        return c + d

    def scale_px(self, board_pt: np.ndarray) -> float:
        """Pixels per board unit (tile circumradius) near a board point: root of the local area scale."""
        p = np.asarray(board_pt, dtype=np.float64).reshape(1, 2)
        probe = np.concatenate([p, p + [[1e-3, 0.0]], p + [[0.0, 1e-3]]])
        img = self.board_to_image(probe)
        jac = np.stack([img[1] - img[0], img[2] - img[0]], axis=-1) / 1e-3
        return float(math.sqrt(abs(np.linalg.det(jac))))

    def is_mirrored(self, board_pt: np.ndarray) -> bool:
        """Whether the map reverses orientation at a board point (never true for a real photo)."""
        p = np.asarray(board_pt, dtype=np.float64).reshape(1, 2)
        img = self.board_to_image(np.concatenate([p, p + [[1e-3, 0.0]], p + [[0.0, 1e-3]]]))
        return bool(np.linalg.det(np.stack([img[1] - img[0], img[2] - img[0]], axis=-1)) < 0)


def _squared_length(d: np.ndarray) -> np.ndarray:
    """``|d|²`` over the last axis (of length 2), keeping it; as ``np.sum`` gives it, without its slow reduction."""
    return (d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1])[..., None]


def apply_homography(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    pts = np.asarray(pts, dtype=np.float64)
    flat = pts.reshape(-1, 2)
    mapped = flat @ h[:, :2].T + h[:, 2]
    w = mapped[:, 2:3]
    w = np.where(np.abs(w) < 1e-12, 1e-12, w)
    return (mapped[:, :2] / w).reshape(pts.shape)


def fit_model(board_pts: np.ndarray, image_pts: np.ndarray, image_size: tuple[int, int], *,
              initial: LatticeModel | None = None, fit_distortion: bool = True,
              weights: np.ndarray | None = None, loss_scale_px: float | None = None) -> LatticeModel:
    """Least-squares homography (+ ``k1``) mapping board points onto photo points.

    Parameters
    ----------
    board_pts, image_pts : ndarray (N, 2)
        Correspondences; at least 4 (5 with distortion) in general position.
    image_size : (width, height)
    initial : LatticeModel, optional
        Starting point; by default a direct linear fit without distortion.
    fit_distortion : bool
        Also fit ``k1`` (needs points spread over the image to be meaningful).
    weights : ndarray (N,), optional
        Per-correspondence weights.
    loss_scale_px : float, optional
        When given, a robust (soft L1) loss with this inlier scale in pixels.

    Returns
    -------
    LatticeModel
        Its homography is all NaN where the points fit no view of a plane (:func:`direct_homography`) or
        ``initial``'s is: callers test :attr:`LatticeModel.fits_a_view`.
    """
    board_pts = np.asarray(board_pts, dtype=np.float64).reshape(-1, 2)
    image_pts = np.asarray(image_pts, dtype=np.float64).reshape(-1, 2)
    if initial is None:
        initial = LatticeModel.for_image(direct_homography(board_pts, image_pts), image_size)
    if not initial.fits_a_view:
        return initial
    norm = initial.norm
    centre = np.asarray(initial.centre)
    # Condition: board points centred, image points centred and divided by the image size.
    b_mean = board_pts.mean(axis=0)
    b_scale = max(float(np.abs(board_pts - b_mean).max()), 1.0)
    to_board = np.array([[b_scale, 0, b_mean[0]], [0, b_scale, b_mean[1]], [0, 0, 1.0]])
    to_image = np.array([[1 / norm, 0, -centre[0] / norm], [0, 1 / norm, -centre[1] / norm], [0, 0, 1.0]])
    h0 = to_image @ initial.homography @ to_board
    h0 = h0 / np.linalg.norm(h0)
    pivot = np.unravel_index(np.argmax(np.abs(h0)), (3, 3))
    h0 = h0 / h0[pivot]
    free = np.ones(9, dtype=bool)
    free[np.ravel_multi_index(pivot, (3, 3))] = False
    nb = (board_pts - b_mean) / b_scale
    target = (image_pts - centre) / norm
    sqrt_w = np.ones(len(nb)) if weights is None else np.sqrt(np.asarray(weights, dtype=np.float64))

    def unpack(params: np.ndarray) -> tuple[np.ndarray, float]:
        h = np.ones(9)
        h[free] = params[:8]
        return h.reshape(3, 3), (params[8] if fit_distortion else initial.k1)

    def residuals(params: np.ndarray) -> np.ndarray:
        h, k1 = unpack(params)
        ideal = apply_homography(h, nb)
        mapped = ideal * (1.0 + k1 * _squared_length(ideal))
        return ((mapped - target) * sqrt_w[:, None]).ravel()

    homogeneous = np.hstack([nb, np.ones((len(nb), 1))])

    def jacobian(params: np.ndarray) -> np.ndarray:
        # Analytic: finite differences took one residual evaluation per parameter, most of a fit's time.
        h, k1 = unpack(params)
        mapped = homogeneous @ h.T
        w = np.where(np.abs(mapped[:, 2:3]) < 1e-12, 1e-12, mapped[:, 2:3])  # as apply_homography keeps it finite
        ideal = mapped[:, :2] / w                                                     # (N, 2)
        r2 = _squared_length(ideal)                                                   # (N, 1)
        # d ideal_a / d h[b, j] = (delta_ab - ideal_a delta_b2) p_j / w for rows b of the homography.
        d_ideal = np.zeros((len(nb), 2, 3, 3))
        scaled = homogeneous / w
        d_ideal[:, 0, 0], d_ideal[:, 1, 1] = scaled, scaled
        d_ideal[:, :, 2] = -ideal[:, :, None] * scaled[:, None, :]
        # mapped_a = ideal_a (1 + k1 r2): d mapped_a / d ideal_c = delta_ac (1 + k1 r2) + 2 k1 ideal_a ideal_c.
        stretch = np.eye(2) * (1.0 + k1 * r2)[:, :, None] + 2.0 * k1 * ideal[:, :, None] * ideal[:, None, :]
        columns = np.einsum("nac,ncm->nam", stretch, d_ideal.reshape(len(nb), 2, 9))[:, :, free]
        if fit_distortion:
            columns = np.concatenate([columns, (ideal * r2)[:, :, None]], axis=2)
        return (columns * sqrt_w[:, None, None]).reshape(2 * len(nb), -1)

    x0 = np.concatenate([h0.ravel()[free], [initial.k1] if fit_distortion else []])
    kwargs = {}
    if loss_scale_px is not None:
        kwargs = {"loss": "soft_l1", "f_scale": loss_scale_px / norm}
    solution = least_squares(residuals, x0, jac=jacobian, method="trf" if kwargs else "lm", **kwargs)
    h, k1 = unpack(solution.x)
    homography = np.linalg.inv(to_image) @ h @ np.linalg.inv(to_board)
    return LatticeModel(homography / homography[2, 2], float(k1), initial.centre, norm)


def direct_homography(board_pts: np.ndarray, image_pts: np.ndarray) -> np.ndarray:
    """Normalised DLT homography (least squares, no distortion); affine when points are few.

    Points that fit no view of a plane (the least-squares map sends the board's origin to infinity, as a
    lattice hypothesis grown onto wrong centres can) give a matrix of NaN (:data:`DEGENERATE_SCALE`) instead
    of a division by zero: callers test it with ``np.isfinite`` or, on a model made from it, :attr:`LatticeModel.fits_a_view`.
    """
    board_pts = np.asarray(board_pts, dtype=np.float64).reshape(-1, 2)
    image_pts = np.asarray(image_pts, dtype=np.float64).reshape(-1, 2)
    if len(board_pts) < 4:
        return affine_from(board_pts, image_pts)
    tb, ti = _normaliser(board_pts), _normaliser(image_pts)
    b = apply_homography(tb, board_pts)
    i = apply_homography(ti, image_pts)
    x, y, u, v = b[:, 0], b[:, 1], i[:, 0], i[:, 1]
    one, zero = np.ones_like(x), np.zeros_like(x)
    rows = np.stack([np.stack([x, y, one, zero, zero, zero, -u * x, -u * y, -u], axis=-1),
                     np.stack([zero, zero, zero, x, y, one, -v * x, -v * y, -v], axis=-1)], axis=1)
    _, _, vt = np.linalg.svd(rows.reshape(-1, 9))
    h = np.linalg.inv(ti) @ vt[-1].reshape(3, 3) @ tb
    if abs(h[2, 2]) <= DEGENERATE_SCALE * np.abs(h).max():
        return np.full((3, 3), np.nan)
    return h / h[2, 2]


def affine_from(board_pts: np.ndarray, image_pts: np.ndarray) -> np.ndarray:
    """Least-squares affine map as a 3×3 matrix (needs 3 points not on a line)."""
    ones = np.ones((len(board_pts), 1))
    a, *_ = np.linalg.lstsq(np.hstack([board_pts, ones]), image_pts, rcond=None)
    return np.vstack([a.T, [0.0, 0.0, 1.0]])


def _normaliser(pts: np.ndarray) -> np.ndarray:
    mean = pts.mean(axis=0)
    spread = max(float(np.sqrt(np.mean(np.sum((pts - mean) ** 2, axis=1)))), 1e-9)
    s = math.sqrt(2.0) / spread
    return np.array([[s, 0, -s * mean[0]], [0, s, -s * mean[1]], [0, 0, 1.0]])
