"""Calibration to one table: the look of its printing and its pieces' paint.

``fjords calibrate PHOTO --board BOARD.json --name NAME`` learns, from one photo
and its correct board, what the generic models cannot know about a player's
own copy: the players' **colours**, player name → RGB of that player's pieces,
measured the way a scan measures them (:func:`scanner.pieces.piece_rgb`), so
pieces of any paint (white, green, orange …) are named after the players. The
palette names pieces only where it names the calibration photo's pieces better
than the piece network does, or the network names none of them right
(``colour_naming``; :func:`scanner.calibrate.colour_naming`).

The terrain look (the colour of sea, mountain and plain in this printing) is
not kept since the fifty-second session: every scan fits its own photo's look
from the sectors it reads sure (:func:`photo_terrain_look`, used by
:func:`scanner.assemble.with_photo_look`), under that photo's light, and the
look of the calibration photo made the copy's other photos read worse more
often than better (docs/calibration.md). Likewise the lens (barrel distortion
``k1`` through the board's tile centres) is measured and reported, not kept:
every scan fits its own photo's lens. Older files' ``terrain`` and ``lens`` are
read and not used.

A calibration is a small JSON file (``fjords-calibration/1``) in the user's
configuration folder (:func:`config_dir`); ``calibration/`` in the repository
holds shipped examples.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import cv2
import numpy as np

from fjords.errors import FjordsError
from fjords.geometry import SECTORS, TERRAINS
from scanner.patches import HEX_MARGIN, HEX_PATCH

FORMAT = "fjords-calibration/1"
PALETTE_NAMING = "palette"
"""A calibration's pieces are named after the nearest player colour it measured."""
NETWORK_NAMING = "network"
"""A calibration's pieces are named by the piece network, as without a calibration."""
SHIPPED_DIR = Path(__file__).resolve().parent.parent / "calibration"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: Ridge added to each terrain's covariance (feature units²), so a few sectors give a usable Gaussian.
COVARIANCE_RIDGE = 4.0
#: A terrain's log-likelihood is kept within this of the best, so one odd sector cannot swamp the network.
LOG_LIKELIHOOD_SPAN = 30.0


class CalibrationError(FjordsError):
    """A calibration that cannot be made, read or saved (exit code 2)."""


# -- where calibrations live ----------------------------------------------------------


def config_dir() -> Path:
    """The user's configuration folder for fjords (``$FJORDS_CONFIG_DIR`` overrides it).

    ``%APPDATA%\\fjords`` on Windows, ``~/Library/Application Support/fjords``
    on macOS, ``$XDG_CONFIG_HOME/fjords`` (default ``~/.config/fjords``) elsewhere.
    """
    if os.environ.get("FJORDS_CONFIG_DIR"):
        return Path(os.environ["FJORDS_CONFIG_DIR"])
    if sys.platform == "win32" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "fjords"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "fjords"
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "fjords"


def calibration_path(name: str) -> Path:
    """Where the calibration ``name`` is saved."""
    if not NAME_PATTERN.match(name):
        raise CalibrationError(f"calibration name {name!r} must be 1–64 letters, digits, '.', '_' or '-'")
    return config_dir() / "calibrations" / f"{name}.json"


def find_calibration(name_or_path: str | Path) -> Path:
    """A calibration file: a path, else a name in the user's folder, else a shipped example."""
    path = Path(name_or_path)
    if path.suffix == ".json" and path.is_file():
        return path
    text = str(name_or_path)
    if NAME_PATTERN.match(text):
        for candidate in (calibration_path(text), SHIPPED_DIR / f"{text}.json"):
            if candidate.is_file():
                return candidate
    raise CalibrationError(f"no calibration {text!r}: make one with fjords calibrate PHOTO --board BOARD.json "
                           f"--name {text} (looked in {config_dir() / 'calibrations'} and {SHIPPED_DIR})")


