"""Second looks at a photo when the first lattice fit does not sit on tile edges."""

import numpy as np
import pytest

import scanner.looks as looks
from fjords.geometry import Hex
from scanner.lattice import CellGeometry, LatticeFit
from scanner.lattice_model import LatticeModel, hex_centres, hex_corners
from scanner.locate import BoardRegion, NoBoardFound


def make_fit(cells: int, supported: int, k1: float = 0.0, radius: float = 30.0) -> LatticeFit:
    model = LatticeModel.for_image(np.array([[30.0, 0, 400], [0, 30.0, 300], [0, 0, 1]]), (800, 600), k1=k1)
    hexes = [Hex(q, 0) for q in range(cells)]
    geometry = {h: CellGeometry(h, tuple(model.board_to_image(hex_centres([h]))[0]),
                                model.board_to_image(hex_corners([h])[0]), 1.0, 1.0) for h in hexes}
    return LatticeFit(geometry, model, radius, supported_tiles=supported)


def region(bbox) -> BoardRegion:
    return BoardRegion(np.zeros((4, 4), np.float32), np.zeros((4, 4), np.float32), 0.5, bbox, (800, 600))


@pytest.mark.parametrize("k1", [0.0, -0.08])
def test_translated_fit_maps_every_point_by_the_offset(k1):
    fit = make_fit(3, 3, k1)
    moved = fit.translated((120.0, -35.0))
    board = np.array([[0.3, -0.2], [4.0, 2.5], [-3.0, 1.0]])
    np.testing.assert_allclose(moved.board_to_image(board), fit.board_to_image(board) + [120.0, -35.0], atol=1e-9)
    np.testing.assert_allclose(moved.image_to_board(fit.board_to_image(board) + [120.0, -35.0]), board, atol=1e-6)
    for h, cell in moved.cells.items():
        np.testing.assert_allclose(cell.corners_px, fit.cells[h].corners_px + [120.0, -35.0])
        assert cell.center_px == pytest.approx((fit.cells[h].center_px[0] + 120, fit.cells[h].center_px[1] - 35))


def test_supported_share():
    assert make_fit(4, 3).supported_share == 0.75
    assert LatticeFit({}, make_fit(1, 1).model, 0.0).supported_share == 0.0


def test_crop_box_keeps_a_margin_and_skips_boards_filling_the_photo():
    assert looks.crop_box(region((300.0, 200.0, 400.0, 260.0)), (600, 800, 3)) == (285, 185, 415, 275)
    assert looks.crop_box(region((0.0, 0.0, 700.0, 500.0)), (600, 800, 3)) is None
    assert looks.crop_box(region((5.0, 5.0, 20.0, 20.0)), (600, 800, 3)) is None  # too small to look at


def test_the_look_with_the_most_supported_tiles_is_kept_among_well_supported_ones():
    first, zoomed, crop = make_fit(20, 0), make_fit(20, 5, radius=31.0), make_fit(20, 12, radius=60.0)
    assert looks.choose_look([first, zoomed, crop]) is crop


def test_without_a_well_supported_look_the_scale_most_looks_agree_on_is_kept():
    """A lattice of every other tile (twice the radius) may catch a supported tile or two more by chance."""
    first, coarse, crop = make_fit(20, 0), make_fit(20, 3, radius=61.0), make_fit(20, 0, radius=31.0)
    assert looks.choose_look([first, coarse, crop]) is first
    assert looks.choose_look([coarse, crop, make_fit(20, 1, radius=29.0)]).tile_radius_px == 29.0
    assert looks.choose_look([coarse]) is coarse


@pytest.fixture
def fake_looks(monkeypatch):
    """fit_lattice and locate_board stand-ins: each look's fit is chosen by the side it is taken at (a look with no
    fit given finds no lattice)."""
    calls = []

    def locate(image, net, side=512):
        calls.append((side, image.shape[:2]))
        return region((300.0, 200.0, 400.0, 260.0))

    def fit(image, board_region, previous=None):
        side, shape = calls[-1]
        if (side, shape == (600, 800)) not in net_fits:
            raise NoBoardFound("no lattice in this look")
        return net_fits[(side, shape == (600, 800))]

    def rectified(image, net, anchor):
        calls.append(("rectified", anchor))
        return net_fits.get("rectified")

    net_fits = {}
    monkeypatch.setattr(looks, "locate_board", locate)
    monkeypatch.setattr(looks, "fit_lattice", fit)
    monkeypatch.setattr(looks, "rectified_look", rectified)
    return net_fits, calls


def test_a_well_supported_first_look_is_kept_alone(fake_looks):
    net_fits, calls = fake_looks
    net_fits[(512, True)] = make_fit(10, 9)
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None) is net_fits[(512, True)]
    assert len(calls) == 1


def test_a_modestly_supported_first_look_is_read_against_the_others_even_where_another_sees_its_scale(fake_looks):
    net_fits, _ = fake_looks
    net_fits.update({(512, True): make_fit(40, 10), (384, True): make_fit(12, 10, radius=32.0),
                     (256, True): make_fit(5, 0, radius=60.0), (512, False): make_fit(20, 4, radius=31.0)})
    found = looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None)
    assert found[:3] == [net_fits[(512, True)], net_fits[(384, True)], net_fits[(256, True)]] and len(found) == 4
    # Without a reading, the look with the most supported tiles (then the larger share of them) is kept.
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None) is net_fits[(384, True)]


