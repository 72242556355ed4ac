"""Stage 6: the piece standing on each tile — none, house, settler or rune stone — and its colour.

Two small networks read each tile. The presence model (``pieces.onnx``) reads
the tile's piece crop (:func:`scanner.patches.piece_crops`: image axes,
reaching further up than down, because a standing piece rises towards the top
of the photo and may lean over the tile behind it) and answers whether a piece
stands there, and where its base and its top are. The base, carried back
through the tile's homography, names the sector it stands on. The kind model
(``piece_kinds.onnx``) then reads a close-up centred between base and top
(:func:`scanner.patches.close_ups`) and answers the kind and the player colour
among the eleven named colours; a close-up generalises far better than the
whole tile crop.

With a calibration (player name → RGB of that table's pieces) colours are
named instead by the nearest calibrated colour in CIELAB, measured from the
piece's own pixels between its base and its top.

``python -m scanner.pieces train|evaluate --help`` trains and measures the
model (see :mod:`scanner.train_pieces`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from scanner.onnx_model import OnnxModel
from scanner.patches import (PIECE_CROP, Pyramid, apply_homography, close_ups, piece_crops, piece_window_matrix,
                             sector_at, tile_radius)
from scanner.sectors import softmax, to_tensor

PIECE_KINDS = ("none", "house", "settler", "runestone")
COLOUR_NAMES = ("red", "yellow", "blue", "black", "white", "green", "grey", "beige", "brown", "orange", "purple")
MODEL_FILE = "pieces.onnx"
KINDS_MODEL_FILE = "piece_kinds.onnx"


@dataclass(frozen=True)
class PieceReading:
    """What the piece model saw on one tile.

    ``kind_probs`` follow :data:`PIECE_KINDS`, ``colour_probs`` follow the
    names in ``colour_names``; points are image pixels; ``rgb`` is the median
    colour of the piece's pixels.
    """

    kind_probs: np.ndarray
    colour_probs: np.ndarray
    colour_names: tuple[str, ...]
    base_px: tuple[float, float]
    top_px: tuple[float, float]
    sector: int
    rgb: tuple[int, int, int]

    @property
    def kind(self) -> str:
        return PIECE_KINDS[int(np.argmax(self.kind_probs))]

    @property
    def colour(self) -> str:
        return self.colour_names[int(np.argmax(self.colour_probs))]


def rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB colours in 0..255, shape (..., 3)."""
    from skimage.color import rgb2lab

    rgb = np.asarray(rgb, dtype=np.float64).reshape(-1, 1, 3) / 255.0
    return rgb2lab(rgb).reshape(-1, 3)


def calibrated_colour_probs(rgb: tuple[int, int, int], palette: Mapping[str, tuple[int, int, int]],
                            spread: float = 12.0) -> tuple[np.ndarray, tuple[str, ...]]:
    """Soft nearest-colour naming in CIELAB: probabilities ∝ exp(−ΔE² / 2·spread²)."""
    names = tuple(palette)
    labs = rgb_to_lab(np.array([palette[n] for n in names]))
    distance2 = ((labs - rgb_to_lab(np.array(rgb))) ** 2).sum(axis=1)
    return softmax(-distance2 / (2 * spread ** 2)), names


def piece_rgb(image: np.ndarray, base: np.ndarray, top: np.ndarray, radius: float) -> tuple[int, int, int]:
    """Median RGB of the pixels around the middle of the base-to-top line of a piece."""
    h, w = image.shape[:2]
    ts = np.linspace(0.3, 0.8, 6)
    pts = base[None] + ts[:, None] * (top - base)[None]
    r = max(1, int(round(radius)))
    offsets = np.stack(np.meshgrid(np.arange(-r, r + 1), np.arange(-r, r + 1)), -1).reshape(-1, 2)
    xy = np.round(pts[:, None, :] + offsets[None]).reshape(-1, 2).astype(int)
    xy = xy[(xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)]
    if len(xy) == 0:
        return (0, 0, 0)
    b, g, r_ = np.median(image[xy[:, 1], xy[:, 0]], axis=0)
    return (int(r_), int(g), int(b))


class PieceClassifier:
    """Reads the piece (or its absence) on tiles given by their image corners.

    Parameters
    ----------
    models_dir : path to the folder holding ``pieces.onnx`` and ``piece_kinds.onnx``.
    palette : optional calibration, player name → RGB of that player's pieces.
    """

    def __init__(self, models_dir: str | Path, palette: Mapping[str, tuple[int, int, int]] | None = None):
        self.model = OnnxModel(Path(models_dir) / MODEL_FILE)
        self.kinds = OnnxModel(Path(models_dir) / KINDS_MODEL_FILE)
        self.palette = dict(palette) if palette else None

    @property
    def version(self) -> str:
        return f"{self.model.version}+{self.kinds.version}"

    @property
    def versions(self) -> dict[str, str]:
        """Each piece model's version (what a piece confidence calibration is fitted for)."""
        return {"pieces": self.model.version, "piece_kinds": self.kinds.version}

    def predict(self, pyramid: Pyramid, corners: list[np.ndarray]) -> list[PieceReading]:
        if not corners:
            return []
        presence_logits, _, points = self.model.run(to_tensor(piece_crops(pyramid, corners)))
        p_none = softmax(presence_logits)[:, :1]
        ends = np.array([apply_homography(np.linalg.inv(piece_window_matrix(c)), p.reshape(2, 2) * PIECE_CROP)
                         for c, p in zip(corners, points)])  # (n, 2 [base, top], 2) image px
        radii = np.array([tile_radius(c) for c in corners])
        kind_logits, colour_logits = self.kinds.run(to_tensor(close_ups(pyramid, ends.mean(axis=1), radii)))
        kind_probs = np.hstack([p_none, (1.0 - p_none) * softmax(kind_logits)])
        colour_probs = softmax(colour_logits)
        image = pyramid.levels[0]
        readings = []
        for n, c in enumerate(corners):
            base, top = ends[n]
            rgb = piece_rgb(image, base, top, radii[n] * 0.06)
            probs, names = colour_probs[n], COLOUR_NAMES
            if self.palette:
                probs, names = calibrated_colour_probs(rgb, self.palette)
            readings.append(PieceReading(kind_probs[n], probs, names, (float(base[0]), float(base[1])),
                                         (float(top[0]), float(top[1])), sector_at(c, base), rgb))
        return readings


if __name__ == "__main__":
    from scanner.train_pieces import main

    raise SystemExit(main())
