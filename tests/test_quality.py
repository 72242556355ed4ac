"""scanner.quality: blur, darkness, glare and the board's size are measured and turned into advice; and the advice on
a board read unsurely as a whole (scanner.pipeline.layout_advice)."""

import cv2
import numpy as np
import pytest

from scanner.patches import HEX_MARGIN, HEX_PATCH
from scanner.quality import (GLARE_ADVICE, MIN_TILE_AREA, RetakePhoto, assess_quality, check_glare, check_quality,
                             estimate_blur, glare_share, hex_area, tile_size_advice)


def _scene(seed=0, shape=(768, 1024)):
    """Random flat rectangles: sharp edges of every contrast, like printed tiles."""
    rng = np.random.default_rng(seed)
    image = np.full(shape + (3,), 120, np.uint8)
    for _ in range(80):
        x, y = rng.integers(0, shape[1], 2)
        w, h = rng.integers(10, 200, 2)
        cv2.rectangle(image, (int(x), int(y)), (int(x + w), int(y + h)), rng.integers(30, 220, 3).tolist(), -1)
    return image


@pytest.mark.parametrize("sigma", [1.5, 2.0, 3.0, 4.0])
def test_blur_estimate_follows_the_true_blur(sigma):
    grey = cv2.cvtColor(_scene(), cv2.COLOR_BGR2GRAY)
    estimate = estimate_blur(cv2.GaussianBlur(grey, (0, 0), sigma))
    assert estimate == pytest.approx(sigma, rel=0.3)


def test_blur_estimate_ignores_contrast():
    grey = cv2.cvtColor(_scene(), cv2.COLOR_BGR2GRAY)
    blurred = cv2.GaussianBlur(grey, (0, 0), 2.0)
    assert estimate_blur((blurred * 0.4).astype(np.uint8)) == pytest.approx(estimate_blur(blurred), rel=0.2)


def test_sharp_photo_passes():
    report = check_quality(_scene())
    assert report.advice == ()
    assert not report.retake
    assert report.blur_px < 1.5


def test_blurred_photo_must_be_retaken():
    with pytest.raises(RetakePhoto, match="blurred") as info:
        check_quality(cv2.GaussianBlur(_scene(), (0, 0), 6.0))
    assert info.value.exit_code == 4


def test_slightly_blurred_photo_gets_advice_only():
    report = check_quality(cv2.GaussianBlur(_scene(), (0, 0), 3.0))
    assert not report.retake
    assert any("blurred" in line for line in report.advice)


def test_dark_photo():
    report = assess_quality((_scene() * 0.1).astype(np.uint8))
    assert report.brightness < 0.10
    assert report.retake and any("dark" in line for line in report.advice)


def test_glare():
    image = _scene()
    image[50:700, 50:900] = 255
    report = assess_quality(image)
    assert report.glare_fraction > 0.4
    assert report.retake and any("Glare" in line for line in report.advice)


def test_glare_is_judged_on_the_board_s_tiles_not_on_a_white_table():
    image = np.full((768, 1024, 3), 255, np.uint8)  # a white table, clipped to white
    image[250:550, 300:700] = _scene(shape=(300, 400))
    tiles = [_hexagon(60.0) + offset for offset in ((0, -100), (-100, -100), (100, -100))]
    assert assess_quality(image).glare_fraction > 0.4
    assert glare_share(image, tiles) == 0.0
    assert check_glare(image, tiles) == []
    with pytest.raises(RetakePhoto, match="Glare"):
        check_quality(image)
    assert check_quality(image, glare=False).advice == ()


def test_a_board_washed_out_by_glare_is_refused_and_a_little_glare_gets_advice():
    image = _scene()
    tiles = [_hexagon(60.0) + offset for offset in ((0, -100), (-100, -100), (100, -100))]
    lit = image.copy()
    cv2.fillConvexPoly(lit, np.round(tiles[0]).astype(np.int32), (255, 255, 255))
    assert 0.05 < glare_share(lit, tiles) <= 0.4
    assert check_glare(lit, tiles) == [GLARE_ADVICE]
    for corners in tiles:
        cv2.fillConvexPoly(lit, np.round(corners).astype(np.int32), (255, 255, 255))
    assert assess_quality(lit).glare_fraction < 0.05  # the photo as a whole is hardly clipped
    with pytest.raises(RetakePhoto, match="Glare") as info:
        check_glare(lit, tiles)
    assert info.value.exit_code == 4


def test_resolution_does_not_change_the_measures():
    image = _scene()
    small = assess_quality(image)
    big = assess_quality(cv2.resize(image, None, fx=2, fy=2, interpolation=cv2.INTER_CUBIC))
    assert big.blur_px == pytest.approx(small.blur_px, abs=0.4)
    assert big.brightness == pytest.approx(small.brightness, abs=0.02)


def _hexagon(circumradius: float) -> np.ndarray:
    angles = np.radians(30 + 60 * np.arange(6))
    return 500 + circumradius * np.stack([np.cos(angles), np.sin(angles)], axis=1)


def test_min_tile_area_is_the_models_hex_patch():
    assert MIN_TILE_AREA == pytest.approx(hex_area(HEX_PATCH / 2 / HEX_MARGIN))
    assert cv2.contourArea(_hexagon(10.0).astype(np.float32)) == pytest.approx(hex_area(10.0), rel=1e-5)


def test_a_board_small_in_the_photo_gets_advice_to_come_closer():
    patch_radius = HEX_PATCH / 2 / HEX_MARGIN
    assert tile_size_advice([_hexagon(patch_radius * 1.2)] * 5) == []
    assert tile_size_advice([]) == []
    small = tile_size_advice([_hexagon(8.0)] * 3 + [_hexagon(40.0)] * 2)
    assert len(small) == 1 and "closer" in small[0] and "16 pixels" in small[0] and "far too small" in small[0]
    smallish = tile_size_advice([_hexagon(12.0)] * 5)  # 24 pixels across: read about as well as at full size
    assert len(smallish) == 1 and "24 pixels" in smallish[0] and "far too small" not in smallish[0]


def _board_of_confidences(confidences):
    from fjords.board import Board, Tile
    from fjords.geometry import Hex

    return Board.from_tiles([Tile(Hex(q, 0), "P" * 12, extra={"confidence": c}) for q, c in enumerate(confidences)],
                            [])


def test_a_board_read_unsurely_on_the_whole_gets_advice_to_retake():
    from scanner.pipeline import UNSURE_LAYOUT, layout_advice

    assert layout_advice(_board_of_confidences([1.0, 0.9, 0.1])) == []  # one tile unsure: the others stand
    (sentence,) = layout_advice(_board_of_confidences([0.9, 0.2, 0.1, 0.2]))  # on average 35 % sure
    assert "4 tiles" in sentence and "35%" in sentence and "misread" in sentence
    assert layout_advice(_board_of_confidences([UNSURE_LAYOUT, UNSURE_LAYOUT])) == []  # the threshold itself: believed
    assert layout_advice(_board_of_confidences([])) == []
