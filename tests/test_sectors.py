"""Sector windows, patch geometry and (when the model is installed) the sector classifier."""

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fjords.geometry import SECTORS, TERRAINS, Hex
from scanner.onnx_model import DEFAULT_MODELS_DIR
from scanner.patches import (HEX_PATCH, Pyramid, canonical_corners, hex_patches, sector_at, sector_polygons,
                             sector_triangles)
from scanner.sectors import (BALANCE_TARGET, SECTOR_WINDOW, balance_gains, balanced, chosen_network, edge_agreement,
                             sector_visibility, sector_windows, window_matrices)
from strategies import legal_boards


def tile_corners(cx: float, cy: float, radius: float, turn_deg: float = 0.0, squash: float = 1.0) -> np.ndarray:
    """Image corners of a tile seen from above (``squash`` < 1 foreshortens y), corner k at 30+60k+turn."""
    angles = np.radians(30.0 + 60.0 * np.arange(6) + turn_deg)
    return np.stack([cx + radius * np.cos(angles), cy - squash * radius * np.sin(angles)], axis=1)


def painted_tile(corners: np.ndarray, shape=(300, 400)) -> np.ndarray:
    """An image with sector i of the tile painted blue level 10 + 20·i."""
    image = np.zeros(shape + (3,), np.uint8)
    for i, tri in enumerate(sector_triangles(corners)[0]):
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


def test_windows_of_many_patches_are_each_windows_cut_as_its_affine_map_says():
    # More patches than one remap cuts (113), each its own picture: a patch must not see its neighbours in the
    # stack, at the frame's edge or past a chunk's end.
    rng = np.random.default_rng(4)
    patches = rng.integers(0, 256, (130, HEX_PATCH, HEX_PATCH, 3), dtype=np.uint8)
    patches = cv2.GaussianBlur(patches.reshape(-1, HEX_PATCH, 3), (0, 0), 1.0).reshape(patches.shape)
    windows = sector_windows(patches)
    assert windows.shape == (130, SECTORS, SECTOR_WINDOW, SECTOR_WINDOW, 3)
    expected = np.array([[cv2.warpAffine(p, m, (SECTOR_WINDOW, SECTOR_WINDOW), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_REFLECT) for m in window_matrices()] for p in patches])
    gap = np.abs(windows.astype(int) - expected)
    assert gap.max() <= 1 and (gap > 0).mean() < 0.01
    np.testing.assert_array_equal(sector_windows(patches[120:121])[0], windows[120])


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


def sure_readings(terrains: dict) -> dict:
    """Tile -> (12, 3) probabilities sure of each sector's letter."""
    return {h: np.eye(len(TERRAINS))[[TERRAINS.index(c) for c in t]] for h, t in terrains.items()}


@settings(max_examples=40, deadline=None)
@given(legal_boards(max_tiles=10), st.integers(0, 5), st.floats(0.5, 0.99))
def test_edge_agreement_is_even_with_itself_on_a_rightly_laid_board_and_any_turn_of_it(board, k, sure):
    # On a legal board every facing pair carries one letter: readings that sure agree with chance sure² + ...
    blurred = {h: sure * p + (1 - sure) / len(TERRAINS) for h, p in sure_readings(
        {h: t.terrain for h, t in board.tiles.items()}).items()}
    shown = {h: np.ones(SECTORS) for h in blurred}
    agreement = edge_agreement(blurred, shown)
    pairs = sum(n in board.tiles for h in board.tiles for n in h.neighbours())
    if pairs == 0:
        assert agreement is None
        return
    alike = sure ** 2 + 2 * sure * (1 - sure) / 3 + (1 - sure) ** 2 / 3
    assert agreement == pytest.approx(math.log(alike), abs=1e-6)
    turned = {h.rotated(k): np.roll(p, 2 * k, axis=0) for h, p in blurred.items()}
    assert edge_agreement(turned, {h: np.ones(SECTORS) for h in turned}) == pytest.approx(agreement)


def test_edge_agreement_falls_where_facing_sectors_disagree_and_ignores_hidden_ones():
    west, east = Hex(0, 0), Hex(1, 0)  # sectors 0, 1 of west face sectors 7, 6 of east
    probs = sure_readings({west: "P" * 12, east: "S" * 12})
    probs = {h: 0.9 * p + 0.1 / 3 for h, p in probs.items()}
    shown = {west: np.ones(SECTORS), east: np.ones(SECTORS)}
    sure, other = 0.9 + 0.1 / 3, 0.1 / 3
    assert edge_agreement(probs, shown) == pytest.approx(math.log(2 * sure * other + other ** 2))
    hidden = {west: np.ones(SECTORS), east: np.where(np.arange(SECTORS) == 7, 0.0, 1.0)}
    assert edge_agreement(probs, hidden) == pytest.approx(edge_agreement(probs, shown))  # one pair of two left
    hidden[east][6] = 0.5
    assert edge_agreement(probs, hidden) is None