def test_a_modestly_supported_first_look_at_a_scale_no_other_look_sees_is_replaced(fake_looks):
    net_fits, _ = fake_looks
    net_fits.update({(512, True): make_fit(40, 10, radius=48.0), (384, True): make_fit(12, 1),
                     (256, True): make_fit(5, 0, radius=70.0), (512, False): make_fit(20, 18)})
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None).supported_tiles == 18  # the cropped look


def test_a_video_frame_keeps_a_modestly_supported_first_look_alone(fake_looks):
    net_fits, calls = fake_looks
    net_fits[(512, True)] = make_fit(40, 10, radius=48.0)
    previous = make_fit(40, 30)
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None, previous=previous) is net_fits[(512, True)]
    assert len(calls) == 1


def test_the_look_with_most_supported_tiles_wins(fake_looks):
    net_fits, calls = fake_looks
    net_fits.update({(512, True): make_fit(60, 6), (384, True): make_fit(12, 10), (256, True): make_fit(5, 5),
                     (512, False): make_fit(20, 4)})
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None) is net_fits[(384, True)]
    assert calls == [(512, (600, 800)), (384, (600, 800)), (256, (600, 800)), (512, (90, 130)), (384, (90, 130)),
                     (640, (90, 130)), ("rectified", net_fits[(384, True)])]


def test_the_view_from_above_is_taken_on_the_kept_look(fake_looks):
    net_fits, calls = fake_looks
    net_fits.update({(512, True): make_fit(30, 1), (384, True): make_fit(12, 1, radius=61.0),
                     (256, True): make_fit(5, 0, radius=90.0), (512, False): make_fit(20, 3, radius=31.0),
                     "rectified": make_fit(30, 20)})
    # The looks to read come without it: the reader takes it on the look it reads surest (Scanner.scan).
    assert len(looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None)) == 4
    assert not any(call[0] == "rectified" for call in calls)
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None) is net_fits["rectified"]
    # No look has a fifth of its tiles on edges: the anchor is the scale most looks agree on with the most
    # supported tiles, the cropped look (in photo pixels).
    anchor = calls[-1][1]
    assert calls[-1][0] == "rectified" and anchor.tile_radius_px == 31.0 and anchor.supported_tiles == 3


def test_a_cropped_look_comes_back_in_photo_pixels(fake_looks):
    net_fits, _ = fake_looks
    crop_fit = make_fit(20, 18)
    net_fits.update({(512, True): make_fit(30, 3), (384, True): make_fit(3, 1), (256, True): make_fit(3, 1),
                     (512, False): crop_fit})
    found = looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None)
    np.testing.assert_allclose(found.cells[Hex(0, 0)].corners_px, crop_fit.cells[Hex(0, 0)].corners_px + [285, 185])


def test_the_board_s_box_is_looked_at_at_each_crop_size(fake_looks):
    """A small board's tiles can be too few pixels for the network at one crop size and read at another
    (models/README.md, sixty-third session): every size's look is offered, the crop's pixels mapped back."""
    net_fits, calls = fake_looks
    net_fits.update({(512, True): make_fit(30, 1), (384, True): make_fit(3, 0, radius=61.0),
                     (256, True): make_fit(3, 0, radius=90.0), (512, False): make_fit(60, 0, radius=15.0),
                     (640, False): make_fit(20, 16)})
    found = looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None)
    assert [call for call in calls if call[1] == (90, 130)] == [(side, (90, 130)) for side in looks.CROP_SIDES]
    assert len(found) == 5 and found[-1].supported_tiles == 16
    np.testing.assert_allclose(found[-1].cells[Hex(0, 0)].corners_px,
                               net_fits[(640, False)].cells[Hex(0, 0)].corners_px + [285, 185])
    assert looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None).supported_tiles == 16


def test_every_look_is_left_to_the_reader_where_the_first_is_not_believed(fake_looks):
    net_fits, _ = fake_looks
    net_fits.update({(512, True): make_fit(30, 1), (384, True): make_fit(12, 10, radius=61.0),
                     (256, True): make_fit(5, 0, radius=90.0), (512, False): make_fit(20, 3, radius=31.0)})
    found = looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None)
    assert found[:3] == [net_fits[(512, True)], net_fits[(384, True)], net_fits[(256, True)]]
    assert len(found) == 4 and found[3].supported_tiles == 3  # the cropped look, in photo pixels


def test_a_believed_first_look_is_the_only_lattice_read(fake_looks):
    net_fits, _ = fake_looks
    net_fits[(512, True)] = make_fit(10, 9)
    assert looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None) == [net_fits[(512, True)]]
    net_fits.update({(512, True): make_fit(40, 20), (384, True): make_fit(12, 10, radius=32.0),
                     (256, True): make_fit(5, 0, radius=60.0), (512, False): make_fit(20, 4, radius=31.0)})
    assert looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None) == [net_fits[(512, True)]]
    net_fits[(512, True)] = make_fit(40, 19)  # just under half its tiles on edges
    assert len(looks.find_lattices(np.zeros((600, 800, 3), np.uint8), None)) == 4


def test_no_board_in_any_look(monkeypatch):
    def nothing(*args, **kwargs):
        raise NoBoardFound("none")

    monkeypatch.setattr(looks, "locate_board", lambda image, net, side=512: region((0.0, 0.0, 700.0, 500.0)))
    monkeypatch.setattr(looks, "fit_lattice", nothing)
    with pytest.raises(NoBoardFound):
        looks.find_lattice(np.zeros((600, 800, 3), np.uint8), None)
