"""scanner.terrain_head: the sector network's last layer corrected for one printing, and only when it helps."""

import json

import numpy as np
import pytest

from scanner.calibration import Calibration
from scanner.pipeline import Scanner
from scanner.sectors import SectorClassifier
from scanner.terrain_head import HEAD_RIDGES, TerrainHead, fit_correction, fit_terrain_head
from scanner.onnx_model import DEFAULT_MODELS_DIR

FEATURES = 8


def _photo(rng, tiles=30, confused=True):
    """Sector features whose first coordinates name the terrain; the network's logits mistake plain for
    mountain wherever a "printing" feature is on (``confused``), as with a style it never saw."""
    labels = rng.integers(0, 3, size=(tiles, 12))
    features = rng.normal(0, 0.3, size=(tiles, 12, FEATURES))
    features[..., :3] += 2.0 * np.eye(3)[labels]
    features[..., 3] = 1.0 if confused else 0.0
    logits = 4.0 * np.eye(3)[labels] + rng.normal(0, 0.5, size=(tiles, 12, 3))
    if confused:
        plains = labels == 2
        logits[plains] = logits[plains][:, [0, 2, 1]]  # plain read as mountain, confidently
    return logits, features, labels


def test_the_correction_learns_what_the_network_confuses():
    logits, features, labels = _photo(np.random.default_rng(0))
    correction = fit_correction(logits.reshape(-1, 3), features.reshape(-1, FEATURES), labels.ravel(), ridge=10.0)
    head = TerrainHead(correction, 10.0, "sectors-x")
    fresh_logits, fresh_features, fresh_labels = _photo(np.random.default_rng(1))
    assert np.mean(fresh_logits.argmax(-1) == fresh_labels) < 0.8
    assert np.mean(head.adjust(fresh_logits, fresh_features).argmax(-1) == fresh_labels) > 0.99


def test_a_ridge_holds_the_correction_small():
    logits, features, labels = _photo(np.random.default_rng(2))
    args = logits.reshape(-1, 3), features.reshape(-1, FEATURES), labels.ravel()
    weak, strong = (np.abs(fit_correction(*args, ridge=r)[:, :-1]).sum() for r in (1.0, 1000.0))
    assert strong < weak


def test_a_confused_printing_gets_a_head_and_honest_left_out_logits():
    logits, features, labels = _photo(np.random.default_rng(3))
    usable = np.ones(labels.shape, bool)
    head, left_out = fit_terrain_head(logits, features, labels, usable, "sectors-x")
    assert head is not None and head.ridge in HEAD_RIDGES and head.model == "sectors-x"
    assert left_out.shape == logits.shape
    assert np.mean(left_out.argmax(-1) == labels) > 0.95


def test_features_that_tell_nothing_new_give_no_head():
    rng = np.random.default_rng(4)
    logits, _, labels = _photo(rng, confused=False)
    features = rng.normal(0, 1, size=labels.shape + (FEATURES,))
    head, left_out = fit_terrain_head(logits, features, labels, np.ones(labels.shape, bool), "sectors-x")
    assert head is None and np.array_equal(left_out, logits)


def test_a_head_round_trips_through_a_calibration_document():
    head = TerrainHead(np.random.default_rng(5).normal(size=(3, FEATURES + 1)), 100.0, "sectors-x")
    calibration = Calibration("home", {"anna": (1, 2, 3)}, terrain_head=head)
    back = Calibration.from_json(json.loads(json.dumps(calibration.to_json())))
    assert back.terrain_head.ridge == 100.0 and back.terrain_head.model == "sectors-x"
    assert np.allclose(back.terrain_head.weights, head.weights, atol=1e-5)


@pytest.mark.parametrize("weights", [{"S": [1.0], "M": [1.0], "P": [1.0]}, {"S": [1.0, 2.0], "M": [1.0, 2.0]},
                                     {"S": [1.0, float("nan")], "M": [1.0, 2.0], "P": [1.0, 2.0]}])
def test_bad_heads_are_refused(weights):
    with pytest.raises((ValueError, KeyError)):
        TerrainHead.from_json({"model": "sectors-x", "ridge": 10.0, "weights": weights})


def test_the_shipped_sector_model_gives_its_features():
    patches = np.random.default_rng(6).integers(0, 255, size=(2, 64, 64, 3), dtype=np.uint8)
    classifier = SectorClassifier(DEFAULT_MODELS_DIR)
    logits, features = classifier.read_patches(patches)
    assert logits.shape == (2, 12, 4) and features.ndim == 3 and features.shape[:2] == (2, 12)
    zero = TerrainHead(np.zeros((3, features.shape[-1] + 1)), 10.0, classifier.version)
    assert np.allclose(classifier.predict_patches(patches, zero)[0], classifier.predict_patches(patches)[0])


def test_a_head_of_another_sector_model_is_not_used_and_the_scan_says_so():
    head = TerrainHead(np.zeros((3, 65)), 10.0, "sectors-000000000000")
    scanner = Scanner(calibration=Calibration("home", {"anna": (1, 2, 3)}, terrain_head=head))
    assert scanner.terrain_head is None
    assert "calibrate again" in " ".join(scanner.calibration_advice())
