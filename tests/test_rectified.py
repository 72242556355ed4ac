"""The look from straight above: the photo resampled on a first lattice's board plane and read again."""

import numpy as np
import pytest

from fjords.geometry import Hex
from scanner.lattice import CellGeometry, LatticeFit
from scanner.lattice_model import LatticeModel, fit_model, hex_centres, hex_corners
from scanner.locate import OUTPUT_STRIDE, work_size
from scanner.rectified import rectified_look, rectified_view
from shipped_models import scan_models_trained

#: Board y = −20 is this camera's horizon; photo rows below y = 800 lie beyond it.
LOW_CAMERA = np.array([[40.0, 0.0, 400.0], [0.0, 40.0, 300.0], [0.0, 0.05, 1.0]])


class RedNet:
    """A stand-in for the tile-top network: both maps are the view's red channel, at the network's stride."""

    def __init__(self):
        self.views = []

    def maps(self, view, side):
        self.views.append(view)
        size = work_size(view.shape[1], view.shape[0], side)
        red = view[::OUTPUT_STRIDE, ::OUTPUT_STRIDE, 2][: size[1] // OUTPUT_STRIDE, : size[0] // OUTPUT_STRIDE]
        out = red.astype(np.float32) / 255.0
        return out, out, size[0] / OUTPUT_STRIDE / view.shape[1]


def cone_photo(model: LatticeModel, shape, board_centre, radius=1.0) -> np.ndarray:
    """A blue-grey photo whose red rises to a peak at ``board_centre`` on the board plane, from ``radius`` away."""
    height, width = shape
    ys, xs = np.mgrid[0:height, 0:width]
    board = model.image_to_board(np.stack([xs, ys], axis=-1).reshape(-1, 2).astype(np.float64))
    distance = np.linalg.norm(board - board_centre, axis=1).reshape(height, width)
    photo = np.full((height, width, 3), (90, 90, 0), np.uint8)
    photo[..., 2] = np.round(255 * np.clip(1.0 - distance / radius, 0.0, 1.0))
    return photo


def test_the_view_from_above_draws_every_tile_the_same_size_and_carries_its_maps_back():
    model = LatticeModel.for_image(LOW_CAMERA, (800, 700))
    hexes = [Hex(q, r) for q in range(-2, 3) for r in range(-2, 3)]
    centre = hex_centres([Hex(1, 1)])[0]
    net = RedNet()
    view = rectified_view(cone_photo(model, (700, 800), centre), net, model, hexes)
    region = view.region
    # In the view the cone's upper half, a disc of half a board unit, is round whatever the photo's perspective.
    red = net.views[0][..., 2] > 128
    ys, xs = np.nonzero(red)
    assert abs((xs.max() - xs.min()) / (ys.max() - ys.min()) - 1.0) < 0.15
    # Carried back, the map is high at the peak's place in the photo and nothing a tile and a half away.
    for board_pt, expected in ((centre, 1.0), (centre + [3.0, 0.0], 0.0)):
        photo_pt = model.board_to_image(board_pt[None])[0]
        mx, my = np.round(region.to_map(photo_pt)).astype(int)
        assert region.tile_probability[my, mx] == pytest.approx(expected, abs=0.2)
    # The centre candidate found in the view lies at the peak on the board.
    strongest = view.points[np.argmax(view.weights)]
    assert np.linalg.norm(view.to_board(strongest) - centre) < 0.15


def test_nothing_is_seen_beyond_the_horizon():
    """Photo pixels past the board plane's horizon meet it behind the camera, where the view has no tiles."""
    model = LatticeModel.for_image(LOW_CAMERA, (800, 1000))
    # A wrong first lattice may reach past the horizon (here one far tile, at board (−43, −87), behind the
    # camera): the view then spans board points the camera sees only through its back, at the photo's foot.
    hexes = [Hex(q, r) for q in range(-3, 4) for r in range(-12, 3)] + [Hex(4, -58)]
    region = rectified_view(np.full((1000, 800, 3), (0, 0, 255), np.uint8), RedNet(), model, hexes).region
    rows = region.to_photo(np.arange(region.tile_probability.shape[0]))
    columns = np.abs(region.to_photo(np.arange(region.tile_probability.shape[1])) - 400) < 30
    assert region.tile_probability[rows > 940][:, columns].max() == 0.0
    assert region.tile_probability[(rows > 320) & (rows < 400)][:, columns].min() > 0.9


def test_no_tiles_no_view():
    assert rectified_view(np.zeros((50, 50, 3), np.uint8), RedNet(), LatticeModel.for_image(LOW_CAMERA, (50, 50)),
                            []) is None


@pytest.mark.skipif(not scan_models_trained(), reason="models not trained")
@pytest.mark.parametrize("seed", [900_161, 900_132])
def test_the_view_from_above_finds_the_tiles_of_a_low_photo(seed):
    """On the true lattice of a render taken from 40–43°, the look from above finds most tiles where they are."""
    from renderer import render_random
    from scanner.locate import TileTopNet

    render = render_random(seed, width=1008, height=756)
    tiles = [t for t in render.truth["tiles"] if t.get("visible", 1.0) > 0.95]
    hexes = [Hex(t["q"], t["r"]) for t in tiles]
    corners = np.array([t["corners_px"] for t in tiles], dtype=np.float64)
    true_model = fit_model(hex_corners(hexes).reshape(-1, 2), corners.reshape(-1, 2), (1008, 756))
    anchor = LatticeFit({h: CellGeometry(h, tuple(c.mean(axis=0)), c, 1.0, 1.0) for h, c in zip(hexes, corners)},
                        true_model, 30.0)
    fit = rectified_look(render.image, TileTopNet(), anchor)
    assert fit is not None
    radius = np.linalg.norm(corners[:, 0] - corners[:, 3], axis=1) / 2
    found = [np.min(np.linalg.norm(corners.mean(axis=1) - c.center_px, axis=1) / radius) < 0.3
             for c in fit.cells.values()]
    assert sum(found) >= 0.8 * len(tiles) and sum(found) >= 0.8 * len(fit.cells)
