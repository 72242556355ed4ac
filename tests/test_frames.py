"""Video frames: tiles that have not changed keep the previous frame's readings; changed ones are read again."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scanner.frames import FrameReadings, PhotoTiles, PositionLook, block_means, still_corners, unchanged
from shipped_models import scan_models_trained


def test_block_means_average_each_block():
    images = np.zeros((1, 16, 16, 3), np.uint8)
    images[0, :8, 8:] = 80
    images[0, 8:, :8, 1] = 40
    means = block_means(images)
    assert means.shape == (1, 2, 2, 3)
    assert means[0, 0, 1].tolist() == [80, 80, 80] and means[0, 1, 0].tolist() == [0, 40, 0]
    assert means[0, 0, 0].tolist() == [0, 0, 0]


def test_noise_is_unchanged_and_a_covered_block_is_not():
    rng = np.random.default_rng(0)
    image = rng.integers(60, 200, (1, 64, 64, 3)).astype(np.uint8)
    noisy = np.clip(image + rng.normal(0, 3, image.shape), 0, 255).astype(np.uint8)
    assert unchanged(block_means(image), block_means(noisy))
    covered = image.copy()
    covered[0, 20:28, 40:48] = 250  # a piece or a finger over one block
    assert not unchanged(block_means(image), block_means(covered))
    assert not unchanged(None, block_means(image))


def test_a_position_keeps_its_corners_while_it_has_not_moved():
    hexagon = np.array([[100.0 + 50 * np.cos(np.radians(30 + 60 * k)), 100 + 50 * np.sin(np.radians(30 + 60 * k))]
                        for k in range(6)])
    look = PositionLook(hexagon, np.zeros((1, 1, 3)), ())
    jittered = hexagon + np.random.default_rng(0).normal(0, 0.8, hexagon.shape)  # a refinement's jitter
    assert still_corners(look, jittered) is hexagon
    assert still_corners(look, hexagon + np.array([3.0, 0.0])) is None  # 6 % of the radius: it moved
    assert still_corners(None, hexagon) is None


def _hexagon(centre=(100.0, 100.0), radius=50.0, turn_degrees=30.0) -> np.ndarray:
    return np.array([[centre[0] + radius * np.cos(np.radians(turn_degrees + 60 * k)),
                      centre[1] + radius * np.sin(np.radians(turn_degrees + 60 * k))] for k in range(6)])


def _read_tile(corners: np.ndarray, seed: int) -> PositionLook:
    """A tile's look as a lattice reading leaves it, with two networks' made-up sector readings."""
    rng = np.random.default_rng(seed)
    sectors = tuple((rng.dirichlet(np.ones(3), 12), rng.uniform(0, 1, 12)) for _ in range(2))
    return PositionLook(corners, None, (), sectors=sectors)


def _photo_tiles(*looks: PositionLook) -> PhotoTiles:
    return PhotoTiles().plus(FrameReadings(("models",), {n: look for n, look in enumerate(looks)}))


@given(st.integers(0, 5), st.floats(20.0, 200.0), st.floats(0.0, 360.0),
       st.lists(st.floats(-0.03, 0.03), min_size=12, max_size=12))
def test_a_tile_read_before_keeps_its_corners_and_reading_in_the_new_numbering(turn, radius, angle, jitter):
    earlier = _read_tile(_hexagon((400.0, 300.0), radius, angle), seed=turn)
    # A later lattice numbers the same tile's corners from another one and refines them a little differently.
    corners = np.roll(earlier.corners_px, turn, axis=0) + radius * np.reshape(jitter, (6, 2))
    found = _photo_tiles(_read_tile(_hexagon((400.0 + 3 * radius, 300.0), radius, angle), seed=9),
                         earlier).same_tile(corners)
    np.testing.assert_array_equal(found.corners_px, np.roll(earlier.corners_px, turn, axis=0))
    for (probs, readable), (before, readable_before) in zip(found.sectors, earlier.sectors, strict=True):
        for sector in range(12):  # corner k is earlier corner k - turn, sector i earlier sector i - 2·turn
            np.testing.assert_array_equal(probs[sector], before[(sector - 2 * turn) % 12])
            assert readable[sector] == readable_before[(sector - 2 * turn) % 12]


def test_a_tile_is_the_same_as_the_nearest_tile_read_before_within_the_still_share():
    hexagon = _hexagon()
    near, nearer = _read_tile(hexagon + [2.0, 0.0], seed=1), _read_tile(hexagon + [0.0, 1.0], seed=2)
    tiles = _photo_tiles(near, nearer)
    assert tiles.same_tile(hexagon).sectors[0][1].tolist() == nearer.sectors[0][1].tolist()
    assert tiles.same_tile(hexagon + [0.0, 3.4]).sectors[0][1].tolist() == nearer.sectors[0][1].tolist()  # 4.8 %
    assert tiles.same_tile(hexagon + [0.0, 3.8]) is None  # 2.8 px from the nearer: 5.6 % of its radius
    assert _photo_tiles(near).same_tile(_hexagon(turn_degrees=45.0)) is None  # turned by 15 degrees: another tile
    assert PhotoTiles().same_tile(hexagon) is None


@pytest.fixture(scope="module")
def frames():
    if not scan_models_trained():
        pytest.skip("models not trained")
    from renderer import render_random
    from scanner.pipeline import Scanner

    scanner = Scanner()
    image = render_random(900_101, width=1008, height=756).image
    return scanner, image, scanner.scan(image)


def test_a_frame_like_the_last_keeps_every_reading(frames):
    scanner, image, first = frames
    rng = np.random.default_rng(1)
    noisy = np.clip(image + rng.normal(0, 2, image.shape), 0, 255).astype(np.uint8)
    second = scanner.scan(noisy, previous=first)
    tiles = sum(look.sectors is not None for look in first.readings.looks.values())
    assert second.readings.reused["sectors"] >= 0.9 * tiles
    assert second.readings.reused["pieces"] >= 0.9 * len(first.readings.looks)
    same = scanner.scan(image, previous=first)
    assert same.readings.reused == {"sectors": tiles, "pieces": len(first.readings.looks)}
    assert same.board.to_json() == first.board.to_json()


def test_tiles_that_changed_are_read_again(frames):
    scanner, image, first = frames
    cells = list(first.lattice.cells.values())
    before = scanner.classify(image, cells)
    middle = sorted(h for h, look in before.looks.items() if look.sectors is not None)[len(cells) // 2]
    corners = before.looks[middle].corners_px
    (x0, y0), (x1, y1) = np.floor(corners.min(axis=0)).astype(int), np.ceil(corners.max(axis=0)).astype(int)
    changed = image.copy()
    changed[y0:y1, x0:x1] = (90, 140, 200)  # a hand over one tile
    followed = scanner.classify(changed, cells, previous=before)
    fresh = scanner.classify(changed, cells)
    assert 0 < followed.reused["sectors"] < len(before.looks)
    assert middle not in {h for h, look in followed.looks.items() if look.sectors is before.looks[h].sectors}
    # Unchanged tiles' patches are the same pixels: reusing them reads what reading afresh does. The balanced reading
    # (the last) kept was balanced by the gains of the frame it was read in; the hand moves this frame's a little.
    for h, look in fresh.looks.items():
        readings = list(zip(followed.looks[h].sectors, look.sectors, strict=True))
        for (kept, _), (read, _) in readings[:-1]:  # each network's
            np.testing.assert_allclose(kept, read, atol=1e-5)
        np.testing.assert_allclose(readings[-1][0][0], readings[-1][1][0], atol=0.02)
        assert [r.kind for r in followed.looks[h].pieces] == [r.kind for r in look.pieces]


def test_readings_of_another_scanner_are_not_reused(frames):
    from scanner.calibration import Calibration
    from scanner.pipeline import Scanner

    scanner, image, first = frames
    other = Scanner(calibration=Calibration(name="other", colours={"red": (200, 30, 30), "blue": (30, 30, 200)}))
    assert other.scan(image, previous=first).readings.reused == {"sectors": 0, "pieces": 0}


def _as_plain(readings) -> list:
    """Piece readings as plain values, their arrays as lists, to compare readings exactly."""
    return [(r.kind_probs.tolist(), r.colour_probs.tolist(), r.colour_names, r.base_px, r.top_px, r.sector, r.rgb,
             r.close_up_piece) for r in readings]


def test_pieces_read_after_the_tiles_are_the_pieces_read_with_them(frames):
    scanner, image, first = frames
    cells = list(first.lattice.cells.values())
    beside = first.lattice.empty_positions(image.shape[1::-1])
    together = scanner.classify(image, cells, beside=beside)
    tiles_only = scanner.classify(image, cells, beside=beside, read_pieces=False)
    assert all(look.pieces == () and look.crop_blocks is None for look in tiles_only.looks.values())
    later = scanner.with_pieces(image, tiles_only)
    assert later.reused == together.reused and list(later.looks) == list(together.looks)
    assert any(look.pieces for look in together.looks.values())
    for h, look in together.looks.items():
        assert _as_plain(later.looks[h].pieces) == _as_plain(look.pieces)
        np.testing.assert_array_equal(later.looks[h].crop_blocks, look.crop_blocks)
    followed = scanner.with_pieces(image, scanner.classify(image, cells, beside=beside, read_pieces=False,
                                                           previous=together), previous=together)
    tiles = sum(look.sectors is not None for look in together.looks.values())
    assert followed.reused == {"sectors": tiles, "pieces": len(together.looks)}


def test_the_sectors_of_corners_numbered_from_another_corner_are_the_same_sectors_turned(frames):
    # What PhotoTiles.same_tile relies on: a tile's patch cut from its corners numbered from one further on is the
    # same picture turned by 60 degrees, whose sector i the network reads as sector i - 2 of the first numbering.
    from scanner.patches import Pyramid, hex_patches

    scanner, image, first = frames
    corners = [look.corners_px for look in first.readings.looks.values() if look.sectors is not None][:8]
    pyramid = Pyramid(image)
    probs = scanner.sectors.predict_patches(hex_patches(pyramid, corners))[0]
    for turn in (1, 2, 3):
        turned = scanner.sectors.predict_patches(hex_patches(pyramid, [np.roll(c, turn, axis=0) for c in corners]))[0]
        # Only the resampling of the turned patch differs.
        assert np.abs(turned - np.roll(probs, 2 * turn, axis=1)).mean() < 0.01
        if turn != 3:  # the other way round
            assert np.abs(turned - np.roll(probs, -2 * turn, axis=1)).mean() > 0.05


def test_a_lattice_over_the_tiles_another_lattice_read_reads_no_sector_again(frames):
    scanner, image, first = frames
    cells = list(first.lattice.cells.values())
    before = scanner.classify(image, cells, read_pieces=False)
    photo_tiles = PhotoTiles().plus(before)
    # The same lattice, its board turned by 60 degrees: every tile's corners numbered from the next one.
    turned = [replace(c, corners_px=np.roll(np.asarray(c.corners_px), 1, axis=0)) for c in cells]
    read = scanner.classify(image, turned, read_pieces=False, photo_tiles=photo_tiles)
    tiles = [h for h, look in before.looks.items() if look.sectors is not None]
    assert len(tiles) > 10
    for h in tiles:
        np.testing.assert_array_equal(read.looks[h].corners_px, np.roll(before.looks[h].corners_px, 1, axis=0))
        for (probs, readable), (probs_before, readable_before) in zip(read.looks[h].sectors, before.looks[h].sectors):
            np.testing.assert_array_equal(probs, np.roll(probs_before, 2, axis=0))
            np.testing.assert_array_equal(readable, np.roll(readable_before, 2, axis=0))
    # What the photo shows there is still measured, on the corners kept.
    fresh = scanner.classify(image, turned, read_pieces=False)
    for h in tiles:
        np.testing.assert_array_equal(read.looks[h].sector_features, fresh.looks[h].sector_features)
        np.testing.assert_array_equal(read.looks[h].patch_blocks, fresh.looks[h].patch_blocks)
