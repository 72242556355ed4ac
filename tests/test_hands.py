"""Where hands hide the board: the share of each sector a hand map covers, and the hand network on renders."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fjords.geometry import SECTORS, corner_angle, sector_mid_angle
from renderer import random_board, render_board
from scanner.hands import HandModel, hand_input_size, sector_hand_shares
from shipped_models import scan_models_trained

IMAGE = (640, 480)


def _corners(centre, radius: float, turn: float) -> np.ndarray:
    """Six corners of a regular tile in image pixels (y down), corner k at 30 + 60·k degrees plus ``turn``."""
    angles = np.radians([corner_angle(k) + turn for k in range(6)])
    return np.stack([centre[0] + radius * np.cos(angles), centre[1] - radius * np.sin(angles)], axis=1)


tiles = st.tuples(st.floats(120, 520), st.floats(120, 360), st.floats(15, 100), st.floats(-30, 30))


@settings(max_examples=40, deadline=None)
@given(tile=tiles, level=st.floats(0, 1))
def test_an_even_map_covers_every_sector_alike(tile, level):
    x, y, radius, turn = tile
    hand_map = np.full((IMAGE[1] // 2, IMAGE[0] // 2), level, np.float32)
    shares = sector_hand_shares(hand_map, IMAGE, [_corners((x, y), radius, turn)])
    assert shares.shape == (1, SECTORS)
    np.testing.assert_allclose(shares, level, atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(tile=tiles)
def test_a_hand_over_the_left_half_covers_the_left_sectors(tile):
    x, y, radius, _ = tile
    hand_map = np.zeros((IMAGE[1] // 2, IMAGE[0] // 2), np.float32)
    hand_map[:, : int(round(x / 2))] = 1.0  # map pixel i covers photo x 2i..2i+2
    shares = sector_hand_shares(hand_map, IMAGE, [_corners((x, y), radius, 0.0)])[0]
    for i in range(SECTORS):
        side = np.cos(np.radians(sector_mid_angle(i)))  # < 0: the sector lies left of the centre
        if side < -0.5:
            assert shares[i] > 0.85
        elif side > 0.5:
            assert shares[i] < 0.15


def test_no_tiles_no_shares_and_outside_the_photo_nothing_covers():
    hand_map = np.ones((IMAGE[1] // 2, IMAGE[0] // 2), np.float32)
    assert sector_hand_shares(hand_map, IMAGE, []).shape == (0, SECTORS)
    outside = sector_hand_shares(hand_map, IMAGE, [_corners((-200.0, -200.0), 40.0, 0.0)])
    np.testing.assert_allclose(outside, 0.0)


def test_input_size_keeps_the_shape_in_multiples_of_eight():
    assert hand_input_size(2016, 1512) == (384, 288)
    assert hand_input_size(1512, 2016) == (288, 384)


@pytest.mark.skipif(not scan_models_trained(), reason="models not trained")
def test_the_hand_network_finds_the_hands_of_a_render_it_never_saw():
    # Seed 993,000 lies among the sessions' judge seeds: no model trained on it.
    board = random_board(993_000, "classic", 2)
    covered = render_board(board, 993_000, width=1008, height=756, hands=2, fill=0.8)
    clear = render_board(board, 993_000, width=1008, height=756, hands=0, fill=0.8)
    model = HandModel()
    read = model.read(covered.image)
    truth = cv2.resize(covered.hand_mask, (read.shape[1], read.shape[0]), interpolation=cv2.INTER_AREA)
    hand, found = truth > 0.5, read > 0.5
    assert hand.mean() > 0.02  # this seed's arms cover part of the photo
    assert (hand & found).sum() / (hand | found).sum() > 0.6
    assert (model.read(clear.image) > 0.5).mean() < 0.005  # no hand, (almost) no hand read
