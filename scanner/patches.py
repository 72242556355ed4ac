"""Warping a tile of a photo to the small canonical patches the classifiers read.

Two views of a tile are used:

* the **hex patch** (:func:`hex_patches`): the tile's top face rectified by the
  homography that sends its six image corners to a regular hexagon, corner
  ``k`` at ``30 + 60·k`` degrees counter-clockwise. In it sector ``i`` always
  sits at the same place, so the sector classifier reads all twelve at once.
* the **piece crop** (:func:`piece_crops`): a window in image axes around the
  tile, scaled by the tile's size but not rotated, because a standing piece
  rises towards the top of the photo whatever the board's rotation; the window
  reaches further up than down for that reason.

Both sample from an image pyramid so that a big tile shrunk to a small patch is
averaged, not aliased.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from fjords.geometry import SECTORS, corner_angle

HEX_PATCH = 48
"""Side of the hex patch in pixels."""
HEX_MARGIN = 1.12
"""Half the hex patch side over the hexagon's circumradius: room for corner errors."""
REFINE_STEPS = 3
"""Gauss-Newton steps that refine a hex homography's linear fit (:func:`hex_homographies`): on tiles of scans they
bring it within 0.002 px of cv2's fit where it samples the patch, and on corners jittered by two pixels two steps
fell short of cv2's reprojection error."""
PIECE_CROP = 64
"""Side of the piece crop in pixels."""
PIECE_WINDOW = (-1.5, 1.5, -2.0, 1.0)
"""Piece crop window ``(x0, x1, y0, y1)`` around the tile centre, in tile radii (y down)."""


def canonical_corners(size: int = HEX_PATCH, margin: float = HEX_MARGIN) -> np.ndarray:
    """The six corners of the regular hexagon of a ``size`` hex patch, shape (6, 2).

    Corner ``k`` lies at ``30 + 60·k`` degrees counter-clockwise from +x, with
    image y pointing down.
    """
    c = size / 2.0
    radius = c / margin
    angles = np.radians([corner_angle(k) for k in range(6)])
    return np.stack([c + radius * np.cos(angles), c - radius * np.sin(angles)], axis=1)


def sector_triangles(corners: np.ndarray) -> np.ndarray:
    """The twelve sector triangles (centre first) of tiles with these corners: (n, 12, 3, 2) from (n, 6, 2), image
    or patch pixels.

    Edge ``d`` runs from corner ``d − 1`` (at ``60·d − 30`` degrees) to corner
    ``d``; sector ``2d`` is its first half, ``2d + 1`` its second.
    """
    corners = np.asarray(corners, dtype=np.float64).reshape(-1, 6, 2)
    start = np.roll(corners, 1, axis=1)  # edge d's first corner, d − 1
    middle = (start + corners) / 2.0
    triangles = np.empty((len(corners), SECTORS, 3, 2))
    triangles[:, :, 0] = corners.mean(axis=1)[:, None]
    triangles[:, 0::2, 1], triangles[:, 0::2, 2] = start, middle
    triangles[:, 1::2, 1], triangles[:, 1::2, 2] = middle, corners
    return triangles


def sector_polygons(size: int = HEX_PATCH, margin: float = HEX_MARGIN) -> np.ndarray:
    """The twelve sector triangles of a hex patch, shape (12, 3, 2)."""
    return sector_triangles(canonical_corners(size, margin))[0]


def tile_radius(corners_px: np.ndarray) -> float:
    """The tile's size in the photo: the largest corner distance from its centre.

    Foreshortening shrinks a tile along one axis only, so the largest distance
    is close to the true circumradius in pixels whatever the camera elevation.
    """
    corners = np.asarray(corners_px, dtype=np.float64)
    return max(float(np.max(np.linalg.norm(corners - corners.mean(axis=0), axis=1))), 1e-3)