# -- what a calibration holds ------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """What one table looks like.

    Attributes
    ----------
    name : the calibration's name.
    colours : player name → RGB of that player's pieces (as a scan measures them).
    report : how it was made and what it changed on its own photo (for people; not read back).
    colour_naming : :data:`PALETTE_NAMING` (pieces are named after the nearest player of ``colours``) or
        :data:`NETWORK_NAMING` (the piece network names them, as without a calibration).
    """

    name: str
    colours: Mapping[str, tuple[int, int, int]] = field(default_factory=dict)
    report: Mapping[str, Any] = field(default_factory=dict)
    colour_naming: str = PALETTE_NAMING

    @property
    def palette(self) -> Mapping[str, tuple[int, int, int]] | None:
        """The player colours pieces are named by, or None where the piece network names them."""
        return self.colours if self.colours and self.colour_naming == PALETTE_NAMING else None

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"format": FORMAT, "name": self.name,
                               "colours": {n: list(rgb) for n, rgb in self.colours.items()},
                               "colour_naming": self.colour_naming}
        if self.report:
            doc["report"] = dict(self.report)
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], name: str = "") -> "Calibration":
        """Read a calibration document; the older ``{"colours": {...}}`` form is accepted too."""
        try:
            colours = {str(n).lower(): tuple(int(v) for v in rgb) for n, rgb in dict(doc.get("colours", {})).items()}
            if any(len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb) for rgb in colours.values()):
                raise ValueError("colours must be [r, g, b] in 0..255")
            naming = doc.get("colour_naming", PALETTE_NAMING)  # older files have no choice: the palette
            if naming not in (PALETTE_NAMING, NETWORK_NAMING):
                raise ValueError(f"colour_naming must be {PALETTE_NAMING!r} or {NETWORK_NAMING!r}")
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise CalibrationError(f"calibration {name or doc.get('name', '')} is not valid: {exc}") from None
        if not colours:  # a terrain look or a lens alone (older files kept them) is no longer used
            raise CalibrationError(f"calibration {name} holds nothing: no player colours")
        return cls(str(doc.get("name", name)), colours, dict(doc.get("report", {})), naming)


def load_calibration(calibration: "str | Path | Mapping[str, Any] | Calibration | None") -> Calibration | None:
    """A calibration from its name, a JSON file, a document or a mapping name → RGB."""
    if calibration is None or isinstance(calibration, Calibration):
        return calibration
    if isinstance(calibration, Mapping):
        doc = calibration if "colours" in calibration else {"colours": calibration}
        return Calibration.from_json(doc)
    path = find_calibration(calibration)
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CalibrationError(f"cannot read calibration {calibration}: {exc}") from None
    if not isinstance(doc, dict):
        raise CalibrationError(f"calibration {calibration} is not a JSON object")
    return Calibration.from_json(doc, name=path.stem)


def calibration_text(calibration: Calibration) -> str:
    """The calibration's JSON as a person reads it: indented, each list of numbers on one line."""
    text = json.dumps(calibration.to_json(), indent=2)
    flat = re.sub(r"\[\s+([-0-9.eE,\s]+?)\s+\]",
                  lambda m: "[" + ", ".join(v.strip() for v in m.group(1).split(",")) + "]", text)
    return flat + "\n"


def free_calibration_path(name: str, force: bool = False) -> Path:
    """Where ``name`` is saved; refuses when a calibration of that name exists and ``force`` is not given."""
    path = calibration_path(name)
    if path.exists() and not force:
        raise CalibrationError(f"a calibration named {name} exists ({path}); use --force to replace it")
    return path


def save_calibration(calibration: Calibration, force: bool = False) -> Path:
    """Write ``calibration`` under its name; an existing one is replaced only with ``force``.

    The file is written beside its final place and renamed over it, so an
    interrupted save never leaves half a calibration.
    """
    path = free_calibration_path(calibration.name, force)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as handle:
        handle.write(calibration_text(calibration))
    os.replace(handle.name, path)
    return path


# -- a photo's own terrain look (scanner.assemble.with_photo_look) ---------------------------

@dataclass(frozen=True)
class TerrainLook:
    """A Gaussian per terrain (order :data:`TERRAINS`) over :func:`sector_features`, and its weight."""

    means: np.ndarray        # (3, F)
    covariances: np.ndarray  # (3, F, F)
    weight: float

    def mahalanobis(self, features: np.ndarray) -> np.ndarray:
        """``(..., 3)`` squared Mahalanobis distance of features ``(..., F)`` from each terrain."""
        out = np.empty(features.shape[:-1] + (len(TERRAINS),))
        for t in range(len(TERRAINS)):
            d = features - self.means[t]
            out[..., t] = np.einsum("...i,ij,...j->...", d, np.linalg.inv(self.covariances[t]), d)
        return out

    def log_likelihood(self, features: np.ndarray) -> np.ndarray:
        """``(..., 3)`` log-density of each terrain for features ``(..., F)``, clipped to a span below the best."""
        logdet = np.array([np.linalg.slogdet(c)[1] for c in self.covariances])
        out = -0.5 * (self.mahalanobis(features) + logdet)
        return np.maximum(out, out.max(axis=-1, keepdims=True) - LOG_LIKELIHOOD_SPAN)

    def adjust(self, probs: np.ndarray, features: np.ndarray) -> np.ndarray:
        """The network's terrain probabilities ``(..., 3)`` combined with this look."""
        if self.weight == 0.0:
            return probs
        logits = np.log(np.maximum(probs, 1e-9)) + self.weight * self.log_likelihood(features)
        logits -= logits.max(axis=-1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=-1, keepdims=True)


FEATURE_NAMES = ("L - photo median", "a - photo median", "b - photo median", "sd L", "sd a", "sd b")


