"""A look at the board from straight above: the photo resampled on a first lattice's board plane, read again.

From a low camera the near tiles of a board are several times the size of the
far ones, and the tile-top network, which reads tiles best within a range of
sizes, reads no single shrinking of such a photo well: at one size the near
tiles break into several "centres", at another the far ones vanish, and the
lattice search in the photo must follow a strong perspective. A first lattice,
even one right only on part of the board, knows the perspective. Resampling
the photo on that lattice's board plane gives a view from straight above in
which every tile is about :data:`RECTIFIED_RADIUS` pixels and the lattice is
nearly regular (:func:`rectified_view`); the candidates found there are given
their lattice positions there, and the model is fitted to them in the photo,
where the tiles are judged on the view's maps carried back
(:func:`rectified_look`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from fjords.geometry import Hex
from scanner.lattice import LatticeFit, fit_assignment
from scanner.lattice_assign import lattice_hypotheses
from scanner.lattice_model import LatticeModel, fit_model, hex_centres
from scanner.locate import MIN_PEAK, OUTPUT_STRIDE, BoardRegion, TileTopNet, heat_peaks, mask_bbox_px

#: Tile circumradius (network input pixels) in the rectified view.
RECTIFIED_RADIUS = 18.0
#: Longest side (network input pixels) of the rectified view; a larger board is drawn with smaller tiles.
RECTIFIED_SIDE = 640
#: Board units (tile circumradii) kept around the first lattice's tiles.
BOARD_MARGIN = 3.0
#: Photo pixels sampled per rectified pixel along each axis before averaging (no aliasing of near tiles).
SUPERSAMPLE = 3
#: Long side, in map pixels, of the maps carried back to the photo.
MAP_SIDE = 512


@dataclass(frozen=True)
class RectifiedView:
    """The network's reading of the view from straight above.

    Attributes
    ----------
    region : BoardRegion
        Its maps carried back to the photo's frame (map pixels of the photo).
    points : ndarray (N, 2)
        Tile-centre candidates in view pixels.
    weights : ndarray (N,)
        Their heights in the centre map.
    origin : ndarray (2,)
        Board point at the view's pixel corner (0, 0).
    radius : float
        View pixels per board unit (tile circumradius).
    size : tuple of int
        ``(width, height)`` of the view.
    """

    region: BoardRegion
    points: np.ndarray
    weights: np.ndarray
    origin: np.ndarray
    radius: float
    size: tuple[int, int]

    def to_board(self, view_px: np.ndarray) -> np.ndarray:
        """Board-plane points at view pixel centres ``(..., 2)``."""
        return self.origin + (np.asarray(view_px, dtype=np.float64) + 0.5) / self.radius


def rectified_look(image_bgr: np.ndarray, net: TileTopNet, anchor: LatticeFit) -> LatticeFit | None:
    """The lattice found in the view from straight above on ``anchor``'s board plane, fitted in the photo.

    The candidates are assigned their lattice positions in the rectified view, where the lattice is
    nearly regular whatever the camera's height; the model is then fitted to them in the photo and the
    tiles judged on the rectified maps carried back to the photo. None where that finds no lattice.
    """
    view = rectified_view(image_bgr, net, anchor.model, list(anchor.cells))
    if view is None:
        return None
    hypotheses = lattice_hypotheses(view.points, view.weights, view.size, fit_distortion=False)
    if not hypotheses or hypotheses[0].inlier.sum() < 4:
        return None
    in_view = hypotheses[0]
    points = anchor.model.board_to_image(view.to_board(view.points))
    height, width = image_bgr.shape[:2]
    model = fit_model(hex_centres(in_view.axial[in_view.inlier]), points[in_view.inlier], (width, height),
                      fit_distortion=False)
    if not model.fits_a_view:  # the view's centres fit no view of the table in the photo
        return None
    return fit_assignment(image_bgr, view.region, replace(in_view, model=model), points)


def rectified_view(image_bgr: np.ndarray, net: TileTopNet, model: LatticeModel, hexes: list[Hex]
                   ) -> RectifiedView | None:
    """The photo resampled on ``model``'s board plane and read by the network.

    Parameters
    ----------
    image_bgr : ndarray (H, W, 3)
    net : TileTopNet
    model : LatticeModel
        A first lattice's board plane → photo map.
    hexes : list of Hex
        That lattice's tiles: the rectified view covers them and :data:`BOARD_MARGIN` around.

    Returns
    -------
    RectifiedView or None
        None where the network finds no tile top in the view.
    """
    if not hexes:
        return None
    centres = hex_centres(hexes)
    low = centres.min(axis=0) - BOARD_MARGIN
    high = centres.max(axis=0) + BOARD_MARGIN
    radius = min(RECTIFIED_RADIUS, RECTIFIED_SIDE / float(np.max(high - low)))
    width, height = (int(np.ceil(v)) for v in (high - low) * radius)
    # Board point of each supersampled rectified pixel, then the photo pixel it is seen at.
    fine = radius * SUPERSAMPLE
    photo = model.grid_to_image(low[0] + (np.arange(width * SUPERSAMPLE) + 0.5) / fine,
                                low[1] + (np.arange(height * SUPERSAMPLE) + 0.5) / fine)
    # cv2.mean, not numpy's mean over a (pixels, 3) view: that strided mean took 50 ms of a photo's scan.
    fill = cv2.mean(image_bgr)[:3]
    sampled = cv2.remap(image_bgr, photo, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=fill)
    view = cv2.resize(sampled, (width, height), interpolation=cv2.INTER_AREA)
    probability, heat, _ = net.maps(view, max(width, height))
    # Back to the photo: each map pixel of the photo's frame looks up the rectified map at its board point.
    photo_height, photo_width = image_bgr.shape[:2]
    map_scale = MAP_SIDE / OUTPUT_STRIDE / max(photo_width, photo_height)
    map_w, map_h = max(1, round(photo_width * map_scale)), max(1, round(photo_height * map_scale))
    my, mx = np.mgrid[0:map_h, 0:map_w]
    at = model.image_to_board((np.stack([mx, my], axis=-1).reshape(-1, 2) + 0.5) / map_scale - 0.5)
    # Photo pixels beyond the board plane's horizon meet it behind the camera, where the board's own tiles are not:
    # they see no tile.
    ahead = np.sign(_depth(model, at)) == np.sign(_depth(model, centres[:1]))
    map_size = np.array([probability.shape[1] / width, probability.shape[0] / height])
    view_map = np.where(ahead[:, None], (at - low) * radius * map_size - 0.5, -1.0)
    view_map = view_map.reshape(map_h, map_w, 2).astype(np.float32)
    back = [cv2.remap(m, view_map[..., 0], view_map[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                      borderValue=0.0) for m in (probability, heat)]
    tiles = back[0] > 0.5
    if not tiles.any():
        return None
    region = BoardRegion(back[0], back[1], map_scale, mask_bbox_px(tiles, map_scale), (photo_width, photo_height))
    points, weights = heat_peaks(heat, MIN_PEAK, lambda m: (m + 0.5) / map_size - 0.5)
    return RectifiedView(region, points, weights, low, radius, (width, height))


def _depth(model: LatticeModel, board_pts: np.ndarray) -> np.ndarray:
    """Homogeneous depth the homography gives board points ``(N, 2)``: its sign tells the camera's side of them."""
    return board_pts @ model.homography[2, :2] + model.homography[2, 2]
