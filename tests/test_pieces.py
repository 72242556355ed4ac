"""Piece colour naming, colour sampling, crop geometry, counting pieces by spots, and the piece models."""

import numpy as np
import pytest

from scanner.onnx_model import DEFAULT_MODELS_DIR
from scanner.patches import PIECE_CROP, PIECE_WINDOW, apply_homography, piece_window_matrix
from scanner.pieces import (COLOUR_NAMES, MAX_PIECES_PER_TILE, MIN_SECOND_SPOT, PALETTE_FIT, PIECE_KINDS,
                            SPOT_GRID, SPOTS_MODEL_FILE, PieceReading, Spot, calibrated_colour_probs, count_spots,
                            crowding_spots, find_spots, palette_named, photo_light, piece_rgb)

PALETTE = {"red": (200, 30, 40), "orange": (240, 130, 20), "blue": (30, 60, 200), "white": (240, 240, 235)}


@pytest.mark.parametrize("rgb, name", [((190, 40, 45), "red"), ((230, 140, 40), "orange"),
                                        ((40, 70, 180), "blue"), ((225, 228, 230), "white")])
def test_calibrated_colour_is_the_nearest_in_lab(rgb, name):
    probs, names, nearest = calibrated_colour_probs(rgb, PALETTE)
    assert names == tuple(PALETTE)
    assert names[int(np.argmax(probs))] == name
    assert probs.sum() == pytest.approx(1.0)
    assert probs.max() > 0.9
    assert nearest < PALETTE_FIT


def test_a_colour_far_from_every_calibrated_one_does_not_fit_the_palette():
    assert calibrated_colour_probs((40, 140, 60), PALETTE)[2] > PALETTE_FIT  # green, among red/orange/blue/white
    assert calibrated_colour_probs((200, 30, 40), PALETTE)[2] == pytest.approx(0.0, abs=1e-6)


# A table's two players as a calibration photo measured them (held-out copy 2), and a darker photo of the same table.
TABLE = {"orange": (216, 139, 61), "purple": (75, 39, 74)}
DARK_ORANGE, DARK_PURPLE = (80, 46, 19), (30, 15, 31)


def reading(rgb, colour="red") -> PieceReading:
    colours = np.zeros(len(COLOUR_NAMES))
    colours[COLOUR_NAMES.index(colour)] = 1.0
    return PieceReading(np.array([0.0, 1.0, 0.0, 0.0]), colours, COLOUR_NAMES, (0.0, 0.0), (0.0, -10.0), 0, rgb)


def named(rgb, gain) -> str:
    return palette_named(reading(rgb), TABLE, gain).colour


def test_a_dark_photo_names_a_dark_orange_piece_purple_at_the_calibration_photos_light():
    assert named(DARK_ORANGE, np.ones(3)) == "purple"


def test_the_photos_light_fitted_on_its_pieces_names_them_after_their_players():
    gain = photo_light(np.array([DARK_ORANGE] * 3 + [DARK_PURPLE] * 2), TABLE)
    assert gain.min() > 1.2  # lighter: the photo was darker than the calibration photo
    assert named(DARK_ORANGE, gain) == "orange" and named(DARK_PURPLE, gain) == "purple"


def test_pieces_at_the_calibrated_colours_keep_the_calibration_photos_light():
    assert np.allclose(photo_light(np.array([TABLE["orange"], TABLE["purple"], TABLE["orange"]]), TABLE), 1.0)


def test_one_piece_tells_nothing_about_the_light():
    assert np.array_equal(photo_light(np.array([DARK_ORANGE]), TABLE), np.ones(3))
    assert np.array_equal(photo_light(np.zeros((0, 3)), TABLE), np.ones(3))


def test_pieces_no_calibrated_player_fits_neither_move_the_light_nor_are_named_by_it():
    green = (40, 140, 60)  # among red, orange, blue and white: a player the calibration does not know
    assert np.array_equal(photo_light(np.array([green] * 5 + [PALETTE["red"], PALETTE["blue"]]), PALETTE), np.ones(3))
    # However dark the light fitted on the others, the stranger keeps the network's name.
    assert palette_named(reading(green, "green"), PALETTE, np.full(3, 0.4)).colour == "green"


