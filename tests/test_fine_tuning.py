"""Fine-tuning the shipped networks from their ONNX files (needs the ``[train]`` extra; skipped without it)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from scanner.locate import DEFAULT_MODEL  # noqa: E402
from scanner.onnx_model import OnnxModel  # noqa: E402
from scanner.train_locate import make_network  # noqa: E402
from scanner.training import load_folded_onnx  # noqa: E402


def test_weights_taken_back_from_onnx_give_the_shipped_maps():
    net = make_network()
    load_folded_onnx(net, DEFAULT_MODEL)
    net.eval()
    image = np.random.default_rng(0).uniform(0, 255, (1, 3, 96, 128)).astype(np.float32)
    with torch.no_grad():
        ours = net(torch.from_numpy(image)).numpy()
    shipped = OnnxModel(DEFAULT_MODEL, threads=1).run(image)[0]
    assert np.abs(ours - shipped).max() < 1e-4


@pytest.mark.parametrize("module, model_file", [("scanner.train_sectors", "sectors.onnx"),
                                                ("scanner.train_pieces", "pieces.onnx"),
                                                ("scanner.train_piece_kinds", "piece_kinds.onnx"),
                                                ("scanner.train_piece_spots", "piece_spots.onnx")])
def test_reading_models_taken_back_from_onnx_read_as_shipped(module, model_file):
    """``--resume`` fine-tunes a shipped reading model: its weights taken back give the shipped outputs."""
    import importlib

    from scanner.onnx_model import DEFAULT_MODELS_DIR

    net = importlib.import_module(module).build_model()
    load_folded_onnx(net, DEFAULT_MODELS_DIR / model_file)
    net.eval()
    shipped = OnnxModel(DEFAULT_MODELS_DIR / model_file, threads=1)
    shape = [4 if not isinstance(d, int) else d for d in shipped.session.get_inputs()[0].shape]
    image = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
    with torch.no_grad():
        ours = net(torch.from_numpy(image))
    ours = ours if isinstance(ours, tuple) else (ours,)
    assert len(ours) == len(shipped.session.get_outputs())
    for mine, theirs in zip(ours, shipped.run(image)):
        assert np.abs(mine.numpy() - theirs).max() < 1e-4
