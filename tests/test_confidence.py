"""The piece confidence calibration: features, the logistic fit, the shipped file and its use."""

import json
from dataclasses import replace

import numpy as np
import pytest

from fjords.geometry import Hex
from scanner.assemble import DecodeSettings, TileEvidence, assemble
from scanner.confidence import (FACE_VALUE, FEATURES, PieceCalibration, board_confidence, face_value_chance,
                                fit_logistic, fit_weights, load_piece_calibration, logit, piece_features,
                                sole_in_colour, unsmoothed_chance)
from scanner.onnx_model import ModelMissingError
from scanner.pieces import COLOUR_NAMES, KINDS_LABEL_SMOOTHING, PieceReading

KINDS = np.array([0.02, 0.9, 0.06, 0.02])        # a house, fairly sure
COLOURS = np.eye(len(COLOUR_NAMES))[0] * 0.8 + 0.2 / len(COLOUR_NAMES)


def test_features_follow_their_names():
    f = piece_features(KINDS, COLOURS, 0.95, 0.7)
    assert len(f) == len(FEATURES)
    named = dict(zip(FEATURES, f))
    assert named["presence"] == pytest.approx(logit(0.98))
    assert named["kind"] == pytest.approx(logit(0.9 / 0.98))
    assert named["colour"] == pytest.approx(logit(COLOURS.max()))
    assert named["runestone"] == 0.0 and named["bias"] == 1.0
    assert named["tile"] == pytest.approx(logit(0.95))
    assert named["board"] == pytest.approx(logit(0.7))
    assert named["sole_colour"] == named["sole_colour_settler"] == 0.0
    assert named["close_up"] == pytest.approx(logit(1.0))


def test_the_close_ups_doubt_is_a_feature():
    """The kind model's chance that its close-up shows a piece at all weighs beside the presence model's."""
    doubted = dict(zip(FEATURES, piece_features(KINDS, COLOURS, 0.95, 0.7, close_up_piece=0.3)))
    assert doubted["close_up"] == pytest.approx(logit(0.3))
    assert doubted["presence"] == pytest.approx(logit(0.98))


SETTLER = np.array([0.02, 0.06, 0.9, 0.02])
STONE = np.array([0.01, 0.01, 0.01, 0.97])


@pytest.mark.parametrize("kinds, sole, settler", [(KINDS, 1.0, 0.0), (SETTLER, 1.0, 1.0), (STONE, 0.0, 0.0)])
def test_a_piece_whose_colour_no_other_piece_has_is_named_so(kinds, sole, settler):
    """A lone house may be a player's first; a lone settler joins nothing; a rune stone has no colour."""
    named = dict(zip(FEATURES, piece_features(kinds, COLOURS, 0.95, 0.7, sole_colour=True)))
    assert (named["sole_colour"], named["sole_colour_settler"]) == (sole, settler)


def test_sole_colours_are_those_no_other_piece_has():
    assert sole_in_colour(["red", "blue", "red", None, None, "green"]) == [False, True, False, False, False, True]
    assert sole_in_colour([]) == []


def test_board_confidence_is_the_median_tile():
    """One failed corner of the fit must not sink a board; half of its tiles unsure must."""
    assert board_confidence([0.99, 0.98, 0.1, 0.97, 0.95]) == pytest.approx(0.97)
    assert board_confidence([0.99, 0.2, 0.3, 0.98]) == pytest.approx(0.64)
    assert board_confidence([]) == 1.0


def test_runestone_ignores_colour():
    stone = np.array([0.01, 0.01, 0.01, 0.97])
    named = dict(zip(FEATURES, piece_features(stone, COLOURS * 0 + 1 / len(COLOUR_NAMES), 1.0, 1.0)))
    assert named["runestone"] == 1.0 and named["colour"] > 9.0


def test_logistic_fit_recovers_known_weights():
    rng = np.random.default_rng(0)
    x = np.hstack([rng.normal(size=(20000, 2)), np.ones((20000, 1))])
    truth = np.array([1.5, -0.7, 0.4])
    y = rng.random(20000) < 1 / (1 + np.exp(-x @ truth))
    np.testing.assert_allclose(fit_logistic(x, y, l2=0.0), truth, atol=0.08)