class Pyramid:
    """An image and its successive halvings, for alias-free sampling at any scale.

    Parameters
    ----------
    image : (H, W, 3) uint8 array
    levels : int
        Number of halvings kept (the first level is the image itself).
    """

    def __init__(self, image: np.ndarray, levels: int = 5):
        self.levels = [image]
        for _ in range(levels - 1):
            if min(self.levels[-1].shape[:2]) < 32:
                break
            self.levels.append(cv2.pyrDown(self.levels[-1]))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.levels[0].shape

    def level_for(self, shrink: float) -> int:
        """The coarsest level that still has at least one source pixel per output pixel."""
        level = int(math.floor(math.log2(max(shrink, 1.0))))
        return min(max(level, 0), len(self.levels) - 1)

    def warp(self, matrix: np.ndarray, size: int, shrink: float) -> np.ndarray:
        """Sample a ``size`` square through ``matrix`` (3×3, image px of level 0 → output px)."""
        level = self.level_for(shrink)
        scale = np.diag([2.0 ** level, 2.0 ** level, 1.0])
        # Pyramid level pixel centres: x_level = (x0 + 0.5) / 2**level - 0.5.
        offset = 0.5 - 0.5 / 2.0 ** level
        to_level0 = np.array([[1, 0, offset], [0, 1, offset], [0, 0, 1.0]]) @ scale
        m = matrix @ to_level0
        return cv2.warpPerspective(self.levels[level], m, (size, size), flags=cv2.INTER_LINEAR,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))


def hex_homography(corners_px: np.ndarray, size: int = HEX_PATCH, margin: float = HEX_MARGIN) -> np.ndarray:
    """The 3×3 homography sending a tile's image corners onto the hex patch's corners."""
    return hex_homographies([corners_px], size, margin)[0]


def hex_homographies(corners: list[np.ndarray] | np.ndarray, size: int = HEX_PATCH, margin: float = HEX_MARGIN
                     ) -> np.ndarray:
    """:func:`hex_homography` of several tiles at once, shape (n, 3, 3).

    The least-squares fit cv2.findHomography makes of six points (a normalised direct linear transform, refined on
    the patch-side reprojection error; the refinement here goes on where cv2's sometimes stops short), done for all
    tiles together: one cv2 call per tile, with its Python around it, took 48 ms of a photo's scan (models/README.md,
    seventy-fourth session). Tiles whose corners fit no such map (collapsed, or all on a line) take the one-tile path.
    """
    src = np.asarray(corners, dtype=np.float64).reshape(-1, 6, 2)
    if not len(src):
        return np.zeros((0, 3, 3))
    dst = canonical_corners(size, margin)
    with np.errstate(all="ignore"):  # collapsed corners divide by a zero spread; they are caught below
        src_scale, src_shift = _normalising_similarity(src)
        dst_scale, dst_shift = _normalising_similarity(dst[None])
        s = src * src_scale[:, None, None] + src_shift[:, None, :]
        d = dst * dst_scale[0] + dst_shift[0]
        d = np.broadcast_to(d, s.shape)
        spread = np.isfinite(s).all(axis=(1, 2))
        normalised, well_posed = _refined_dlt(np.where(spread[:, None, None], s, d), d)
        well_posed &= spread
        # Undo the normalisations: H = D⁻¹ · Hn · S with S, D the similarities applied to the points.
        to_src = np.zeros((len(src), 3, 3))
        to_src[:, 0, 0] = to_src[:, 1, 1] = src_scale
        to_src[:, :2, 2] = src_shift
        to_src[:, 2, 2] = 1.0
        from_dst = np.array([[1.0 / dst_scale[0], 0.0, -dst_shift[0, 0] / dst_scale[0]],
                             [0.0, 1.0 / dst_scale[0], -dst_shift[0, 1] / dst_scale[0]], [0.0, 0.0, 1.0]])
        matrices = from_dst @ normalised @ to_src
        matrices /= matrices[:, 2:, 2:]
    well_posed &= np.isfinite(matrices).all(axis=(1, 2))
    for n in np.flatnonzero(~well_posed):
        matrices[n] = _one_tile_homography(src[n], dst)
    return matrices