def test_the_second_network_is_taken_only_where_it_agrees_better_by_the_margin():
    west, east = Hex(0, 0), Hex(1, 0)
    shown = {west: np.ones(SECTORS), east: np.ones(SECTORS)}
    right = sure_readings({west: "P" * 12, east: "P" * 12})
    blurred = {h: 0.8 * p + 0.2 / 3 for h, p in right.items()}  # agreement log(0.68): far worse than log(1)
    assert chosen_network([(blurred, shown), (right, shown)]) == 1
    assert chosen_network([(right, shown), (blurred, shown)]) == 0
    assert chosen_network([(blurred, shown), (right, shown)], margin=1.0) == 0
    nothing = {west: np.zeros(SECTORS), east: np.zeros(SECTORS)}
    assert chosen_network([(blurred, nothing), (right, shown)]) == 0  # the first network's without a pair to judge
    assert chosen_network([(blurred, shown)]) == 0


def test_of_several_readings_the_one_agreeing_best_is_taken():
    west, east = Hex(0, 0), Hex(1, 0)
    shown = {west: np.ones(SECTORS), east: np.ones(SECTORS)}
    right = sure_readings({west: "P" * 12, east: "P" * 12})
    blurred = {h: 0.8 * p + 0.2 / 3 for h, p in right.items()}
    less = {h: 0.9 * p + 0.1 / 3 for h, p in right.items()}
    assert chosen_network([(blurred, shown), (less, shown), (right, shown)]) == 2
    assert chosen_network([(blurred, shown), (right, shown), (less, shown)]) == 1
    assert chosen_network([(right, shown), (less, shown), (blurred, shown)]) == 0


def _tile_patches(bgr, n: int = 5) -> np.ndarray:
    """``n`` hex patches of one flat colour with a little noise."""
    noise = np.random.default_rng(1).normal(0.0, 2.0, (n, HEX_PATCH, HEX_PATCH, 3))
    return np.clip(np.asarray(bgr, np.float64) + noise, 0, 255).astype(np.uint8)


def test_balance_gains_move_a_cast_photo_toward_the_target_by_their_strength():
    target = np.asarray(BALANCE_TARGET)
    even = _tile_patches(120 * target)
    np.testing.assert_allclose(balance_gains(even), np.ones(3), atol=0.01)  # already as taught: nothing to move
    cast = _tile_patches(120 * target * [1.3, 1.0, 0.8])  # a cold lamp: blue up, red down
    full = balance_gains(cast, strength=1.0)
    assert full.mean() == pytest.approx(1.0)  # the light's colour, not its brightness
    np.testing.assert_allclose(full / full.mean(), [1 / 1.3, 1.0, 1 / 0.8] / np.mean([1 / 1.3, 1.0, 1 / 0.8]),
                               rtol=0.02)
    half = balance_gains(cast, strength=0.5)
    np.testing.assert_allclose(half / half.mean(), np.sqrt(full) / np.sqrt(full).mean(), rtol=1e-6)
    moved = balanced(cast, full).reshape(-1, 3).mean(axis=0)
    np.testing.assert_allclose(moved / moved.mean(), target / target.mean(), rtol=0.02)
    np.testing.assert_array_equal(balance_gains(cast[:0]), np.ones(3))


def test_balance_gains_follow_the_middle_of_the_tiles_not_the_table_around_them():
    patches = _tile_patches(120 * np.asarray(BALANCE_TARGET))
    patches[:, :4] = patches[:, -4:] = (250, 20, 20)  # the rim rows: a blue table beyond the tile
    np.testing.assert_allclose(balance_gains(patches), np.ones(3), atol=0.01)


def test_the_last_reading_is_the_first_network_on_the_balanced_patches():
    from scanner.sectors import SectorClassifier

    classifier = SectorClassifier(DEFAULT_MODELS_DIR)
    patches = np.random.default_rng(0).integers(0, 256, (3, HEX_PATCH, HEX_PATCH, 3), np.uint8)
    gains = np.array([1.2, 1.0, 0.8])
    each = classifier.predict_each(patches, gains=gains)
    assert len(each) == len(classifier.readings) == len(classifier.networks) + 1
    assert classifier.readings[-1] == classifier.networks[0].version + "@balanced"
    for got, want in zip(each[-1], classifier.predict_patches(balanced(patches, gains))):
        np.testing.assert_allclose(got, want, atol=1e-6)
    for got, want in zip(classifier.predict_each(patches, gains=np.ones(3))[-1], each[0]):
        np.testing.assert_allclose(got, want, atol=1e-6)