@pytest.mark.parametrize("answers, among", [(11, 11), (4, 3), (4, 4)])
def test_undoing_the_label_smoothing_maps_sure_to_one_and_keeps_a_toss_up(answers, among):
    """A model trained with label smoothing s answers at most 1 - s + s/n (renormalised over ``among`` of its
    answers); that is a sure answer, and a chance spread evenly over the answers stays as it is."""
    s = KINDS_LABEL_SMOOTHING
    sure = (1 - s + s / answers) / (1 - s + among * s / answers)
    assert unsmoothed_chance(sure, answers, among) == pytest.approx(1.0)
    assert unsmoothed_chance(1.0, answers, among) == 1.0 and unsmoothed_chance(0.0, answers, among) == 0.0
    assert unsmoothed_chance(1 / among, answers, among) == pytest.approx(1 / among)
    chances = np.linspace(0, 1, 11)
    assert np.all(np.diff(unsmoothed_chance(chances, answers, among)) >= 0)


def test_a_colour_read_as_a_toss_up_caps_the_confidence():
    """However sure the rest of the reading is, a piece whose colour the model reads at one in two is right about
    one time in two: the colour's chance multiplies, a fitted weight cannot outvote it."""
    sure_elsewhere = PieceCalibration(tuple(20.0 * (name == "bias") for name in FEATURES), {},
                                      face_value=tuple(FACE_VALUE))
    toss_up = np.eye(len(COLOUR_NAMES))[0] * 0.5 + np.eye(len(COLOUR_NAMES))[1] * 0.5
    confidence = sure_elsewhere.confidence(piece_features(np.array([0.0, 1.0, 0.0, 0.0]), toss_up, 0.99, 0.99))
    assert confidence == pytest.approx(unsmoothed_chance(0.5, len(COLOUR_NAMES), len(COLOUR_NAMES)), abs=1e-3)
    assert 0.45 < confidence < 0.55
    sure = sure_elsewhere.confidence(piece_features(np.array([0.0, 1.0, 0.0, 0.0]), np.eye(len(COLOUR_NAMES))[0],
                                                    0.99, 0.99))
    assert sure > 0.999


def test_a_calibration_file_taking_unknown_chances_at_face_value_is_refused(tmp_path):
    document = PieceCalibration((0.0,) * len(FEATURES), {}).to_json() | {"face_value": ["lamp"]}
    (tmp_path / "piece_confidence.json").write_text(json.dumps(document))
    with pytest.raises(ModelMissingError, match="fit it again"):
        load_piece_calibration(tmp_path, {})


def test_calibration_file_round_trips_and_must_match_the_models(tmp_path):
    calibration = PieceCalibration(tuple(float(v) for v in range(len(FEATURES))), {"pieces": "a", "piece_kinds": "b"},
                                   face_value=("colour",))
    (tmp_path / "piece_confidence.json").write_text(json.dumps(calibration.to_json()))
    loaded = load_piece_calibration(tmp_path, {"pieces": "a", "piece_kinds": "b"})
    assert loaded.weights == calibration.weights and loaded.version.startswith("piece_confidence-")
    assert loaded.face_value == ("colour",)
    assert load_piece_calibration(tmp_path, {"pieces": "a", "piece_kinds": "other"}) is None
    assert load_piece_calibration(tmp_path / "none", {}) is None


@pytest.mark.parametrize("text", ["{not json", '{"features": ["other"], "weights": [1]}', '{"features": []}'])
def test_an_unreadable_calibration_file_is_a_clear_error(tmp_path, text):
    (tmp_path / "piece_confidence.json").write_text(text)
    with pytest.raises(ModelMissingError, match="fit it again"):
        load_piece_calibration(tmp_path, {})