def _normalising_similarity(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scale (n,) and shift (n, 2) that move each set of points (n, k, 2) to its centroid at the origin and a mean
    distance of √2 from it (Hartley's normalisation, which keeps the linear fit well conditioned)."""
    centroid = points.mean(axis=1)
    scale = math.sqrt(2.0) / np.linalg.norm(points - centroid[:, None, :], axis=2).mean(axis=1)
    return scale, -scale[:, None] * centroid


def _refined_dlt(src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Homographies (n, 3, 3) sending normalised points ``src`` (n, k, 2) onto ``dst``: the direct linear transform,
    then :data:`REFINE_STEPS` Gauss-Newton steps on the reprojection error, and whether each fit is well posed."""
    x, y = src[..., 0], src[..., 1]
    u, v = dst[..., 0], dst[..., 1]
    rows = _projection_rows(x, y, u, v)
    values, vectors = np.linalg.eigh(np.einsum("nki,nkj->nij", rows, rows))
    # One map fits where a single direction of the nine leaves the equations nearly unbroken (and it keeps the
    # points' centroid in front of the patch).
    well_posed = (values[:, 1] > 1e-9 * values[:, -1]) & (np.abs(vectors[:, 8, 0]) > 1e-9)
    h = np.where(well_posed[:, None], vectors[:, :, 0], [1.0, 0, 0, 0, 1.0, 0, 0, 0, 1.0])
    h = h[:, :8] / h[:, 8:]
    for _ in range(REFINE_STEPS):
        w = h[:, None, 6] * x + h[:, None, 7] * y + 1.0
        pu = (h[:, None, 0] * x + h[:, None, 1] * y + h[:, None, 2]) / w
        pv = (h[:, None, 3] * x + h[:, None, 4] * y + h[:, None, 5]) / w
        residual = np.concatenate([pu - u, pv - v], axis=1)
        # The derivatives of the projections by the eight entries are the linear rows at the projected points, over w.
        jacobian = _projection_rows(x, y, pu, pv)[..., :8] / np.concatenate([w, w], axis=1)[..., None]
        normal = np.einsum("nki,nkj->nij", jacobian, jacobian)
        normal[~well_posed] = np.eye(8)
        # Levenberg-Marquardt's damping, too small to move a well-posed step, keeps the solve from failing on the rest.
        normal += 1e-12 * np.trace(normal, axis1=1, axis2=2)[:, None, None] * np.eye(8)
        h = h - np.linalg.solve(normal, np.einsum("nki,nk->ni", jacobian, residual)[..., None])[..., 0]
    return np.concatenate([h, np.ones((len(h), 1))], axis=1).reshape(-1, 3, 3), well_posed


def _projection_rows(x: np.ndarray, y: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The direct linear transform's rows (n, 2k, 9) of points ``(x, y)`` (n, k) seen at ``(u, v)``: first the k
    rows of the u equations, then the k of the v equations."""
    one, zero = np.ones_like(x), np.zeros_like(x)
    return np.concatenate([np.stack([x, y, one, zero, zero, zero, -u * x, -u * y, -u], axis=-1),
                           np.stack([zero, zero, zero, x, y, one, -v * x, -v * y, -v], axis=-1)], axis=1)


def _one_tile_homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    matrix, _ = cv2.findHomography(src, dst, 0)
    if matrix is None:  # degenerate corners: fall back to the best affine map
        affine, _ = cv2.estimateAffine2D(src, dst)
        matrix = None if affine is None else np.vstack([affine, [0, 0, 1]])
    if matrix is None:  # collapsed corners: at least centre and scale are known
        scale = float(np.linalg.norm(dst - dst.mean(axis=0), axis=1).mean()) / max(tile_radius(src), 1e-6)
        shift = dst.mean(axis=0) - scale * src.mean(axis=0)
        matrix = np.array([[scale, 0.0, shift[0]], [0.0, scale, shift[1]], [0.0, 0.0, 1.0]])
    return matrix


def hex_patches(pyramid: Pyramid, corners: list[np.ndarray], size: int = HEX_PATCH,
                margin: float = HEX_MARGIN, matrices: list[np.ndarray] | None = None) -> np.ndarray:
    """Hex patches of several tiles, shape (n, size, size, 3) uint8 BGR; ``matrices`` are the tiles'
    :func:`hex_homographies` where the caller has them."""
    matrices = hex_homographies(corners, size, margin) if matrices is None else matrices
    out = np.zeros((len(corners), size, size, 3), np.uint8)
    for n, (c, matrix) in enumerate(zip(corners, matrices, strict=True)):
        shrink = tile_radius(c) * 2.0 * margin / size
        out[n] = pyramid.warp(matrix, size, shrink)
    return out


def piece_window_matrix(corners_px: np.ndarray, size: int = PIECE_CROP) -> np.ndarray:
    """The 3×3 similarity (no rotation) from image px to a tile's piece crop px."""
    corners = np.asarray(corners_px, dtype=np.float64)
    cx, cy = corners.mean(axis=0)
    radius = tile_radius(corners)
    x0, x1, y0, y1 = PIECE_WINDOW
    sx = size / ((x1 - x0) * radius)
    sy = size / ((y1 - y0) * radius)
    return np.array([[sx, 0, -(cx + x0 * radius) * sx], [0, sy, -(cy + y0 * radius) * sy], [0, 0, 1.0]])


def crop_points_to_image(corners_px: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Image px (k, 2) of points given in crop units (0..1; any shape holding k x, y pairs) on a tile's piece crop,
    such as a piece model's base and top."""
    return apply_homography(np.linalg.inv(piece_window_matrix(corners_px)), np.reshape(points, (-1, 2)) * PIECE_CROP)


def piece_crops(pyramid: Pyramid, corners: list[np.ndarray], size: int = PIECE_CROP) -> np.ndarray:
    """Piece crops of several tiles, shape (n, size, size, 3) uint8 BGR."""
    out = np.zeros((len(corners), size, size, 3), np.uint8)
    x0, x1, _, _ = PIECE_WINDOW
    for n, c in enumerate(corners):
        shrink = tile_radius(c) * (x1 - x0) / size
        out[n] = pyramid.warp(piece_window_matrix(c, size), size, shrink)
    return out


CLOSE_UP = 40
"""Side of a piece close-up in pixels."""
CLOSE_UP_RADII = 1.2
"""Width of a piece close-up in tile radii (a piece seen from low down is almost a radius tall)."""


def close_up_matrix(centre_px, radius_px: float, size: int = CLOSE_UP) -> np.ndarray:
    """The 3×3 similarity (no rotation) from image px to a close-up of a piece centred on ``centre_px``."""
    s = size / (CLOSE_UP_RADII * radius_px)
    cx, cy = centre_px
    return np.array([[s, 0, size / 2.0 - 0.5 - s * cx], [0, s, size / 2.0 - 0.5 - s * cy], [0, 0, 1.0]])


def close_ups(pyramid: Pyramid, centres: np.ndarray, radii: np.ndarray, size: int = CLOSE_UP) -> np.ndarray:
    """Close-ups of pieces at image points ``centres`` (n, 2) on tiles of radius ``radii`` px, (n, s, s, 3)."""
    out = np.zeros((len(centres), size, size, 3), np.uint8)
    for n, (centre, radius) in enumerate(zip(centres, radii)):
        shrink = CLOSE_UP_RADII * radius / size
        out[n] = pyramid.warp(close_up_matrix(centre, radius, size), size, shrink)
    return out


def apply_homography(matrix: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Map (n, 2) points through a 3×3 homography."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    h = np.hstack([pts, np.ones((len(pts), 1))]) @ np.asarray(matrix, dtype=np.float64).T
    return h[:, :2] / h[:, 2:3]


def sector_at(corners_px: np.ndarray, point_px: np.ndarray) -> int:
    """The sector of a tile whose triangle (extended outwards) holds an image point."""
    return int(sectors_at([corners_px], np.reshape(point_px, (1, 2)))[0])


def sectors_at(corners: list[np.ndarray] | np.ndarray, points_px: np.ndarray) -> np.ndarray:
    """:func:`sector_at` of several tiles, each with its own image point ``points_px`` (n, 2): sectors (n,) int."""
    patch_points = [apply_homography(matrix, point) for matrix, point in
                    zip(hex_homographies(corners), np.reshape(points_px, (-1, 2)), strict=True)]
    x, y = (np.reshape(patch_points, (-1, 2)) - HEX_PATCH / 2.0).T
    angle = np.degrees(np.arctan2(-y, x)) % 360.0
    return ((angle + 30.0) // 30.0).astype(int) % SECTORS
