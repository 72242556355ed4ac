"""The model files a whole scan loads: the tests that scan skip where they are not trained."""

from scanner.onnx_model import DEFAULT_MODELS_DIR

SCAN_MODELS = ("tile_tops.onnx", "sectors.onnx", "pieces.onnx", "piece_kinds.onnx", "piece_kinds_fine.onnx",
               "piece_spots.onnx", "piece_spots_doubted.onnx", "hands.onnx")


def scan_models_trained() -> bool:
    """Whether every model a whole scan loads is in ``models/``."""
    return all((DEFAULT_MODELS_DIR / name).exists() for name in SCAN_MODELS)
