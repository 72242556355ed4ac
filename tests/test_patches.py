"""Hex patches: cutting a tile out of the photo, even from corners a bad fit collapsed."""

import numpy as np
import pytest

from scanner.patches import Pyramid, apply_homography, canonical_corners, hex_homography, hex_patches


def test_homography_sends_a_tiles_corners_onto_the_patch_corners():
    angles = np.radians(30 + 60 * np.arange(6))
    corners = np.stack([200 + 40 * np.cos(angles), 150 - 30 * np.sin(angles)], axis=1)
    mapped = apply_homography(hex_homography(corners), corners)
    assert np.allclose(mapped, canonical_corners(48, 1.12), atol=1e-6)


@pytest.mark.parametrize("corners", [np.full((6, 2), 5.0), np.array([[5.0, 5.0]] * 3 + [[6.0, 6.0]] * 3)])
def test_collapsed_corners_still_give_a_patch(corners):
    image = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    patches = hex_patches(Pyramid(image), [corners])
    assert patches.shape == (1, 48, 48, 3)
