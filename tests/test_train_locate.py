"""Fine-tuning the tile-top network from its shipped ONNX file (needs the ``[train]`` extra; skipped without it)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from scanner.locate import DEFAULT_MODEL  # noqa: E402
from scanner.onnx_model import OnnxModel  # noqa: E402
from scanner.train_locate import load_onnx_weights, make_network  # noqa: E402


def test_weights_taken_back_from_onnx_give_the_shipped_maps():
    net = make_network()
    load_onnx_weights(net, DEFAULT_MODEL)
    net.eval()
    image = np.random.default_rng(0).uniform(0, 255, (1, 3, 96, 128)).astype(np.float32)
    with torch.no_grad():
        ours = net(torch.from_numpy(image)).numpy()
    shipped = OnnxModel(DEFAULT_MODEL, threads=1).run(image)[0]
    assert np.abs(ours - shipped).max() < 1e-4
