"""Stage 3: find the board — where the tile tops are, and where their centres are.

A small network (``models/tile_tops.onnx``, trained on renders by
:mod:`scanner.train_locate`) reads the photo shrunk to :data:`WORK_SIDE`
pixels and gives, at half that resolution, the probability of "top face of a
tile" and a centre map (each tile's distance transform over its peak: 1 at the
centre, 0 at the rim). The board is the largest group
of tile-top pixels; a photo with too little of it has no board (exit code 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from fjords.errors import FjordsError
from scanner.onnx_model import DEFAULT_MODELS_DIR, OnnxModel

WORK_SIDE = 512
OUTPUT_STRIDE = 2
DEFAULT_MODEL = DEFAULT_MODELS_DIR / "tile_tops.onnx"
#: Fewer tile-top pixels than this share of the map means no board.
MIN_BOARD_SHARE = 0.004
#: Smallest heat-map peak taken as a tile-centre candidate.
MIN_PEAK = 0.25
#: Side (map pixels) of the window a peak must be the maximum of: under the smallest tile's radius.
PEAK_WINDOW = 5


class NoBoardFound(FjordsError):
    """The photo shows no Fjords board (exit code 3)."""

    exit_code = 3


@dataclass(frozen=True)
class BoardRegion:
    """Where the board is, at the network's output resolution.

    Attributes
    ----------
    tile_probability : ndarray (h, w) float32
        Probability that each map pixel is the top face of a tile.
    centre_heat : ndarray (h, w) float32
        Centre map: 1 at tile centres, falling to 0 at their rims.
    map_scale : float
        Map pixels per photo pixel (photo coordinate ``x`` is map ``(x + 0.5)·s − 0.5``).
    bbox_px : tuple of float
        ``(x0, y0, x1, y1)`` of the board in photo pixels.
    image_size : tuple of int
        ``(width, height)`` of the photo.
    """

    tile_probability: np.ndarray
    centre_heat: np.ndarray
    map_scale: float
    bbox_px: tuple[float, float, float, float]
    image_size: tuple[int, int]

    def to_map(self, px: np.ndarray) -> np.ndarray:
        return (np.asarray(px, dtype=np.float64) + 0.5) * self.map_scale - 0.5

    def to_photo(self, map_px: np.ndarray) -> np.ndarray:
        return (np.asarray(map_px, dtype=np.float64) + 0.5) / self.map_scale - 0.5

    def centre_candidates(self, min_peak: float = MIN_PEAK) -> tuple[np.ndarray, np.ndarray]:
        """Local maxima of the centre map: photo positions ``(N, 2)`` and heights ``(N,)``."""
        return heat_peaks(self.centre_heat, min_peak, self.to_photo)


def work_size(width: int, height: int, side: int = WORK_SIDE) -> tuple[int, int]:
    """The network's input size for a photo: long side ``side``, both sides multiples of 8."""
    scale = side / max(width, height)
    return max(8, round(width * scale / 8) * 8), max(8, round(height * scale / 8) * 8)


class TileTopNet:
    """The tile-top network, loaded once."""

    def __init__(self, path: str | Path = DEFAULT_MODEL, threads: int = 2):
        self.model = OnnxModel(path, threads)
        self.version = self.model.version

    def maps(self, image_bgr: np.ndarray, side: int = WORK_SIDE) -> tuple[np.ndarray, np.ndarray, float]:
        """Tile-top probability and centre maps of a photo shrunk to ``side`` pixels, and the map scale.

        Each map is the mean of the network's reading of the photo and of its mirror image (mirrored
        back). A table photographed from the other side of the lamp looks mirrored, and the network
        was trained on mirrored photos too, so the second view is a second opinion: it steadies the
        centre peaks the lattice search starts from (on 120 renders of training seeds: silent sector
        errors 1,031 → 592, errors per board 40.1 → 31.5; models/README.md).
        """
        height, width = image_bgr.shape[:2]
        size = work_size(width, height, side)
        small = cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA)
        views = [self.model.run(view.transpose(2, 0, 1)[None])[0][0] for view in (small, small[:, ::-1])]
        out = 0.5 * (views[0] + views[1][:, :, ::-1])
        scale = size[0] / OUTPUT_STRIDE / width
        return out[0], out[1], scale


def locate_board(image_bgr: np.ndarray, net: TileTopNet, side: int = WORK_SIDE) -> BoardRegion:
    """Run the network on the photo shrunk to ``side`` pixels and keep the board.

    Raises :class:`NoBoardFound` when there is none.
    """
    probability, heat, scale = net.maps(image_bgr, side)
    tiles = probability > 0.5
    if tiles.mean() < MIN_BOARD_SHARE:
        raise NoBoardFound("no Fjords board found in the photo: frame the tiles so they fill most of the picture")
    # Tiles are separated by thin gaps: close them before looking for the main group.
    closed = cv2.morphologyEx(tiles.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    count, labels, stats, _ = cv2.connectedComponentsWithStats(closed, connectivity=8)
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = 1 + np.flatnonzero(areas >= 0.05 * areas.max())
    height, width = image_bgr.shape[:2]
    return BoardRegion(probability, heat, scale, mask_bbox_px(np.isin(labels, keep), scale), (width, height))


def mask_bbox_px(mask: np.ndarray, map_scale: float) -> tuple[float, float, float, float]:
    """``(x0, y0, x1, y1)`` in photo pixels of the outer edges of a map's true pixels (``map_scale`` map
    pixels per photo pixel, as :class:`BoardRegion`'s)."""
    ys, xs = np.nonzero(mask)
    edges = np.array([[xs.min(), ys.min()], [xs.max() + 1, ys.max() + 1]], dtype=np.float64) - 0.5
    photo = (edges + 0.5) / map_scale - 0.5
    return tuple(float(v) for v in photo.ravel())


def heat_peaks(heat: np.ndarray, min_peak: float, to_photo) -> tuple[np.ndarray, np.ndarray]:
    """Local maxima above ``min_peak``, refined to sub-pixel by a parabola through the log heat.

    Exact for Gaussian peaks; for the network's centre cones (smoothed here)
    it is a good first estimate, which the lattice fit refines on tile edges.
    """
    # A little smoothing breaks plateaus of a saturated output into single peaks.
    heat = cv2.GaussianBlur(heat, (0, 0), 1.0)
    dilated = cv2.dilate(heat, np.ones((PEAK_WINDOW, PEAK_WINDOW), np.uint8))
    ys, xs = np.nonzero((heat >= dilated) & (heat >= min_peak))
    if len(xs) == 0:
        return np.zeros((0, 2)), np.zeros(0)
    log = np.log(np.maximum(np.pad(heat, 1, mode="edge"), 1e-6))
    offsets = []
    for dy, dx in ((0, 1), (1, 0)):
        before = log[ys + 1 - dy, xs + 1 - dx]
        centre = log[ys + 1, xs + 1]
        after = log[ys + 1 + dy, xs + 1 + dx]
        curvature = before - 2.0 * centre + after
        step = np.where(curvature < -1e-9, 0.5 * (before - after) / np.where(curvature < -1e-9, curvature, -1.0), 0.0)
        offsets.append(np.clip(step, -0.5, 0.5))
    points = to_photo(np.stack([xs + offsets[0], ys + offsets[1]], axis=-1))
    return points, heat[ys, xs]