def _one_piece_evidence() -> dict:
    """A plain tile holding one fairly sure red house."""
    corners = np.array([[np.cos(np.radians(30 + 60 * k)), -np.sin(np.radians(30 + 60 * k))] for k in range(6)])
    probs = np.full((12, 3), 0.0005)
    probs[:, 2] = 0.999
    reading = PieceReading(KINDS, COLOURS, COLOUR_NAMES, (0.0, 0.0), (0.0, -1.0), 3, (200, 30, 30))
    return {Hex(0, 0): TileEvidence(Hex(0, 0), probs, np.ones(12), corners, 1.0, (reading,))}


def test_decoder_reports_the_calibrated_confidence():
    evidence = _one_piece_evidence()
    always_half = PieceCalibration((0.0,) * (len(FEATURES) - 1) + (0.0,), {})
    tile_only = PieceCalibration(tuple(float(name == "tile") for name in FEATURES), {})
    assert assemble(evidence).pieces[0].extra["confidence"] == pytest.approx(0.9 * COLOURS.max(), abs=1e-4)
    assert assemble(evidence, piece_calibration=always_half).pieces[0].extra["confidence"] == 0.5
    # Without the ring prior the tile's terrain confidence is 0.999 ** 12; its logit and back give it again.
    no_ring = DecodeSettings(switch=2 / 3)
    assert assemble(evidence, settings=no_ring, piece_calibration=tile_only).pieces[0].extra["confidence"] == (
        pytest.approx(0.999 ** 12, abs=1e-4))


def test_a_piece_no_other_piece_shares_a_colour_with_is_less_sure_and_may_be_set_aside():
    """Calibrated confidence logistic(2 - 4·sole colour): 0.88 for pieces of one colour, 0.12 (doubtful) for a
    piece whose colour no other piece read has."""
    house = _one_piece_evidence()[Hex(0, 0)]
    sole_less = PieceCalibration(tuple(2.0 * (name == "bias") - 4.0 * (name == "sole_colour") for name in FEATURES),
                                 {})

    def beside(colour: str) -> dict:
        other = replace(house.pieces[0], colour_probs=np.eye(len(COLOUR_NAMES))[COLOUR_NAMES.index(colour)],
                        base_px=(9.0, 9.0), top_px=(9.0, 8.0))
        far = Hex(5, 0)
        return {house.hex: house, far: replace(house, hex=far, corners_px=house.corners_px + 9, pieces=(other,))}

    paired = assemble(beside(COLOUR_NAMES[0]), piece_calibration=sole_less)
    assert [p.extra["confidence"] for p in paired.pieces] == [pytest.approx(0.8808, abs=1e-4)] * 2
    apart = assemble(beside(COLOUR_NAMES[1]), piece_calibration=sole_less)
    assert not apart.pieces
    assert [d["confidence"] for d in apart.extra["doubtful_pieces"]] == [pytest.approx(0.1192, abs=1e-4)] * 2


def test_a_second_piece_on_a_tile_in_a_colour_no_other_piece_has_is_no_break_shown():
    """A crowded tile's pieces are weighed as any piece (logistic(2 - 4·sole colour)): a second piece in a colour
    read nowhere else on the board (a printed field, as a rule) is doubtful; in a colour other pieces have, the
    break is shown."""
    house = _one_piece_evidence()[Hex(0, 0)]
    sole_less = PieceCalibration(tuple(2.0 * (name == "bias") - 4.0 * (name == "sole_colour") for name in FEATURES),
                                 {})

    def painted(colour: str, at: tuple[float, float]):
        return replace(house.pieces[0], colour_probs=np.eye(len(COLOUR_NAMES))[COLOUR_NAMES.index(colour)],
                       base_px=at, top_px=(at[0], at[1] - 1.0))

    def board(second: str, elsewhere: tuple[str, str]):
        crowded = replace(house, pieces=(painted("red", (0.0, 0.0)), painted(second, (0.4, 0.2))))
        others = {h: replace(house, hex=h, corners_px=house.corners_px + 9 * k,
                             pieces=(painted(colour, (9.0 * k,) * 2),))
                  for k, (h, colour) in enumerate(zip((Hex(5, 0), Hex(0, 5)), elsewhere), start=1)}
        return assemble({house.hex: crowded, **others}, piece_calibration=sole_less)

    shared = board("blue", ("red", "blue"))
    assert len(shared.pieces_at(Hex(0, 0))) == 2
    assert any(v.rule == "two-pieces-on-tile" for v in shared.legal_violations())
    alone = board("blue", ("red", "red"))
    assert [p.player for p in alone.pieces_at(Hex(0, 0))] == ["red"]
    assert [d["player"] for d in alone.extra["doubtful_pieces"]] == ["blue"]


