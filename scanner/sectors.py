"""Stage 5: the terrain (S, M, P) of the twelve sectors of every tile.

The classifier reads one sector at a time from a small window of the tile's hex
patch. Every sector is first brought to the place of sector 0 — sector ``2d``
by turning the patch ``60·d`` degrees clockwise, sector ``2d + 1`` by the same
turn and a mirror image — so one small network serves all twelve, sees only the
sector's own neighbourhood (it cannot learn which terrain strings a tile
catalogue happens to hold), and every training patch counts twelve times.
Besides S, M and P it knows a fourth answer, "no tile top here" (a hand, the
table, clutter), trained on empty lattice positions and hidden tiles; such
sectors are written ``?``.

A second network (:data:`SECOND_MODEL_FILE`, where the models folder has one)
reads every tile too, and a photo's tiles take its answers where they agree
better across the tiles' shared edges (:func:`chosen_network`): a network fine-
tuned on a print the first never saw reads that print far better and the usual
prints a little worse, and which of the two fits a photo's print shows in how
well each one's readings of two facing sectors agree. The first network also
reads the photo's tiles white-balanced toward the colours it was mostly taught
(:func:`balance_gains`), one more reading a photo may take the same way: under a
lamp that turns a pale print's plains grey, that reading agrees far better.

``python -m scanner.sectors train|evaluate --help`` trains and measures the
model (see :mod:`scanner.train_sectors`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import cv2
import numpy as np

from fjords.geometry import SECTORS, TERRAINS, Hex, edge_of_sector, facing_sector
from scanner.onnx_model import OnnxModel
from scanner.patches import HEX_MARGIN, HEX_PATCH, Pyramid, apply_homography, hex_homographies, hex_patches

SECTOR_WINDOW = 24
"""Side of the window a sector is classified from, in pixels."""

MODEL_FILE = "sectors.onnx"
SECOND_MODEL_FILE = "sectors_second.onnx"

SECOND_NETWORK_MARGIN = 0.025
"""How much better (mean log chance per facing pair, :func:`edge_agreement`) another reading than the first network's
(the second network's, or the first's of the balanced photo) must agree across the tiles' edges for a photo to take
it (chosen on 640 renders with the farmland specialist shipped, models/README.md, fifty-eighth session: a smaller
margin let usual prints go to the second network, which reads them a little worse)."""

BALANCE_TARGET = np.array([0.8275, 1.1058, 1.0489])
"""Median :func:`tile_chroma` (each channel's mean over the mean of the three, in the patches' B, G, R order) of the
tile tops in 200 usual training renders under the lights the renderer draws (training seeds 99,200-99,399, the
command in models/README.md, sixty-fifth session): what a tile top looks like to the first network on average."""

BALANCE_STRENGTH = 0.5
"""How far :func:`balance_gains` moves a photo's tiles toward :data:`BALANCE_TARGET`, as a power of the full gains
(1: all the way). Chosen on 195 seen renders at their true corners: all the way, taken per photo by
:func:`chosen_network`, mended more photos than half way but spoiled five where half way spoiled one
(models/README.md, sixty-fifth session)."""

#: The middle of a hex patch whose mean colour :func:`balance_gains` measures (a share of the patch's side): the tile's
#: print, not its rim, the gap or the table beyond it.
BALANCE_DISC = 0.35

SURE_VISIBLE = 0.9
"""Least share of a sector that must show a tile top for it to count in :func:`edge_agreement`."""

SectorReading = tuple[np.ndarray, np.ndarray]
"""``(probs, readable)``: (n, 12, 3) terrain probabilities and (n, 12) chances of showing a tile top."""


def _window_origin(size: int = HEX_PATCH, margin: float = HEX_MARGIN) -> tuple[float, float]:
    """Top-left corner (in the hex patch) of the window around sector 0.

    Sector 0 is the triangle between the centre and the rim from −30° to 0°: it
    lies right of and below the centre (image y points down). The window spans
    from just left of the centre to just outside the rim.
    """
    c = size / 2.0
    radius = c / margin
    span = 1.12 * radius  # window side in patch pixels
    x0 = c - 0.05 * radius
    y0 = c + 0.25 * radius - span / 2.0
    return x0, y0


def window_matrices(size: int = HEX_PATCH, margin: float = HEX_MARGIN,
                    window: int = SECTOR_WINDOW) -> np.ndarray:
    """The twelve 2×3 affine maps from a hex patch to the window of sector ``i``, shape (12, 2, 3).

    The map for sector ``i`` turns the patch so that sector ``i`` lands on
    sector 0 (mirroring odd sectors across the x axis first), then crops and
    scales the window.
    """
    c = size / 2.0
    radius = c / margin
    x0, y0 = _window_origin(size, margin)
    scale = window / (1.12 * radius)
    crop = np.array([[scale, 0, -x0 * scale], [0, scale, -y0 * scale], [0, 0, 1.0]])
    to_centre = np.array([[1, 0, -c], [0, 1, -c], [0, 0, 1.0]])
    from_centre = np.array([[1, 0, c], [0, 1, c], [0, 0, 1.0]])
    mirror = np.diag([1.0, -1.0, 1.0])  # angle θ → −θ: sector 1 onto sector 0
    out = np.zeros((SECTORS, 2, 3))
    for i in range(SECTORS):
        d, odd = divmod(i, 2)
        # Turning the picture clockwise by 60·d degrees (in image coordinates with y down,
        # a counter-clockwise angle θ is the point (cos θ, −sin θ)).
        t = math.radians(60.0 * d)
        turn = np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1.0]])
        m = crop @ from_centre @ (mirror if odd else np.eye(3)) @ turn @ to_centre
        out[i] = m[:2]
    return out


def _window_sources(matrices: np.ndarray, window: int = SECTOR_WINDOW) -> np.ndarray:
    """Hex patch point (x, y) each pixel of each window samples, float64 (len(matrices)·window, window, 2): the
    windows stacked one under the other."""
    ys, xs = np.mgrid[0:window, 0:window].astype(np.float64)
    sources = []
    for matrix in matrices:
        inverse = cv2.invertAffineTransform(matrix)
        sources.append(np.stack([inverse[0, 0] * xs + inverse[0, 1] * ys + inverse[0, 2],
                                 inverse[1, 0] * xs + inverse[1, 1] * ys + inverse[1, 2]], axis=-1))
    return np.concatenate(sources)


_WINDOW_SOURCES = _window_sources(window_matrices())
#: Rows and columns of reflected border around each hex patch that every window's bilinear samples stay within.
_WINDOW_PAD = int(math.ceil(max(-_WINDOW_SOURCES.min(), _WINDOW_SOURCES.max() - (HEX_PATCH - 1)))) + 1
#: Side of a hex patch framed by that border.
_FRAMED_SIDE = HEX_PATCH + 2 * _WINDOW_PAD
#: Most patches cut in one cv2.remap: its map's side, and the source rows it addresses, stay under SHRT_MAX.
_PATCHES_PER_REMAP = (2 ** 15 - 1) // (SECTORS * SECTOR_WINDOW)


def _stacked_window_map(count: int) -> np.ndarray:
    """cv2.remap's map (float32 (12·w·count, w, 2)) that cuts the windows of ``count`` framed patches stacked one
    under the other: patch k's windows are rows ``12·w·k`` on, and sample its frame's rows ``_FRAMED_SIDE·k`` on.
    (A float map: its windows differ from cv2.warpAffine's in a few pixels in a thousand by one grey level, a
    fixed-point one in seven in a hundred.)"""
    shift = (_WINDOW_PAD + np.stack([np.zeros(count), _FRAMED_SIDE * np.arange(count)], axis=-1)).astype(np.float32)
    # On a grid of 1/1024 px, exact in float32 at every patch's place in the stack: a patch's windows do not
    # depend on how many patches come before it (and the sums are made in float32 exactly, at a third of the
    # start-up time of float64 ones).
    sources = (np.round(_WINDOW_SOURCES * 1024.0) / 1024.0).astype(np.float32)
    return (sources[None] + shift[:, None, None, :]).reshape(-1, SECTOR_WINDOW, 2)


#: The map of a full remap's patches; a smaller batch takes its first rows (patch k's part does not depend on how
#: many follow). Made once: making it took longer than the remap.
_WINDOW_MAP = _stacked_window_map(_PATCHES_PER_REMAP)


def sector_windows(patches: np.ndarray) -> np.ndarray:
    """The twelve sector windows of each hex patch, shape (n, 12, w, w, 3) uint8.

    The patches, each framed by its own reflection (the border the windows reach past the hexagon), are stacked one
    under the other and all their windows cut in one cv2.remap, a twelfth of the calls of one cv2.warpAffine per
    window, which took 28 ms of a photo's scan (models/README.md, seventy-fourth session).
    """
    n = len(patches)
    rows = SECTORS * SECTOR_WINDOW
    out = np.zeros((n, SECTORS, SECTOR_WINDOW, SECTOR_WINDOW, 3), np.uint8)
    for start in range(0, n, _PATCHES_PER_REMAP):
        chunk = patches[start:start + _PATCHES_PER_REMAP]
        framed = np.pad(chunk, ((0, 0), (_WINDOW_PAD, _WINDOW_PAD), (_WINDOW_PAD, _WINDOW_PAD), (0, 0)),
                        mode="symmetric")  # cv2.BORDER_REFLECT: the patch's edge pixel repeated, then inwards
        cut = cv2.remap(framed.reshape(-1, _FRAMED_SIDE, 3), _WINDOW_MAP[:rows * len(chunk)], None, cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REFLECT)
        out[start:start + len(chunk)] = cut.reshape(len(chunk), SECTORS, SECTOR_WINDOW, SECTOR_WINDOW, 3)
    return out


def to_tensor(images: np.ndarray) -> np.ndarray:
    """uint8 BGR images (..., h, w, 3) → float32 (N, 3, h, w) in [-1, 1], the models' input."""
    x = images.reshape((-1,) + images.shape[-3:]).astype(np.float32)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2) / 127.5 - 1.0)


