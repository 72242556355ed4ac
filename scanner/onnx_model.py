"""A shipped ONNX model loaded once, with the version string recorded in every scan."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from fjords.errors import FjordsError

DEFAULT_MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
#: Most samples given to a model in one run (see :meth:`OnnxModel.run`).
MAX_BATCH = 64


class ModelMissingError(FjordsError):
    """A model file the scanner needs is not installed."""


class OnnxModel:
    """An ONNX Runtime session on the CPU.

    ``version`` is the file's stem and the first twelve hex digits of its
    SHA-256, so a scan says exactly which weights read it.
    """

    def __init__(self, path: str | Path, threads: int = 2):
        import onnxruntime

        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError:
            raise ModelMissingError(f"model {path} is missing; train it (see models/README.md)") from None
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Several models run one after another: threads left spinning after one run steal the cores from the next.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name
        self.version = f"{path.stem}-{hashlib.sha256(data).hexdigest()[:12]}"

    @property
    def input_side(self) -> int:
        """Side in pixels of the square images the model reads (its input's last dimension)."""
        return int(self.session.get_inputs()[0].shape[-1])

    def run(self, x: np.ndarray) -> list[np.ndarray]:
        """The model's outputs for the batch ``x``, run :data:`MAX_BATCH` samples at a time.

        ONNX Runtime keeps the working memory of the largest batch it has run for the life of the session,
        so one scan of a lattice of many tiles (a wrong look's lattice of 120 half tiles is read too, see
        :func:`scanner.looks.find_lattices`) would raise the memory of every scan after it.
        """
        x = np.ascontiguousarray(x, dtype=np.float32)
        runs = [self.session.run(None, {self.input_name: x[start:start + MAX_BATCH]})
                for start in range(0, max(len(x), 1), MAX_BATCH)]
        return runs[0] if len(runs) == 1 else [np.concatenate(outputs) for outputs in zip(*runs)]