def test_piece_rgb_reads_the_pixels_between_base_and_top():
    image = np.zeros((100, 100, 3), np.uint8)
    image[30:70, 40:60] = (20, 40, 200)  # BGR: a red piece
    assert piece_rgb(image, np.array([50.0, 68.0]), np.array([50.0, 32.0]), 3.0) == (200, 40, 20)


def test_piece_rgb_outside_the_photo_is_black():
    image = np.full((10, 10, 3), 255, np.uint8)
    assert piece_rgb(image, np.array([-50.0, -50.0]), np.array([-60.0, -60.0]), 2.0) == (0, 0, 0)


def test_piece_window_reaches_further_up_than_down():
    corners = np.array([[50 + 20 * np.cos(a), 50 - 20 * np.sin(a)] for a in np.radians(30 + 60 * np.arange(6))])
    m = piece_window_matrix(corners)
    x0, x1, y0, y1 = PIECE_WINDOW
    top_left, bottom_right = apply_homography(m, np.array([[50 + 20 * x0, 50 + 20 * y0],
                                                            [50 + 20 * x1, 50 + 20 * y1]]))
    assert top_left == pytest.approx([0, 0], abs=1e-6)
    assert bottom_right == pytest.approx([PIECE_CROP, PIECE_CROP], abs=1e-6)
    assert -y0 > y1


def test_names_match_the_spec():
    assert PIECE_KINDS == ("none", "house", "settler", "runestone")
    assert set(COLOUR_NAMES) == {"red", "yellow", "blue", "black", "white", "green", "grey", "beige", "brown",
                                 "orange", "purple"}


@pytest.mark.skipif(not (DEFAULT_MODELS_DIR / "pieces.onnx").exists(), reason="model not trained")
def test_model_output_shapes_and_ranges():
    from scanner.onnx_model import OnnxModel
    from scanner.sectors import to_tensor

    crops = np.random.default_rng(0).integers(0, 255, (3, PIECE_CROP, PIECE_CROP, 3), dtype=np.uint8)
    kind, colour, points = OnnxModel(DEFAULT_MODELS_DIR / "pieces.onnx").run(to_tensor(crops))
    assert kind.shape == (3, len(PIECE_KINDS)) and colour.shape == (3, len(COLOUR_NAMES))
    assert points.shape == (3, 4) and (points >= 0).all() and (points <= 1).all()