def _visibility_samples() -> np.ndarray:
    """Sample points of each sector in the hex patch, sector-major (12·9, 2): radii 0.45..0.95 of the inscribed
    circle and angles across the sector."""
    c = HEX_PATCH / 2.0
    radius = c / HEX_MARGIN
    radii = np.array([0.45, 0.7, 0.95]) * radius * math.cos(math.radians(15))
    samples = []
    for i in range(SECTORS):
        angles = np.radians(30.0 * i - 30.0 + np.array([6.0, 15.0, 24.0]))
        rr, aa = np.meshgrid(radii, angles)
        samples.append(np.stack([c + rr * np.cos(aa), c - rr * np.sin(aa)], -1).reshape(-1, 2))
    return np.concatenate(samples)


_VISIBILITY_SAMPLES = _visibility_samples()


def sector_visibility(corners: list[np.ndarray], image_shape: tuple[int, ...],
                      matrices: list[np.ndarray] | None = None) -> np.ndarray:
    """Share of each sector lying inside the photo, shape (n, 12), from a few sample points; ``matrices`` are the
    tiles' :func:`scanner.patches.hex_homographies` where the caller has them."""
    h, w = image_shape[:2]
    out = np.zeros((len(corners), SECTORS))
    matrices = hex_homographies(corners) if matrices is None else matrices
    for k, matrix in enumerate(matrices):
        pts = apply_homography(np.linalg.inv(matrix), _VISIBILITY_SAMPLES)
        inside = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
        out[k] = inside.reshape(SECTORS, -1).mean(axis=1)
    return out


