"""Stage 3b: where hands and arms hide the board.

A small network (``models/hands.onnx``, trained on renders by :mod:`scanner.train_hands`) reads the photo shrunk
to :data:`HAND_SIDE` pixels on its long side and gives, at half that resolution, the chance that each pixel shows
an arm or a hand. The share of each sector a hand covers (:func:`sector_hand_shares`) travels with the tile's
evidence, and the sectors mostly under a hand are named in the tile's ``under_hand`` field, in the advice and on
the overlay (:func:`scanner.assemble.hand_extra`): the sector model learnt "no tile top" from tiles hidden whole,
and reads a hand over part of a tile as mountain or plain. Their letters are read as without the hand model;
writing them ``?`` instead failed its rules (models/README.md, fifty-fifth session).
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from fjords.geometry import SECTORS
from scanner.locate import work_size
from scanner.onnx_model import DEFAULT_MODELS_DIR, OnnxModel
from scanner.patches import sector_triangles

HAND_SIDE = 384
OUTPUT_STRIDE = 2
DEFAULT_MODEL = DEFAULT_MODELS_DIR / "hands.onnx"
MODEL_FILE = DEFAULT_MODEL.name


def hand_input_size(width: int, height: int) -> tuple[int, int]:
    """The network's input size for a photo: long side :data:`HAND_SIDE`, both sides multiples of 8."""
    return work_size(width, height, HAND_SIDE)


class HandModel:
    """The hand network, loaded once."""

    def __init__(self, path: str | Path = DEFAULT_MODEL, threads: int = 2):
        self.model = OnnxModel(path, threads)
        self.version = self.model.version

    def read(self, image_bgr: np.ndarray) -> np.ndarray:
        """The chance that each pixel of the network's output grid shows a hand, shape (h, w), for a BGR photo
        of any size (shrunk here to the network's input)."""
        size = hand_input_size(image_bgr.shape[1], image_bgr.shape[0])
        small = image_bgr if (image_bgr.shape[1], image_bgr.shape[0]) == size else cv2.resize(
            image_bgr, size, interpolation=cv2.INTER_AREA)
        x = small.astype(np.float32).transpose(2, 0, 1)[None]
        return self.model.run(x)[0][0, 0]


def _barycentric_grid(steps: int = 5) -> np.ndarray:
    """Weights (n, 3) of points spread over a triangle's inside (none on its rim)."""
    points = [(a, b, steps - a - b) for a in range(steps + 1) for b in range(steps + 1 - a)]
    weights = np.array(points, np.float64) + 1.0 / 3.0
    return weights / weights.sum(axis=1, keepdims=True)


SECTOR_WEIGHTS = _barycentric_grid()


def sector_hand_shares(hand_map: np.ndarray, image_size: tuple[int, int], corners: list[np.ndarray]) -> np.ndarray:
    """The mean hand chance over each sector of each tile, shape (n, 12).

    Parameters
    ----------
    hand_map : (h, w) output of :meth:`HandModel.read` for the photo.
    image_size : the photo's (width, height) in the pixels ``corners`` are given in.
    corners : each tile's six corners in photo pixels.
    """
    if not corners:
        return np.zeros((0, SECTORS))
    scale = np.array([hand_map.shape[1] / image_size[0], hand_map.shape[0] / image_size[1]])
    triangles = sector_triangles(np.array(corners))  # (n, 12, 3, 2)
    points = np.einsum("pk,nskd->nspd", SECTOR_WEIGHTS, triangles)  # (n, 12, p, 2) photo px
    # Pixel centres: photo x maps to (x + 0.5)·scale − 0.5 on the map.
    grid = ((points + 0.5) * scale - 0.5).astype(np.float32)
    rows = grid.shape[0] * grid.shape[1]
    sampled = cv2.remap(hand_map.astype(np.float32), np.ascontiguousarray(grid[..., 0].reshape(rows, -1)),
                        np.ascontiguousarray(grid[..., 1].reshape(rows, -1)), cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_CONSTANT, borderValue=0.0)
    return sampled.reshape(points.shape[:3]).mean(axis=2)