def test_close_up_is_centred_on_the_piece_and_sized_by_the_tile():
    from scanner.patches import CLOSE_UP, CLOSE_UP_RADII, Pyramid, close_up_matrix, close_ups

    m = close_up_matrix((120.0, 80.0), 50.0)
    centre, right = apply_homography(m, np.array([[120.0, 80.0], [120.0 + CLOSE_UP_RADII * 25.0, 80.0]]))
    assert centre == pytest.approx([(CLOSE_UP - 1) / 2] * 2)
    assert right[0] - centre[0] == pytest.approx(CLOSE_UP / 2)
    image = np.zeros((200, 300, 3), np.uint8)
    image[75:86, 115:126] = 255  # a white piece
    close = close_ups(Pyramid(image), np.array([[120.0, 80.0]]), np.array([50.0]))[0]
    assert close.shape == (CLOSE_UP, CLOSE_UP, 3)
    assert close[CLOSE_UP // 2, CLOSE_UP // 2].min() == 255 and close[0, 0].max() == 0


def _heat_with_peaks(peaks, grid=SPOT_GRID):
    """Spot model outputs with a peak of the given heat at each (x, y) cell, base offset 0.25 cell, top 0.1 up."""
    heat = np.full((1, 1, grid, grid), -8.0, np.float32)
    regress = np.zeros((1, 4, grid, grid), np.float32)
    regress[0, :2] = 0.25
    regress[0, 3] = -0.1
    for x, y, score in peaks:
        heat[0, 0, y, x] = np.log(score / (1 - score))
    return heat, regress


def test_spots_are_local_maxima_strongest_first_with_their_base_and_top():
    heat, regress = _heat_with_peaks([(4, 10, 0.7), (11, 9, 0.95), (12, 9, 0.9)])  # (12, 9) is beside a stronger
    spots = find_spots(heat, regress)[0]
    assert [round(s.score, 2) for s in spots] == [0.95, 0.7]
    assert spots[0].base == pytest.approx(((11 + 0.75) / SPOT_GRID, (9 + 0.75) / SPOT_GRID))
    assert spots[0].top == pytest.approx((spots[0].base[0], spots[0].base[1] - 0.1))


def test_a_tile_holds_several_pieces_only_when_the_second_peak_is_clear():
    weak_second = _heat_with_peaks([(4, 10, 0.95), (11, 9, 0.9 * MIN_SECOND_SPOT)])[0]
    assert count_spots(np.concatenate([
        _heat_with_peaks([])[0], _heat_with_peaks([(4, 10, 0.95)])[0],
        _heat_with_peaks([(4, 10, 0.95), (11, 9, 0.9)])[0], weak_second])) == [0, 1, 2, 1]


@pytest.mark.skipif(not (DEFAULT_MODELS_DIR / SPOTS_MODEL_FILE).exists(), reason="model not trained")
def test_spot_model_output_shapes():
    from scanner.onnx_model import OnnxModel
    from scanner.sectors import to_tensor

    crops = np.random.default_rng(0).integers(0, 255, (2, PIECE_CROP, PIECE_CROP, 3), dtype=np.uint8)
    heat, regress = OnnxModel(DEFAULT_MODELS_DIR / SPOTS_MODEL_FILE).run(to_tensor(crops))
    assert heat.shape == (2, 1, SPOT_GRID, SPOT_GRID) and regress.shape == (2, 4, SPOT_GRID, SPOT_GRID)


def test_only_clear_peaks_of_a_crowded_tile_are_read_and_at_most_three():
    def spots(*scores):
        return [Spot(s, (0.5, 0.5), (0.5, 0.3)) for s in scores]

    strong = MIN_SECOND_SPOT + 0.05
    assert [s.score for s in crowding_spots(spots(0.99, strong, 0.9 * MIN_SECOND_SPOT))] == [0.99, strong]
    assert crowding_spots(spots(0.99, 0.9 * MIN_SECOND_SPOT)) == []
    assert len(crowding_spots(spots(0.99, 0.98, 0.97, 0.96))) == MAX_PIECES_PER_TILE


@pytest.mark.parametrize("model", ["kinds", "fine_kinds"])
def test_a_close_up_and_its_mirror_image_read_alike(model):
    """Each kind model's two views are averaged, so the reading cannot depend on which way a piece faces."""
    from scanner.pieces import PieceClassifier
    from scanner.sectors import softmax, to_tensor

    classifier = PieceClassifier(DEFAULT_MODELS_DIR)
    network = getattr(classifier, model)
    side = network.input_side
    close = np.random.default_rng(1).integers(0, 255, (4, side, side, 3), dtype=np.uint8)
    kinds, colours = classifier.read_close_ups(close, network)
    mirrored_kinds, mirrored_colours = classifier.read_close_ups(close[:, :, ::-1], network)
    assert kinds.shape == (4, len(PIECE_KINDS)) and colours.shape == (4, len(COLOUR_NAMES))
    assert np.allclose(kinds.sum(axis=1), 1.0) and np.allclose(colours.sum(axis=1), 1.0)
    assert np.allclose(kinds, mirrored_kinds, atol=1e-5) and np.allclose(colours, mirrored_colours, atol=1e-5)
    one_view = softmax(network.run(to_tensor(close))[0])
    assert not np.allclose(kinds, one_view, atol=1e-3)  # the second view is really read


def test_a_piece_crop_and_its_mirror_image_read_alike():
    """The presence model's two views are averaged: a mirrored crop gives the same chance and mirrored points."""
    from scanner.pieces import PieceClassifier
    from scanner.sectors import softmax, to_tensor

    crops = to_tensor(np.random.default_rng(5).integers(0, 255, (3, PIECE_CROP, PIECE_CROP, 3), dtype=np.uint8))
    classifier = PieceClassifier(DEFAULT_MODELS_DIR)
    chance, points = classifier.read_presence(crops)
    mirrored_chance, mirrored_points = classifier.read_presence(np.ascontiguousarray(crops[..., ::-1]))
    assert chance.shape == (3,) and points.shape == (3, 4) and np.all((0 <= chance) & (chance <= 1))
    assert np.allclose(chance, mirrored_chance, atol=1e-5)
    assert np.allclose(mirrored_points[:, [0, 2]], 1.0 - points[:, [0, 2]], atol=1e-5)
    assert np.allclose(mirrored_points[:, [1, 3]], points[:, [1, 3]], atol=1e-5)
    logits, _, one_view_points = classifier.model.run(crops)
    assert not np.allclose(chance, 1.0 - softmax(logits)[:, 0], atol=1e-4)  # the second view is really read
    assert not np.allclose(points, one_view_points, atol=1e-4)


def test_a_piece_is_read_by_both_kind_models_at_every_close_up_size_and_the_readings_averaged():
    from scanner.patches import Pyramid, close_ups
    from scanner.pieces import CLOSE_UP_SCALES, PieceClassifier

    image = np.random.default_rng(2).integers(0, 255, (240, 320, 3), dtype=np.uint8)
    centres, radii = np.array([[120.0, 80.0], [200.0, 150.0]]), np.array([50.0, 40.0])
    classifier = PieceClassifier(DEFAULT_MODELS_DIR)
    kinds, colours = classifier.read_pieces(Pyramid(image), centres, radii)
    assert classifier.kinds.input_side != classifier.fine_kinds.input_side  # each cut at its own model's side
    views = [classifier.read_close_ups(close_ups(Pyramid(image), centres, radii * s, model.input_side), model)
             for model in (classifier.kinds, classifier.fine_kinds) for s in CLOSE_UP_SCALES]
    assert len(CLOSE_UP_SCALES) > 1 and CLOSE_UP_SCALES[0] == 1.0
    assert np.allclose(kinds, np.mean([k for k, _ in views], axis=0), atol=1e-6)
    assert np.allclose(colours, np.mean([c for _, c in views], axis=0), atol=1e-6)
    for first in (0, len(CLOSE_UP_SCALES)):  # the other sizes and the other model are really read
        assert not np.allclose(kinds, views[first][0], atol=1e-4)
        assert not np.allclose(kinds, np.mean([k for k, _ in views[first:first + len(CLOSE_UP_SCALES)]], axis=0),
                               atol=1e-4)


def test_kind_and_colour_are_read_only_where_a_piece_may_stand(monkeypatch):
    """A tile the presence model calls empty (under MIN_READ) costs no close-ups: its kind and colour are even."""
    from scanner.patches import Pyramid
    from scanner.pieces import MIN_READ, PieceClassifier

    image = np.random.default_rng(3).integers(0, 255, (240, 320, 3), dtype=np.uint8)
    angles = np.radians(30.0 + 60.0 * np.arange(6))
    hexagon = 40.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    corners = [hexagon + (100.0, 100.0), hexagon + (220.0, 120.0)]
    classifier = PieceClassifier(DEFAULT_MODELS_DIR)
    no_piece = np.array([0.1, 1.0 - MIN_READ / 2])  # a piece on the first tile, almost surely none on the second
    presence_logits = np.log(np.column_stack([no_piece] + [(1.0 - no_piece) / 3] * 3))
    points = np.array([[0.5, 0.6, 0.5, 0.3]] * 2)
    monkeypatch.setattr(classifier.model, "run", lambda crops: [presence_logits, None, points])
    no_spots = (np.full((1, 1, SPOT_GRID, SPOT_GRID), -10.0), np.zeros((1, 4, SPOT_GRID, SPOT_GRID)))
    monkeypatch.setattr(classifier, "read_spots", lambda crops, model=None: no_spots)
    read, read_pieces = [], classifier.read_pieces
    monkeypatch.setattr(classifier, "read_pieces", lambda *args: read.append(len(args[1])) or read_pieces(*args))
    (piece,), (empty,) = classifier.predict(Pyramid(image), corners)
    assert read == [1]
    assert piece.kind_probs[1:].sum() == pytest.approx(0.9) and piece.kind != "none"
    np.testing.assert_allclose(empty.kind_probs, [1.0 - MIN_READ / 2] + [MIN_READ / 6] * 3)
    np.testing.assert_allclose(empty.colour_probs, 1.0 / len(COLOUR_NAMES))


def test_a_lone_spot_stands_in_where_the_presence_model_doubts_a_piece(monkeypatch):
    """The doubted tiles' spot model looks at tiles from MIN_STAND_IN to MIN_SPOT, the crowding one above; on a
    doubted tile the strongest peak, from MIN_LONE_SPOT, places the piece and gives its chance; crowding is read only
    above MIN_SPOT."""
    from scanner.patches import Pyramid
    from scanner.pieces import MIN_LONE_SPOT, MIN_SPOT, MIN_STAND_IN, PieceClassifier

    image = np.random.default_rng(4).integers(0, 255, (240, 480, 3), dtype=np.uint8)
    angles = np.radians(30.0 + 60.0 * np.arange(6))
    hexagon = 40.0 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    corners = [hexagon + (60.0 + 90.0 * n, 120.0) for n in range(5)]
    classifier = PieceClassifier(DEFAULT_MODELS_DIR)
    doubted = (MIN_STAND_IN + MIN_SPOT) / 2
    p_piece = np.array([doubted, doubted, doubted, MIN_STAND_IN / 2, 0.9])
    presence_logits = np.log(np.column_stack([1.0 - p_piece] + [p_piece / 3] * 3))
    points = np.array([[0.5, 0.6, 0.5, 0.3]] * 5)
    monkeypatch.setattr(classifier.model, "run", lambda crops: [presence_logits, None, points])
    lone, weak = MIN_LONE_SPOT + 0.1, MIN_LONE_SPOT - 0.05
    peaks = {0: [(4, 10, lone)], 1: [(4, 10, weak)], 2: [(4, 10, 0.95), (11, 9, 0.9)], 3: [(4, 10, 0.95)],
             4: [(4, 10, 0.95), (11, 9, 0.9)]}
    looked_at = {}

    def read_spots(crops, model=None):
        of_doubted = model is classifier.doubted_spots
        tiles = [n for n in range(5)
                 if (MIN_STAND_IN <= p_piece[n] < MIN_SPOT if of_doubted else p_piece[n] >= MIN_SPOT)]
        looked_at[of_doubted] = len(crops)
        maps = [_heat_with_peaks(peaks[n]) for n in tiles]
        return np.concatenate([h for h, _ in maps]), np.concatenate([r for _, r in maps])

    monkeypatch.setattr(classifier, "read_spots", read_spots)
    stands_in, kept, not_crowded, below_floor, crowded = classifier.predict(Pyramid(image), corners)
    assert looked_at == {True: 3, False: 1}  # the tile under MIN_STAND_IN is not looked at
    assert 1.0 - stands_in[0].kind_probs[0] == pytest.approx(lone, abs=1e-4)
    spot_base = np.array([[(4 + 0.75) / SPOT_GRID, (10 + 0.75) / SPOT_GRID]]) * PIECE_CROP  # not the points' (0.5, 0.6)
    placed = apply_homography(np.linalg.inv(piece_window_matrix(corners[0])), spot_base)[0]
    assert stands_in[0].base_px == pytest.approx(tuple(placed))
    assert 1.0 - kept[0].kind_probs[0] == pytest.approx(doubted)
    assert len(not_crowded) == 1 and 1.0 - not_crowded[0].kind_probs[0] == pytest.approx(0.95, abs=1e-4)
    assert len(below_floor) == 1 and 1.0 - below_floor[0].kind_probs[0] == pytest.approx(MIN_STAND_IN / 2)
    assert len(crowded) == 2


def test_seen_shares_split_the_presence_recall_by_what_stands_there():
    from scanner.train_pieces import seen_shares

    kinds = np.array([0, 0, 0, 0, 1, 2, 2, 3, 3, 1])
    colours = np.array([-1, -1, -1, -1, COLOUR_NAMES.index("white"), COLOUR_NAMES.index("white"),
                        COLOUR_NAMES.index("red"), -1, -1, COLOUR_NAMES.index("red")])
    seen = np.array([1, 0, 0, 0, 1, 0, 1, 1, 0, 1], bool)
    shares = seen_shares(seen, kinds, colours)
    assert shares == {"seen_pieces": 4 / 6, "seen_rune_stones": 1 / 2, "seen_red": 1.0, "seen_white": 1 / 2,
                      "seen_empty": 1 / 4}
