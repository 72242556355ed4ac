"""The shipped models run in batches of at most MAX_BATCH samples, with the same outputs as one run."""

import numpy as np
import pytest

import scanner.onnx_model as onnx_model
from scanner.onnx_model import DEFAULT_MODELS_DIR, OnnxModel
from shipped_models import scan_models_trained

pytestmark = pytest.mark.skipif(not scan_models_trained(), reason="models not trained")


@pytest.mark.parametrize("name, size", [("sectors", 24), ("pieces", 64)])
def test_a_batch_run_in_parts_gives_the_outputs_of_one_run(monkeypatch, name, size):
    model = OnnxModel(DEFAULT_MODELS_DIR / f"{name}.onnx")
    x = np.random.default_rng(7).random((11, 3, size, size), dtype=np.float32)
    whole = model.run(x)
    monkeypatch.setattr(onnx_model, "MAX_BATCH", 4)
    model.session = _Recording(model.session)
    parts = model.run(x)
    assert model.session.batches == [4, 4, 3]
    assert len(parts) == len(whole)
    for got, want in zip(parts, whole):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_an_empty_batch_still_gives_each_output(monkeypatch):
    model = OnnxModel(DEFAULT_MODELS_DIR / "pieces.onnx")
    monkeypatch.setattr(onnx_model, "MAX_BATCH", 4)
    assert [out.shape for out in model.run(np.zeros((0, 3, 64, 64), np.float32))] == [(0, 4), (0, 11), (0, 4)]


class _Recording:
    """An inference session that records the batch size of every run."""

    def __init__(self, session):
        self.session, self.batches = session, []

    def run(self, outputs, feeds):
        self.batches.extend(len(x) for x in feeds.values())
        return self.session.run(outputs, feeds)
