"""Sector windows, patch geometry and (when the model is installed) the sector classifier."""

import math

import cv2
import numpy as np
import pytest

from fjords.geometry import SECTORS, TERRAINS
from scanner.onnx_model import DEFAULT_MODELS_DIR
from scanner.patches import (HEX_PATCH, Pyramid, canonical_corners, hex_patches, sector_at, sector_polygons,
                             sector_triangle)
from scanner.sectors import SECTOR_WINDOW, sector_visibility, sector_windows, window_matrices


def tile_corners(cx: float, cy: float, radius: float, turn_deg: float = 0.0, squash: float = 1.0) -> np.ndarray:
    """Image corners of a tile seen from above (``squash`` < 1 foreshortens y), corner k at 30+60k+turn."""
    angles = np.radians(30.0 + 60.0 * np.arange(6) + turn_deg)
    return np.stack([cx + radius * np.cos(angles), cy - squash * radius * np.sin(angles)], axis=1)


def painted_tile(corners: np.ndarray, shape=(300, 400)) -> np.ndarray:
    """An image with sector i of the tile painted blue level 10 + 20·i."""
    image = np.zeros(shape + (3,), np.uint8)
    for i in range(SECTORS):
        tri = sector_triangle(corners, i)
        cv2.fillPoly(image, [np.round(tri * 16).astype(np.int32)], (10 + 20 * i, 0, 0), shift=4)
    return image


def sector0_centroid_in_window() -> tuple[int, int]:
    poly = sector_polygons()[0]
    u, v = window_matrices()[0] @ np.append(poly.mean(axis=0), 1.0)
    return int(round(u)), int(round(v))


def test_every_window_shows_its_own_sector_where_sector_zero_is():
    corners = tile_corners(200, 150, 100, turn_deg=7.0, squash=0.7)
    windows = sector_windows(hex_patches(Pyramid(painted_tile(corners)), [corners]))[0]
    u, v = sector0_centroid_in_window()
    assert windows.shape == (SECTORS, SECTOR_WINDOW, SECTOR_WINDOW, 3)
    assert [int(windows[i, v, u, 0]) for i in range(SECTORS)] == [10 + 20 * i for i in range(SECTORS)]


def test_canonical_corners_run_counter_clockwise_from_30_degrees():
    c = canonical_corners()
    angles = [math.degrees(math.atan2(-(y - HEX_PATCH / 2), x - HEX_PATCH / 2)) % 360 for x, y in c]
    assert angles == pytest.approx([30, 90, 150, 210, 270, 330])


@pytest.mark.parametrize("i", range(SECTORS))
def test_sector_at_names_the_sector_under_a_point(i):
    corners = tile_corners(200, 150, 80, turn_deg=-5.0, squash=0.6)
    angle = math.radians(30.0 * i - 15.0 - 5.0)
    point = np.array([200 + 50 * math.cos(angle), 150 - 0.6 * 50 * math.sin(angle)])
    assert sector_at(corners, point) == i


def test_visibility_drops_for_sectors_outside_the_frame():
    corners = tile_corners(0.0, 150.0, 80)  # centred on the left border: west half outside
    visible = sector_visibility([corners], (300, 400))[0]
    assert visible[0] == 1.0 and visible[1] == 1.0      # east
    assert visible[6] == 0.0 and visible[7] == 0.0      # west


@pytest.mark.skipif(not (DEFAULT_MODELS_DIR / "sectors.onnx").exists(), reason="model not trained")
def test_model_gives_terrain_probabilities_and_readability():
    from scanner.sectors import SectorClassifier

    corners = [tile_corners(200, 150, 100, squash=0.8), tile_corners(100, 100, 40)]
    image = painted_tile(corners[0])
    probs, readable = SectorClassifier(DEFAULT_MODELS_DIR).predict(Pyramid(image), corners)
    assert probs.shape == (2, SECTORS, len(TERRAINS)) and readable.shape == (2, SECTORS)
    assert np.allclose(probs.sum(axis=-1), 1.0, atol=1e-4)
    assert ((readable >= 0) & (readable <= 1)).all()