def tile_chroma(patches: np.ndarray) -> np.ndarray:
    """Chroma of the middles of hex patches (:data:`BALANCE_DISC`): each channel's mean over the mean of the three.

    Parameters
    ----------
    patches : (n, side, side, 3) uint8 hex patches.

    Returns
    -------
    (n, 3) float64 array, channels in the patches' order.
    """
    side = patches.shape[1]
    yy, xx = np.mgrid[:side, :side] - (side - 1) / 2
    middle = xx ** 2 + yy ** 2 <= (BALANCE_DISC * side) ** 2
    means = patches[:, middle].astype(np.float64).mean(axis=1)
    return means / np.maximum(means.mean(axis=1, keepdims=True), 1e-6)


def balance_gains(patches: np.ndarray, target: np.ndarray = BALANCE_TARGET,
                  strength: float = BALANCE_STRENGTH) -> np.ndarray:
    """Per-channel gains that move the median :func:`tile_chroma` of a photo's tile patches toward ``target``.

    Parameters
    ----------
    patches : (n, HEX_PATCH, HEX_PATCH, 3) uint8 hex patches of the photo's tiles in view.
    target : chroma (each channel over the mean of the three) the gains aim at.
    strength : power of the full gains (0: none, 1: all the way).

    Returns
    -------
    (3,) gains of mean 1 (the light's colour moved, not its brightness); ones without patches.
    """
    if len(patches) == 0:
        return np.ones(3)
    gains = (target / np.maximum(np.median(tile_chroma(patches), axis=0), 1e-6)) ** strength
    return gains / gains.mean()


