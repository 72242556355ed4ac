"""A table's terrain head: the sector network's last layer adapted to one copy from one photo.

The sector network reads sea, mountain and plain from features its last hidden
layer computes (:meth:`scanner.sectors.SectorClassifier.read_patches`); a
printing it never saw may put its terrains where the network's last layer
does not expect them. As chesscog adapts its classifiers to a new chess set
from a photo or two, ``fjords calibrate`` corrects the last layer on the
calibration photo's sectors: terrain logits ``z + W·f + b``, with ``(W, b)``
fitted by multinomial logistic regression on the photo's clear sectors and
``W`` held towards zero by a ridge, so with few sectors the correction stays
small. The ridge is chosen by leave-one-tile-out log-loss among a few values,
and a correction is kept only when it beats the network alone clearly on the
left-out tiles (as the terrain look's weight, :mod:`scanner.calibration`);
else the table has no head and reads as without calibration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from fjords.geometry import TERRAINS

#: Ridges tried on the correction's weights (chosen on training-style copies, docs/calibration.md): weaker
#: ones fitted the calibration photo and read a copy's next photos worse.
HEAD_RIDGES = (10.0, 100.0, 1000.0)


@dataclass(frozen=True)
class TerrainHead:
    """A correction ``W·f + b`` of the three terrain logits, for the sector model ``model``."""

    weights: np.ndarray  # (3, F + 1): per terrain, F feature weights and a bias
    ridge: float
    model: str

    def adjust(self, terrain_logits: np.ndarray, features: np.ndarray) -> np.ndarray:
        """Corrected terrain logits ``(..., 3)`` from the network's ``(..., 3)`` and its features ``(..., F)``."""
        return terrain_logits + _with_bias(features) @ self.weights.T

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "ridge": self.ridge,
                "weights": {t: np.round(self.weights[i], 5).tolist() for i, t in enumerate(TERRAINS)}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> "TerrainHead":
        weights = np.array([doc["weights"][t] for t in TERRAINS], dtype=np.float64)
        if weights.ndim != 2 or weights.shape[1] < 2 or not np.all(np.isfinite(weights)):
            raise ValueError("terrain head has the wrong shape")
        return cls(weights, float(doc["ridge"]), str(doc["model"]))


def _with_bias(features: np.ndarray) -> np.ndarray:
    return np.concatenate([features, np.ones(features.shape[:-1] + (1,))], axis=-1)


def fit_correction(logits: np.ndarray, features: np.ndarray, labels: np.ndarray, ridge: float) -> np.ndarray:
    """The ``(3, F + 1)`` correction minimising cross-entropy plus ``ridge·|W|²`` (bias not held).

    Parameters
    ----------
    logits : (m, 3) the network's terrain logits.
    features : (m, F) its last hidden layer.
    labels : (m,) terrain indices.
    """
    x = _with_bias(np.asarray(features, np.float64))
    m, width = x.shape
    rows = np.arange(m)
    held = np.ones((len(TERRAINS), width))
    held[:, -1] = 0.0

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.reshape(len(TERRAINS), width)
        z = logits + x @ w.T
        norm = logsumexp(z, axis=1)
        p = np.exp(z - norm[:, None])
        p[rows, labels] -= 1.0
        gradient = p.T @ x + 2.0 * ridge * held * w
        return float((norm - z[rows, labels]).sum() + ridge * (held * w ** 2).sum()), gradient.ravel()

    result = minimize(loss, np.zeros(len(TERRAINS) * width), jac=True, method="L-BFGS-B")
    return result.x.reshape(len(TERRAINS), width)


def clearly_better(base: np.ndarray, other: np.ndarray) -> bool:
    """Whether per-tile losses ``other`` beat ``base`` by more than two standard errors (tiles paired)."""
    gain = base - other
    if len(gain) < 2:
        return False
    return bool(gain.mean() > 2.0 * gain.std(ddof=1) / np.sqrt(len(gain)))


def fit_terrain_head(logits: np.ndarray, features: np.ndarray, labels: np.ndarray, usable: np.ndarray,
                     model: str) -> tuple[TerrainHead | None, np.ndarray]:
    """The head of one calibration photo, or None when no ridge clearly beats the network alone.

    Parameters
    ----------
    logits : (n, 12, 3) the network's terrain logits of the photo's n tiles.
    features : (n, 12, F) its last hidden layer.
    labels : (n, 12) terrain indices from the correct board.
    usable : (n, 12) bool — sectors seen whole, not under a piece.
    model : the sector model's version.

    Returns
    -------
    The head, and every sector's terrain logits as the chosen head reads a tile left out of its fit
    (the network's own without a head), for fitting what comes after it on honest numbers.
    """
    left_out = {ridge: np.array(logits, np.float64) for ridge in HEAD_RIDGES}
    tiles = np.flatnonzero(usable.any(axis=1))
    for ridge in HEAD_RIDGES:
        for k in tiles:
            rest = usable.copy()
            rest[k] = False
            correction = fit_correction(logits[rest], features[rest], labels[rest], ridge)
            left_out[ridge][k] = logits[k] + _with_bias(features[k]) @ correction.T
    base = _tile_losses(np.asarray(logits, np.float64), labels, usable)[tiles]
    losses = {ridge: _tile_losses(left_out[ridge], labels, usable)[tiles] for ridge in HEAD_RIDGES}
    taken = [ridge for ridge in HEAD_RIDGES if clearly_better(base, losses[ridge])]
    if not taken:
        return None, np.asarray(logits, np.float64)
    best = min(taken, key=lambda ridge: float(losses[ridge].mean()))
    head = TerrainHead(fit_correction(logits[usable], features[usable], labels[usable], best), best, model)
    return head, left_out[best]


def _tile_losses(logits: np.ndarray, labels: np.ndarray, usable: np.ndarray) -> np.ndarray:
    """Mean log-loss of each tile's usable sectors (0 for a tile with none)."""
    log_probs = logits - logsumexp(logits, axis=-1, keepdims=True)
    right = np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    return -(right * usable).sum(axis=1) / np.maximum(usable.sum(axis=1), 1)

