"""Refine each tile's pose on the tile edges seen in a rectified (top-down) view of the board.

The photo is resampled onto the board plane through the lattice model, so
every tile is a regular hexagon there whatever the camera. Along each of a
tile's six edges, the strongest edge response across the edge (tile borders
and the gaps between tiles) is found near where the current pose puts it; a
small motion of the hexagon (shift, turn and growth) is then fitted to those
points by robust least squares, with a weak prior that keeps a tile short of
edges on its cell; the tiles' common size is the median growth. Real tiles sit up to a few degrees turned and a
millimetre or so off the ideal lattice; this recovers that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

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
#: Residual (rectified pixels) beyond which an edge sample counts less and less.
OUTLIER_PX = 1.5
#: An edge sample finds an edge where the strongest response on its search line exceeds
#: :data:`EDGE_CONTRAST` times the line's :data:`EDGE_FLOOR_QUANTILE` (its flat part), plus one grey level.
#: A tile's border is often a broad edge (focus, the tile's side in perspective, a shadow) or several edges
#: close together (a printed frame line, the side, the gap) that fill half the search line; against the
#: line's median (until the seventeenth session) few samples of such tiles found one: 61 of 242 lattices
#: at the right scale on renders of training seeds had under a fifth of their tiles supported. The quantile
#: and factor were chosen on the geometry of 80 of those renders (models/README.md).
EDGE_FLOOR_QUANTILE = 0.25
EDGE_CONTRAST = 3.0
#: Weight of the prior "the tile sits on its lattice cell", in median edge samples, once the
#: lattice runs through the tiles (while it may still be off, a weak one: :data:`LOOSE_PRIOR`).
PRIOR_STRENGTH = 16.0
LOOSE_PRIOR = 1.0


def rectify(image: np.ndarray, model: LatticeModel, board_min: np.ndarray, board_max: np.ndarray,
            scale: float = RECTIFIED_SCALE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-down view of the board-plane box ``[board_min, board_max]``.

    Returns the rectified float32 image (channels kept), the mask of its
    pixels that come from inside the photo, and its origin (the board point of
    pixel (0, 0)).
    """
    width = int(math.ceil((board_max[0] - board_min[0]) * scale)) + 1
    height = int(math.ceil((board_max[1] - board_min[1]) * scale)) + 1
    photo = model.grid_to_image(np.arange(width) / scale + board_min[0], np.arange(height) / scale + board_min[1])
    # Shrinking the photo onto the rectified grid would alias: blur in proportion first. The photo is halved
    # (cv2.pyrDown) as often as that blurs no more than asked, and the rest of the blur is done on the halved photo,
    # about half the time of blurring and sampling the photo itself (models/README.md, seventy-third session).
    shrink = model.scale_px((board_min + board_max) / 2.0) / scale
    sigma = 0.5 * shrink if shrink > 1.5 else 0.0
    step = 2 ** blur_halvings(sigma)
    h, w = image.shape[:2]
    inside = (photo[..., 0] >= 0) & (photo[..., 0] <= w - 1) & (photo[..., 1] >= 0) & (photo[..., 1] <= h - 1)
    # Blur and sample only the part of the photo the view reaches (the board may fill a corner of it). The
    # part keeps a margin wider than the filters' kernels, starts on a pixel the whole photo's halvings keep, and
    # reaches the photo's border wherever the view does, so every rectified pixel is what the whole photo would give.
    x0, y0, x1, y1 = _reach(photo, (w, h), margin=int(math.ceil(4.0 * sigma)) + 2 + 2 * step)
    x0, y0 = x0 - x0 % step, y0 - y0 % step
    source = anti_aliased(image[y0:y1, x0:x1], sigma)
    photo -= np.float32([x0, y0])
    photo /= np.float32(step)
    rectified = cv2.remap(source, photo, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return rectified.reshape(height, width, -1), inside, board_min.astype(np.float64)


def halved_variance(halvings: int) -> float:
    """The Gaussian variance (pixels² of the photo) ``halvings`` successive ``cv2.pyrDown`` leave: each filters with
    the kernel ``[1, 4, 6, 4, 1] / 16`` (variance one pixel² of the image it halves) before dropping every other
    pixel, so the variances of the photo's pixels add up as ``1 + 4 + 16 + …``."""
    return (4 ** halvings - 1) / 3.0


def blur_halvings(sigma: float) -> int:
    """How often a photo may be halved before a Gaussian blur of ``sigma`` pixels: the most halvings that blur no
    more than that (:func:`halved_variance`)."""
    halvings = 0
    while halved_variance(halvings + 1) <= sigma * sigma:
        halvings += 1
    return halvings


def anti_aliased(image: np.ndarray, sigma: float) -> np.ndarray:
    """``image`` as float32, blurred by a Gaussian of ``sigma`` pixels for sampling at a coarser step: halved
    (``cv2.pyrDown``) :func:`blur_halvings` times, then blurred by the rest on the halved image. Pixel ``i`` of the
    result is the filtered pixel ``2**blur_halvings(sigma) * i`` of ``image`` (pyrDown keeps the even pixels)."""
    halvings = blur_halvings(sigma)
    for _ in range(halvings):
        image = cv2.pyrDown(image)
    return blurred(image, math.sqrt(max(sigma ** 2 - halved_variance(halvings), 0.0)) / 2 ** halvings)


def blurred(image: np.ndarray, sigma: float) -> np.ndarray:
    """``image`` as float32, Gaussian-blurred by ``sigma`` pixels where it is positive (kernel as
    ``cv2.GaussianBlur`` sizes it for float images: ``8·sigma + 1`` taps, odd; reflected border).

    The filter reads the photo's bytes and writes floats in one pass: converting the photo first and blurring the
    floats took nearly three times as long, about half of each top-down view's time (models/README.md,
    seventy-first session). The values differ from that in the last float32 digit only.
    """
    if sigma <= 0.0:
        return image.astype(np.float32)
    kernel = cv2.getGaussianKernel(int(round(8.0 * sigma + 1.0)) | 1, sigma, cv2.CV_32F)
    return cv2.sepFilter2D(image, cv2.CV_32F, kernel, kernel).reshape(image.shape)


def _reach(photo: np.ndarray, size: tuple[int, int], margin: int) -> tuple[int, int, int, int]:
    """Whole-pixel box ``(x0, y0, x1, y1)`` of the photo holding sample points ``(..., 2)`` and a margin."""
    width, height = size
    xs, ys = photo[..., 0], photo[..., 1]
    corners = np.array([[xs.min(), ys.min()], [xs.max(), ys.max()]], dtype=np.float64)
    if not np.isfinite(corners).all():  # a degenerate view: take the whole photo
        return 0, 0, width, height
    low, high = np.clip(corners, 0, [width - 1, height - 1])
    return (max(0, int(math.floor(low[0])) - margin), max(0, int(math.floor(low[1])) - margin),
            min(width, int(math.ceil(high[0])) + margin + 1), min(height, int(math.ceil(high[1])) + margin + 1))


def edge_response(rectified: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Per-channel gradients ``(2, H, W, C)`` (x, then y) of the rectified view; zero near the photo's border."""
    image = cv2.GaussianBlur(rectified, (0, 0), 0.8).reshape(rectified.shape)
    gradients = [cv2.Sobel(image, cv2.CV_32F, dx, dy, ksize=3).reshape(rectified.shape) / 8.0
                 for dx, dy in ((1, 0), (0, 1))]
    stack = np.stack(gradients)
    outside = cv2.dilate((~inside).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
    stack[:, outside] = 0.0
    return stack


@dataclass(frozen=True)
class TilePoses:
    """Each tile's pose relative to its lattice cell, in board units.

    Attributes
    ----------
    shift : ndarray (N, 2)
        Offset of each tile's centre from its lattice centre.
    turn : ndarray (N,)
        Turn in radians (positive turns +x towards +y of the board frame).
    size : float
        Tile circumradius in board units, common to all tiles (below 1 by the gaps).
    support : ndarray (N,)
        Share of edge samples that found an edge (0..1).
    """

    shift: np.ndarray
    turn: np.ndarray
    size: float
    support: np.ndarray

    def corners(self, centres: np.ndarray) -> np.ndarray:
        """Board-plane corners ``(N, 6, 2)`` of the posed tiles."""
        turned = np.einsum("nij,kj->nki", _rotations(self.turn), self.size * UNIT_CORNERS)
        return turned + (centres + self.shift)[:, None, :]


def refine_poses(gradients: np.ndarray, origin: np.ndarray, centres: np.ndarray,
                 scale: float = RECTIFIED_SCALE, iterations: int = 3, prior: float = PRIOR_STRENGTH) -> TilePoses:
    """Fit each hexagon's shift, turn and size to the edges of the rectified view.

    Parameters
    ----------
    gradients : ndarray (2, H, W, C)
        Of the rectified view (:func:`edge_response`).
    origin : board point of rectified pixel (0, 0).
    centres : ndarray (N, 2)
        Lattice centres of the tiles (board units).
    prior : float
        Weight, in median edge samples, of "the tile sits on its lattice cell".
    """
    n = len(centres)
    shift = np.zeros((n, 2))
    turn = np.zeros(n)
    size = np.ones(n)
    # Edge k joins corners k and k + 1; samples stay clear of the corners, where neighbours meet.
    a = UNIT_CORNERS
    b = np.roll(UNIT_CORNERS, -1, axis=0)
    t = EDGE_SAMPLES[None, :, None]
    base = a[:, None, :] * (1 - t) + b[:, None, :] * t                # (6, S, 2) points on the unit hexagon
    normals = (a + b) / np.linalg.norm(a + b, axis=1, keepdims=True)  # (6, 2) outward normals
    offsets = np.arange(-SEARCH_REACH, SEARCH_REACH + 1e-9, 1.0 / scale)
    weight = np.zeros((n, 6, len(EDGE_SAMPLES)))
    for iteration in range(iterations):
        rot = _rotations(turn)
        rel = np.einsum("nij,esj->nesi", rot, base) * size[:, None, None, None]
        pts = rel + (centres + shift)[:, None, None, :]
        nrm = np.einsum("nij,ej->nei", rot, normals)                              # (N, 6, 2)
        probe = pts[..., None, :] + offsets[None, None, None, :, None] * nrm[:, :, None, None, :]
        px = (probe - origin) * scale
        strength = _edge_strength(gradients, px, nrm[:, :, None, None, :])
        best = np.argmax(strength, axis=-1)
        peak = np.take_along_axis(strength, best[..., None], -1)[..., 0]
        # Sub-sample position of the peak by a parabola through its neighbours.
        lo = np.take_along_axis(strength, np.clip(best - 1, 0, len(offsets) - 1)[..., None], -1)[..., 0]
        hi = np.take_along_axis(strength, np.clip(best + 1, 0, len(offsets) - 1)[..., None], -1)[..., 0]
        curvature = lo - 2 * peak + hi
        frac = np.where(curvature < -1e-6, 0.5 * (lo - hi) / np.where(curvature < -1e-6, curvature, -1.0), 0.0)
        distance = offsets[best] + np.clip(frac, -0.5, 0.5) / scale                 # (N, 6, S)
        interior = (best > 0) & (best < len(offsets) - 1)
        level = np.quantile(strength, EDGE_FLOOR_QUANTILE, axis=-1)
        weight = np.where(interior & (peak > EDGE_CONTRAST * level + 1.0), peak, 0.0)
        if iteration > 0:
            # Samples far from where the current pose puts the edge caught texture, not the tile's border.
            weight = weight / (1.0 + (distance * scale / OUTLIER_PX) ** 2)
        step = _solve_pose(rel, nrm, distance, weight, prior)
        shift = shift + step[:, :2]
        turn = turn + step[:, 2]
        size = size * (1.0 + step[:, 3])
    support = (weight > 0).mean(axis=(1, 2))
    bad = (np.linalg.norm(shift, axis=1) > MAX_SHIFT) | (np.abs(np.degrees(turn)) > MAX_TURN_DEG)
    shift[bad] = 0.0
    turn[bad] = 0.0
    support[bad] = 0.0
    good = support >= 0.5
    common_size = float(np.clip(np.median(size[good]), 0.9, 1.02)) if good.any() else 1.0
    return TilePoses(shift, turn, common_size, support)


def _rotations(turn: np.ndarray) -> np.ndarray:
    cos, sin = np.cos(turn), np.sin(turn)
    return np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)


def _edge_strength(gradients: np.ndarray, px: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """Colour gradient across ``normal`` at rectified pixels ``px``: root of the channels' squares."""
    flat = px.reshape(-1, 2).astype(np.float32)
    # cv2.remap wants a 2-D map with sides under SHRT_MAX: fold the list of samples into rows.
    width = 1024
    grid = np.concatenate([flat, np.full(((-len(flat)) % width, 2), -10.0, np.float32)]).reshape(-1, width, 2)
    # All channels of a direction in one remap (each channel is sampled as on its own): a third of the calls, and
    # no copy of a strided channel each (models/README.md, seventy-fourth session).
    along_x, along_y = (cv2.remap(g, grid, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0.0)
                        .reshape(-1, g.shape[-1])[: len(flat)] for g in gradients)
    energy = np.zeros(px.shape[:-1])
    for channel in range(along_x.shape[1]):
        energy += np.square(along_x[:, channel].reshape(px.shape[:-1]) * normal[..., 0]
                            + along_y[:, channel].reshape(px.shape[:-1]) * normal[..., 1])
    return np.sqrt(energy)


def _solve_pose(rel: np.ndarray, nrm: np.ndarray, distance: np.ndarray, weight: np.ndarray,
                prior: float) -> np.ndarray:
    """Least-squares small pose change moving each sample along its normal by ``distance``.

    A point ``p`` (relative to the tile centre) under shift ``s``, small turn
    ``w`` and relative growth ``g`` goes to ``p + s + w·perp(p) + g·p``; its
    displacement along the normal ``n`` is ``n·s + w·(n·perp(p)) + g·(n·p)``.
    A weak prior keeps a tile with few edges where the lattice puts it.
    Returns ``(N, 4)``: shift x, shift y, turn, growth.
    """
    n_tiles = rel.shape[0]
    perp = np.stack([-rel[..., 1], rel[..., 0]], axis=-1)                        # (N, 6, S, 2)
    nn = np.broadcast_to(nrm[:, :, None, :], rel.shape)
    design = np.concatenate([nn, np.sum(nn * perp, axis=-1, keepdims=True),
                             np.sum(nn * rel, axis=-1, keepdims=True)], axis=-1).reshape(n_tiles, -1, 4)
    w = weight.reshape(n_tiles, -1)
    y = distance.reshape(n_tiles, -1)
    damping = prior * np.median(w[w > 0]) if np.any(w > 0) else 1.0
    ata = np.einsum("nk,nki,nkj->nij", w, design, design) + np.eye(4) * damping
    aty = np.einsum("nk,nki,nk->ni", w, design, y)
    return np.linalg.solve(ata, aty[..., None])[..., 0]