def test_a_piece_on_a_board_of_unsure_tiles_is_less_sure():
    """The board feature: the same piece and tile, with the rest of the board read unsure or sure."""
    piece = _one_piece_evidence()[Hex(0, 0)]
    board_only = PieceCalibration(tuple(float(name == "board") for name in FEATURES), {})

    def with_neighbours(sector_prob: float) -> dict:
        probs = np.full((12, 3), (1 - sector_prob) / 2)
        probs[:, 2] = sector_prob
        others = {h: TileEvidence(h, probs, np.ones(12), piece.corners_px + 3 * k, 1.0, ())
                  for k, h in enumerate([Hex(5, 0), Hex(7, 0), Hex(9, 0)], start=1)}
        return {piece.hex: piece, **others}

    sure = assemble(with_neighbours(0.999), piece_calibration=board_only).pieces[0].extra["confidence"]
    unsure = assemble(with_neighbours(0.6), piece_calibration=board_only).pieces[0].extra["confidence"]
    assert unsure < 0.5 < sure


@pytest.mark.parametrize("bias, counted", [(-2.0, False), (2.0, True)])
def test_a_doubtful_piece_is_listed_for_checking_not_counted(bias, counted):
    """Calibrated confidence logistic(bias): 0.12 is below the floor, 0.88 above it."""
    assert 0.12 < DecodeSettings().min_piece_confidence < 0.88
    calibration = PieceCalibration((0.0,) * (len(FEATURES) - 1) + (bias,), {})
    board = assemble(_one_piece_evidence(), piece_calibration=calibration)
    assert len(board.pieces) == int(counted)
    doubtful = board.extra.get("doubtful_pieces", [])
    assert len(doubtful) == int(not counted)
    if doubtful:
        assert doubtful[0]["kind"] == "house" and (doubtful[0]["q"], doubtful[0]["r"]) == (0, 0)
        assert doubtful[0]["confidence"] == pytest.approx(1 / (1 + np.e ** 2), abs=1e-4)
        assert "doubtful_pieces" in board.to_json() and board.score() == {}


def test_without_a_calibration_every_piece_read_is_counted():
    """The floor is a chance of being right; uncalibrated confidences are not one."""
    board = assemble(_one_piece_evidence(), settings=DecodeSettings(min_piece_confidence=0.99))
    assert len(board.pieces) == 1 and "doubtful_pieces" not in board.extra


def test_pieces_sharing_a_tile_are_a_break_only_when_read_sure_and_then_never_set_aside():
    """Two readings on one tile are a rule break the scan shows when both are read sure (min_crowded_piece); a
    break believed is shown however unsure the floor finds its pieces, while an unsure pair is listed to check."""
    evidence = _one_piece_evidence()
    tile = evidence[Hex(0, 0)]
    crowded = {Hex(0, 0): TileEvidence(tile.hex, tile.sector_probs, tile.sector_visible, tile.corners_px, 1.0,
                                       tile.pieces * 2)}
    calibration = PieceCalibration((0.0,) * (len(FEATURES) - 1) + (-3.0,), {})  # every piece 0.05 sure
    board = assemble(crowded, piece_calibration=calibration)
    assert board.pieces == () and len(board.extra["doubtful_pieces"]) == 2
    believed = assemble(crowded, piece_calibration=calibration, settings=DecodeSettings(min_crowded_piece=0.0))
    assert len(believed.pieces) == 2 and "doubtful_pieces" not in believed.extra