def balanced(patches: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """The patches with each channel multiplied by its gain (uint8, clipped)."""
    return np.clip(patches.astype(np.float32) * np.asarray(gains, np.float32), 0, 255).astype(np.uint8)


class SectorClassifier:
    """Probabilities of S, M, P for every sector of tiles, from the ONNX models.

    Parameters
    ----------
    models_dir : path to the folder holding ``sectors.onnx`` and, optionally, ``sectors_second.onnx``.
    """

    labels = TERRAINS

    def __init__(self, models_dir: str | Path):
        first, second = Path(models_dir) / MODEL_FILE, Path(models_dir) / SECOND_MODEL_FILE
        self.networks = (OnnxModel(first),) + ((OnnxModel(second),) if second.exists() else ())

    @property
    def version(self) -> str:
        return "+".join(network.version for network in self.networks)

    @property
    def readings(self) -> tuple[str, ...]:
        """The names of the readings :meth:`predict_each` returns, in its order: each network's version, then the
        first network's reading of the balanced patches (its version and ``@balanced``)."""
        return tuple(network.version for network in self.networks) + (f"{self.networks[0].version}@balanced",)

    def predict_patches(self, patches: np.ndarray) -> SectorReading:
        """Terrain probabilities of hex patches' sectors and how readable each sector is.

        Returns ``(probs, readable)``: ``probs`` (n, 12, 3) over :data:`TERRAINS`
        given that the sector shows a tile top; ``readable`` (n, 12) the
        probability that it does (not a hand, the table or clutter).
        """
        return self._read(patches, self.networks[:1])[0]

    def predict_each(self, patches: np.ndarray, *, gains: np.ndarray) -> tuple[SectorReading, ...]:
        """:meth:`predict_patches` by each network, the first network's first, and last the first network's reading
        of the patches balanced by ``gains`` (:func:`balance_gains` of the photo's tiles in view, which a video frame
        that reads only some tiles again must still measure on all of them): the readings :attr:`readings` names."""
        return self._read(patches, self.networks) + self._read(balanced(patches, gains), self.networks[:1])

    @staticmethod
    def _read(patches: np.ndarray, networks: tuple[OnnxModel, ...]) -> tuple[SectorReading, ...]:
        """Each of ``networks``' reading of the patches' sectors (the windows cut once for all of them)."""
        if len(patches) == 0:
            empty = np.zeros((0, SECTORS, 3), np.float32), np.zeros((0, SECTORS), np.float32)
            return (empty,) * len(networks)
        windows = to_tensor(sector_windows(patches))
        return tuple(terrain_and_readable(softmax(network.run(windows)[0]).reshape(len(patches), SECTORS, -1))
                     for network in networks)

    def predict(self, pyramid: Pyramid, corners: list[np.ndarray]) -> SectorReading:
        """:meth:`predict_patches` for tiles given by their image corners."""
        return self.predict_patches(hex_patches(pyramid, corners))


def terrain_and_readable(p: np.ndarray) -> SectorReading:
    """Split the network's four-way probabilities (S, M, P, no tile top) into terrain given a tile top, and
    the chance of a tile top."""
    terrain = p[..., :3]
    readable = terrain.sum(axis=-1)
    return terrain / np.maximum(readable, 1e-12)[..., None], readable


def edge_agreement(probs: Mapping[Hex, np.ndarray], visible: Mapping[Hex, np.ndarray],
                   least_visible: float = SURE_VISIBLE) -> float | None:
    """How well a network's readings of the tiles agree across their shared edges.

    Parameters
    ----------
    probs : tile -> (12, 3) terrain probabilities.
    visible : tile -> (12,) share of each sector showing a tile top.
    least_visible : sectors showing less are left out.

    Returns
    -------
    The mean, over each pair of facing sectors of two tiles (both shown), of the log chance that the two
    readings name the same terrain; None without such a pair. Facing sectors carry the same letter on a
    rightly laid board, so a network that misreads a photo's print disagrees with itself there.
    """
    logs = []
    for h, p in probs.items():
        for i in np.flatnonzero(visible[h] >= least_visible):
            neighbour, facing = h.neighbour(edge_of_sector(int(i))), facing_sector(int(i))
            if neighbour in probs and visible[neighbour][facing] >= least_visible:
                logs.append(math.log(float(p[i] @ probs[neighbour][facing]) + 1e-9))
    return float(np.mean(logs)) if logs else None


def chosen_network(readings: Sequence[tuple[Mapping[Hex, np.ndarray], Mapping[Hex, np.ndarray]]],
                   margin: float = SECOND_NETWORK_MARGIN) -> int:
    """Which network's readings of a photo's tiles to take: the index into ``readings`` (each ``(probs, visible)``
    as :func:`edge_agreement` takes them, the first network's first), 0 unless another's edge agreement beats
    the first's by more than ``margin``; of several such, the best."""
    scores = [edge_agreement(probs, visible) for probs, visible in readings]
    if scores[0] is None:
        return 0
    best = max(range(len(scores)), key=lambda k: -math.inf if scores[k] is None else scores[k])
    return best if scores[best] is not None and scores[best] > scores[0] + margin else 0


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    z = logits - logits.max(axis=axis, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


if __name__ == "__main__":
    from scanner.train_sectors import main

    raise SystemExit(main())