@lru_cache(maxsize=4)
def sector_masks(size: int = HEX_PATCH, margin: float = HEX_MARGIN) -> np.ndarray:
    """``(12, size, size)`` booleans: the inner part of each sector's triangle in a hex patch.

    Sector ``i`` spans ``30·i − 30`` to ``30·i`` degrees counter-clockwise
    (image y pointing down); its middle stays clear of the centre, the rim and
    the sector's borders, where neighbours and the lattice fit's error blur it.
    """
    c = size / 2.0
    radius = c / margin
    ys, xs = np.mgrid[0:size, 0:size] + 0.5
    x, y = xs - c, c - ys
    r = np.hypot(x, y) / (radius * math.cos(math.radians(15)))
    angle = np.degrees(np.arctan2(y, x)) % 360.0
    masks = np.zeros((SECTORS, size, size), bool)
    for i in range(SECTORS):
        offset = (angle - (30.0 * i - 30.0)) % 360.0
        masks[i] = (r > 0.2) & (r < 0.85) & (offset > 4.0) & (offset < 26.0)
    return masks


def sector_features(patches: np.ndarray) -> np.ndarray:
    """Colour statistics of each sector, ``(n, 12, 6)``, from the ``(n, s, s, 3)`` BGR patches of ONE photo.

    The CIELAB mean of a sector's inner pixels is taken relative to the median
    over every sector of the photo, so that another lamp, exposure or white
    balance (which move every colour of the photo together) moves the features
    little; the CIELAB spread of the pixels follows.
    """
    n, size = len(patches), patches.shape[1]
    out = np.zeros((n, SECTORS, len(FEATURE_NAMES)))
    if not n:
        return out
    # One colour conversion for every patch (stacked as one tall image) and the per-sector sums as one
    # product with the masks: a scan computes these for every tile of every photo.
    tall = patches.reshape(n * size, size, 3).astype(np.float32) / 255.0
    lab = cv2.cvtColor(tall, cv2.COLOR_BGR2LAB).reshape(n, size * size, 3).astype(np.float64)
    weights = sector_masks(size).reshape(SECTORS, -1).astype(np.float64)
    weights /= weights.sum(axis=1, keepdims=True)
    means = np.swapaxes(np.swapaxes(lab, 1, 2) @ weights.T, 1, 2)
    squares = np.swapaxes(np.swapaxes(lab * lab, 1, 2) @ weights.T, 1, 2)
    out[..., :3] = means - np.median(means.reshape(-1, 3), axis=0)
    out[..., 3:] = np.sqrt(np.maximum(squares - means * means, 0.0))
    return out


def _gaussians(sums: np.ndarray, outer: np.ndarray, counts: np.ndarray,
               pooled: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Means and ridged covariances per terrain from sufficient statistics; a terrain with under
    three samples borrows the pooled covariance (and the pooled mean when it has none)."""
    means = np.empty_like(sums)
    covariances = np.empty_like(outer)
    ridge = COVARIANCE_RIDGE * np.eye(sums.shape[1])
    for t in range(len(sums)):
        if counts[t] >= 3:
            means[t] = sums[t] / counts[t]
            covariances[t] = outer[t] / counts[t] - np.outer(means[t], means[t]) + ridge
        else:
            means[t] = sums[t] / counts[t] if counts[t] else pooled[0]
            covariances[t] = pooled[1] + ridge
    return means, covariances


def _terrain_statistics(features: np.ndarray, labels: np.ndarray, usable: np.ndarray) -> tuple:
    """Per terrain the sums ``(3, F)``, outer products ``(3, F, F)`` and counts ``(3,)`` of the ``usable``
    sectors' features, and the pooled mean and covariance of all of them."""
    onehot = np.eye(len(TERRAINS))[labels] * usable[..., None]
    sums = np.einsum("nst,nsf->tf", onehot, features)
    outer = np.einsum("nst,nsf,nsg->tfg", onehot, features, features)
    x = features[usable]
    pooled = (x.mean(axis=0), np.cov(x.T) if len(x) > 1 else np.eye(features.shape[-1]))
    return sums, outer, onehot.sum(axis=(0, 1)), pooled


def photo_terrain_look(features: np.ndarray, labels: np.ndarray, sure: np.ndarray,
                       weight: float) -> TerrainLook | None:
    """The terrain look of one photo fitted on its own sure sectors, or None with fewer than two.

    A calibration by the photo itself: where the network reads part of a board sure, the colour of
    each terrain in this printing under this light is measured there and lends its weight to the
    sectors read less sure, or read as another terrain that looks otherwise here.

    Parameters
    ----------
    features : (n, 12, F) from :func:`sector_features`.
    labels : (n, 12) the terrain read (indices into :data:`TERRAINS`).
    sure : (n, 12) bool — the sectors whose reading is taken as their terrain.
    weight : the weight of the look's log-likelihood (:meth:`TerrainLook.adjust`).
    """
    if np.count_nonzero(sure) < 2:
        return None
    means, covariances = _gaussians(*_terrain_statistics(features, labels, sure))
    return TerrainLook(means, covariances, weight)