def test_fitting_reads_every_folder_given(tmp_path, capsys):
    """Each folder is read in turn: the first holds only a held-out render (skipped unscanned), the second none."""
    from scanner.confidence import main
    from scanner.holdout import MAX_TRAINING_SEED

    held_out, empty = tmp_path / "held_out", tmp_path / "empty"
    for folder in (held_out, empty):
        folder.mkdir()
    (held_out / "render.jpg").write_bytes(b"not read: a held-out seed is skipped before its photo is opened")
    (held_out / "render.json").write_text(json.dumps({"render": {"seed": MAX_TRAINING_SEED}}))
    out = tmp_path / "confidence.json"
    assert main(["fit", "--renders", str(held_out), str(empty), "--out", str(out)]) == 2
    message = capsys.readouterr().err
    assert str(empty) in message and message.count("\n") == 1
    assert not out.exists()


def _face_value_renders(rng, count: int, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Features of ``count`` pieces and whether each is right, drawn from the face-value model with logistic
    weights ``truth``: kind and colour read anywhere from a toss-up to sure."""
    x = np.zeros((count, len(FEATURES)))
    x[:, FEATURES.index("presence")] = rng.normal(2.0, 1.5, count)
    x[:, FEATURES.index("sole_colour")] = rng.random(count) < 0.3
    x[:, FEATURES.index("kind")] = rng.uniform(0.0, 6.0, count)
    x[:, FEATURES.index("colour")] = rng.uniform(-1.0, 6.0, count)
    x[:, FEATURES.index("bias")] = 1.0
    chance = face_value_chance(x, tuple(FACE_VALUE)) / (1 + np.exp(-x @ truth))
    return x, rng.random(count) < chance


def test_fitting_recovers_the_weights_with_kind_and_colour_at_face_value():
    rng = np.random.default_rng(2)
    truth = np.zeros(len(FEATURES))
    truth[[FEATURES.index("presence"), FEATURES.index("sole_colour"), FEATURES.index("bias")]] = 0.8, -2.0, 1.5
    x, right = _face_value_renders(rng, 40000, truth)
    weights = fit_weights(x, right)
    assert weights[FEATURES.index("kind")] == weights[FEATURES.index("colour")] == 0.0
    np.testing.assert_allclose(weights, truth, atol=0.15)


def test_fitting_on_top_keeps_the_named_weights_and_fits_the_others(tmp_path):
    """A new feature is fitted against the calibration already shipped, whose weights stay as they were."""
    from scanner.confidence import _fit_on_top

    rng = np.random.default_rng(1)
    truth = np.zeros(len(FEATURES))
    truth[[FEATURES.index("presence"), FEATURES.index("sole_colour"), FEATURES.index("bias")]] = 0.8, -2.0, 0.5
    x, right = _face_value_renders(rng, 20000, truth)
    named = [n for n in FEATURES if not n.startswith("sole")]
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps({"features": named, "weights": [float(truth[FEATURES.index(n)]) for n in named]}))
    weights = _fit_on_top(x, right, kept)
    assert [weights[FEATURES.index(n)] for n in named] == [truth[FEATURES.index(n)] for n in named]
    assert weights[FEATURES.index("sole_colour")] == pytest.approx(-2.0, abs=0.15)
    # Settlers never appear here: the ridge holds their weight at zero rather than letting it run off.
    assert weights[FEATURES.index("sole_colour_settler")] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("text, message", [("{not json", "cannot read"),
                                           ('{"features": ["bias", "lamp"], "weights": [1, 2]}', "has not: lamp"),
                                           ('{"features": ["presence"], "weights": [1]}', "no bias")])
def test_weights_to_keep_that_do_not_fit_this_scanner_are_a_clear_error(tmp_path, text, message):
    from fjords.errors import FjordsError
    from scanner.confidence import _fit_on_top

    kept = tmp_path / "kept.json"
    kept.write_text(text)
    with pytest.raises(FjordsError, match=message):
        _fit_on_top(np.ones((4, len(FEATURES))), np.array([True, False, True, True]), kept)
