"""Stage 6: the piece standing on each tile — none, house, settler or rune stone — and its colour.

Two small networks read each tile, and a third counts the pieces on it. The
presence model (``pieces.onnx``) reads the tile's piece crop
(:func:`scanner.patches.piece_crops`: image axes,
reaching further up than down, because a standing piece rises towards the top
of the photo and may lean over the tile behind it), as it is and mirrored, and
answers whether a piece stands there, and where its base and its top are
(:meth:`PieceClassifier.read_presence`). The base, carried back
through the tile's homography, names the sector it stands on. The kind model
(``piece_kinds.onnx``) then reads a close-up centred between base and top
(:func:`scanner.patches.close_ups`) and answers the kind and the player colour
among the eleven named colours; a close-up generalises far better than the
whole tile crop. It also answers "none", a second opinion on whether a piece
stands there at all (:attr:`PieceReading.close_up_piece`), which the piece
confidence weighs (:mod:`scanner.confidence`). A second kind model of another
layout (``piece_kinds_fine.onnx``) reads the same window cut finer, at its own
input size: two networks err on different close-ups, and each reading is the
average of both. Each reads each piece at three close-up sizes
(:data:`CLOSE_UP_SCALES`), each as it is and mirrored, and the twelve readings
are averaged (:meth:`PieceClassifier.read_pieces`).

Both editions allow one piece per tile, but a table may break that rule, and
the scan must show it. The presence model cannot: where two pieces share a
tile its points fall between them. The spot model (``piece_spots.onnx``)
draws a heat map of where pieces stand on a tile where the presence model
sees one; where it sees two or more clear peaks, each peak is read as a
piece of its own (its close-up
centred between its base and its top, as the spot model places them). A
second spot model (``piece_spots_doubted.onnx``, fine-tuned on bold prints)
reads the tiles the presence model doubts, and where it sees one clear peak
the peak stands in for the presence model's reading (:data:`MIN_LONE_SPOT`).

With a calibration (player name → RGB of that table's pieces) colours are
named instead by the nearest calibrated colour in CIELAB, measured from the
piece's own pixels between its base and its top, once the photo's light on its
pieces is fitted (:func:`photo_light`, :func:`palette_named`; the scan does
this over the whole photo's readings, :func:`scanner.assemble.with_palette_names`).
A piece whose colour lies further than :data:`PALETTE_FIT` from every calibrated
player's (a player the calibration does not know, or another copy's calibration)
is named among the standard names, as without a calibration.

``python -m scanner.pieces train|evaluate --help`` trains and measures the
presence model (see :mod:`scanner.train_pieces`; the others:
:mod:`scanner.train_piece_kinds`, :mod:`scanner.train_piece_spots`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

import numpy as np
from scipy.special import expit, logit

from scanner.onnx_model import OnnxModel
from scanner.patches import Pyramid, close_ups, crop_points_to_image, piece_crops, sectors_at, tile_radius
from scanner.sectors import softmax, to_tensor

PIECE_KINDS = ("none", "house", "settler", "runestone")
COLOUR_NAMES = ("red", "yellow", "blue", "black", "white", "green", "grey", "beige", "brown", "orange", "purple")
MIN_PIECE_SEEN = 0.5
"""Presence (chance that a piece stands there) from which a reading's colour counts as the piece's colour: what a
calibration measures its players on, and what a photo's light is fitted on (:func:`photo_light`)."""
MODEL_FILE = "pieces.onnx"
KINDS_MODEL_FILE = "piece_kinds.onnx"
FINE_KINDS_MODEL_FILE = "piece_kinds_fine.onnx"
"""The second kind model, reading each close-up cut at 56 pixels instead of 40."""
KINDS_LABEL_SMOOTHING = 0.02
"""Label smoothing the close-up model is trained with (:mod:`scanner.train_piece_kinds`): so trained, it never
answers above 1 − s + s/n, which the piece confidence undoes where it takes the model's chances at face value
(:func:`scanner.confidence.unsmoothed_chance`)."""
SPOTS_MODEL_FILE = "piece_spots.onnx"
DOUBTED_SPOTS_MODEL_FILE = "piece_spots_doubted.onnx"
"""The spot model fine-tuned on bold prints, read only on tiles the presence model doubts (:data:`MIN_STAND_IN`):
it reads fewer printed fields as pieces, but shows a second piece on a tile less often than the crowding model
(models/README.md)."""
SPOT_GRID = 16
"""Side of the spot model's heat map, in cells (each cell is 4×4 pixels of the 64×64 piece crop)."""
MIN_SPOT = 0.5
"""Heat of a peak that counts as a piece standing there."""
MIN_SECOND_SPOT = 0.6
"""Heat every peak needs (in the mean of a crop's and its mirror image's reading) for a tile to be read as holding
several pieces (at least two must reach it). Chosen on renders of training seeds with the decoder's check of such
tiles (:class:`scanner.assemble.DecodeSettings` ``min_crowded_confidence``), and kept for the spot model fine-tuned
on crowded renders in the forty-fifth session (0.7 would lose real pairs; models/README.md)."""
MAX_PIECES_PER_TILE = 3
MIN_STAND_IN = 0.2
"""Chance of a piece from which a spot model (:data:`DOUBTED_SPOTS_MODEL_FILE`) also looks at a tile the presence
model doubts (below :data:`MIN_SPOT`), and may stand in for it (:data:`MIN_LONE_SPOT`)."""
MIN_LONE_SPOT = 0.5
"""Heat of a lone peak that stands in for the presence model's reading on a tile it doubts: the peak's heat becomes
the chance of a piece there, and its base and top place the piece."""
MIN_READ = 0.05
"""Chance of a piece below which its kind and colour are not read (taken as even). Far below every threshold that
puts a piece on the board (:class:`scanner.assemble.DecodeSettings` ``min_piece``, ``min_stone_beside``), so no
board changes; most tiles and positions beside the board hold no piece, and the kind model's six close-ups per
piece are the costliest read of the pieces stage."""
CLOSE_UP_SCALES = (1.0, 0.88, 1.12)
"""Sizes of the close-ups the kind model reads per piece, as shares of the usual one. The presence model's points,
which place a close-up, are a little off, and a piece looks alike a little nearer or further: on 120 renders of
training seeds, averaging three sizes read 5 more pieces right and 6 fewer houses and settlers as each other
(models/README.md)."""


@dataclass(frozen=True)
class PieceReading:
    """What the piece model saw on one tile.

    ``kind_probs`` follow :data:`PIECE_KINDS`, ``colour_probs`` follow the
    names in ``colour_names``; points are image pixels; ``rgb`` is the median
    colour of the piece's pixels; ``close_up_piece`` is the kind model's chance
    that its close-up shows a piece at all (1 where no close-up was read), a
    second opinion beside the presence model's (``1 - kind_probs[0]``).
    """

    kind_probs: np.ndarray
    colour_probs: np.ndarray
    colour_names: tuple[str, ...]
    base_px: tuple[float, float]
    top_px: tuple[float, float]
    sector: int
    rgb: tuple[int, int, int]
    close_up_piece: float = 1.0

    @property
    def kind(self) -> str:
        return PIECE_KINDS[int(np.argmax(self.kind_probs))]

    @property
    def colour(self) -> str:
        return self.colour_names[int(np.argmax(self.colour_probs))]

    @property
    def seen(self) -> bool:
        """Whether the presence model sees a piece here (:data:`MIN_PIECE_SEEN`): elsewhere the reading's point lies
        on the tile, and ``rgb`` measures the terrain."""
        return 1.0 - float(self.kind_probs[0]) >= MIN_PIECE_SEEN


def rgb_to_lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of sRGB colours in 0..255, shape (..., 3)."""
    from skimage.color import rgb2lab

    rgb = np.asarray(rgb, dtype=np.float64).reshape(-1, 1, 3) / 255.0
    return rgb2lab(rgb).reshape(-1, 3)


#: CIELAB ΔE over which a calibrated colour's naming probability falls by e^(−1/2).
COLOUR_SPREAD = 12.0


#: CIELAB ΔE from the nearest calibrated player's colour beyond which a piece fits no calibrated player and is
#: named among the standard names. A player's pieces drift far from their calibrated colour on the copy's other
#: photos (median 15–36, 95th percentile 37–60 on four copies of training seeds), so pieces of a player the
#: calibration does not know cannot all be told apart: at 60, 59 % of such pieces got standard names and 2.6 % of
#: the calibrated players' own pieces did (docs/calibration.md).
PALETTE_FIT = 60.0


def calibrated_colour_probs(rgb: tuple[int, int, int], palette: Mapping[str, tuple[int, int, int]],
                            spread: float = COLOUR_SPREAD) -> tuple[np.ndarray, tuple[str, ...], float]:
    """Soft nearest-colour naming in CIELAB: probabilities ∝ exp(−ΔE² / 2·spread²).

    Returns
    -------
    probs, names : the probability of each calibrated name.
    nearest : ΔE to the nearest calibrated colour (how well the piece fits the palette at all).
    """
    names = tuple(palette)
    labs = rgb_to_lab(np.array([palette[n] for n in names]))
    distance2 = ((labs - rgb_to_lab(np.array(rgb))) ** 2).sum(axis=1)
    return softmax(-distance2 / (2 * spread ** 2)), names, float(np.sqrt(distance2.min()))


def palette_probs(rgb: tuple[int, int, int], palette: Mapping[str, tuple[int, int, int]]
                  ) -> tuple[np.ndarray, tuple[str, ...]] | None:
    """A piece's colour named by a calibrated palette, or None where it fits no player (:data:`PALETTE_FIT`)."""
    probs, names, nearest = calibrated_colour_probs(rgb, palette)
    return (probs, names) if nearest <= PALETTE_FIT else None


LIGHT_PRIOR = 200.0
"""Weight of the prior on the photo's light (:func:`photo_light`), per piece, in ΔE² per squared log gain: a gain of
1.5 on one channel costs 33 ΔE² a piece, so it is taken only where it brings the pieces' squared distances to their
players down by more (from ΔE 10 to 8 each, say). Chosen on 20 copies of training styles and paints among 10, 50
and 200 (models/README.md)."""
_LIGHT_STEPS = np.linspace(-1.0, 1.0, 41)
_BALANCE_STEPS = np.linspace(-0.6, 0.6, 13)
_LIGHT_LOGS = np.array([[b + r, b, b + u] for b in _LIGHT_STEPS for r in _BALANCE_STEPS for u in _BALANCE_STEPS])
"""The log gains (red, green, blue) :func:`photo_light` tries: a brightness (0.37–2.7 times) and the red and blue
channels' balance against green (0.55–1.8 times)."""


def photo_light(rgbs: np.ndarray, palette: Mapping[str, tuple[int, int, int]]) -> np.ndarray:
    """The gain (3,) on RGB that brings a photo's pieces nearest its calibrated palette.

    A calibration measures its players' colours under the calibration photo's lamp and exposure; another photo of
    the table shows the same paints lighter or darker and warmer or cooler, and ΔE, dominated by lightness, then
    names a dark orange piece after a dark purple player. The gain minimises, over the photo's pieces ``rgbs``
    (n, 3) that fit the palette as measured (:func:`palette_probs`), each one's squared ΔE to its nearest calibrated
    colour after the gain (capped at :data:`PALETTE_FIT`), plus :data:`LIGHT_PRIOR` times the squared log gains per
    piece; found on a grid (:data:`_LIGHT_LOGS`). Pieces of players the calibration does not know take no part: a
    light that dragged them into the palette would name them after its players. Fewer than two fitting pieces tell
    nothing about the light: gain 1.
    """
    rgbs = np.asarray(rgbs, dtype=np.float64).reshape(-1, 3)
    rgbs = rgbs[np.array([palette_probs(tuple(rgb), palette) is not None for rgb in rgbs], bool)]
    if len(rgbs) < 2:
        return np.ones(3)
    gains = np.exp(_LIGHT_LOGS)
    labs = rgb_to_lab(np.clip(gains[:, None, :] * rgbs[None], 0, 255).reshape(-1, 3)).reshape(len(gains), len(rgbs), 3)
    players = rgb_to_lab(np.array(list(palette.values())))
    nearest = ((labs[:, :, None, :] - players[None, None]) ** 2).sum(axis=-1).min(axis=-1)
    cost = np.minimum(nearest, PALETTE_FIT ** 2).sum(axis=1) + LIGHT_PRIOR * len(rgbs) * (_LIGHT_LOGS ** 2).sum(axis=1)
    return gains[int(np.argmin(cost))]


def palette_named(reading: PieceReading, palette: Mapping[str, tuple[int, int, int]],
                  gain: np.ndarray) -> PieceReading:
    """The reading's colour named by the palette at the photo's light (:func:`photo_light`) where, as measured, it
    fits a calibrated player (:func:`palette_probs`); else the network's naming, as read. The light changes which
    player names a piece, never whether one does."""
    if palette_probs(reading.rgb, palette) is None:
        return reading
    rgb = tuple(int(v) for v in np.clip(np.round(np.asarray(gain) * np.asarray(reading.rgb, np.float64)), 0, 255))
    probs, names, _ = calibrated_colour_probs(rgb, palette)
    return replace(reading, colour_probs=probs, colour_names=names)


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


@dataclass(frozen=True)
class Spot:
    """A peak of the spot model: its heat, and the piece's base and top in crop units (0..1)."""

    score: float
    base: tuple[float, float]
    top: tuple[float, float]


def find_spots(heat: np.ndarray, regress: np.ndarray, min_score: float = MIN_SPOT) -> list[list[Spot]]:
    """The peaks of each crop's heat map at least ``min_score`` high, strongest first.

    Parameters
    ----------
    heat : (n, 1, G, G) logits of the spot model.
    regress : (n, 4, G, G): at each cell, the base's offset from the cell centre (cells) and the
        vector from base to top (crop units).
    """
    from scipy.ndimage import maximum_filter

    score = expit(heat[:, 0])
    peaks = (score == maximum_filter(score, size=(1, 3, 3), mode="constant")) & (score >= min_score)
    spots: list[list[Spot]] = [[] for _ in range(len(score))]
    for n, y, x in zip(*np.nonzero(peaks)):
        du, dv, tx, ty = regress[n, :, y, x]
        base = ((x + 0.5 + du) / heat.shape[-1], (y + 0.5 + dv) / heat.shape[-2])
        spots[n].append(Spot(float(score[n, y, x]), base, (base[0] + tx, base[1] + ty)))
    return [sorted(s, key=lambda spot: -spot.score) for s in spots]


def crowding_spots(spots: list[Spot], min_second: float = MIN_SECOND_SPOT) -> list[Spot]:
    """The peaks read as pieces of their own: those at least ``min_second`` high when two or more are."""
    several = [s for s in spots if s.score >= min_second][:MAX_PIECES_PER_TILE]
    return several if len(several) >= 2 else []


def count_spots(heat: np.ndarray, min_second: float = MIN_SECOND_SPOT) -> list[int]:
    """Pieces each crop holds by the spot model: 0, 1, or the number of clear peaks when there are several."""
    spots = find_spots(heat, np.zeros((len(heat), 4) + heat.shape[2:], np.float32))
    return [len(crowding_spots(s, min_second)) or min(len(s), 1) for s in spots]


def presence_both_ways(model: OnnxModel, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The presence model's chance of a piece (n,) and base and top points (n, 4) on piece crops (model input),
    each the mean of its reading of the crop and of the crop mirrored left to right (mirrored back): how the scan
    reads them (:meth:`PieceClassifier.read_presence`)."""
    return presence_of_readings(model.run(crops), model.run(crops[..., ::-1]))


def presence_of_readings(reading: list[np.ndarray], mirrored: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`presence_both_ways` from the presence model's outputs on the crops and on the crops mirrored, for a
    caller that already holds the first (``scanner.train_pieces.evaluate``)."""
    presence_logits, _, points = reading
    mirrored_logits, _, mirrored_points = mirrored
    chance = 1.0 - 0.5 * (softmax(presence_logits)[:, 0] + softmax(mirrored_logits)[:, 0])
    # In float64, as the points have always been averaged: the same numbers to the bit.
    return chance, 0.5 * (points + mirror_points(mirrored_points.astype(np.float64)))


def mirror_points(points):
    """Base and top points (n, 4; crop units) of a crop mirrored left to right: x runs the other way across it.

    Works on numpy arrays and torch tensors alike (the trainer mirrors its crops with their labels)."""
    flipped = points * 1.0
    flipped[:, 0::2] = 1.0 - points[:, 0::2]
    return flipped


class PieceClassifier:
    """Reads the pieces (or their absence) on tiles given by their image corners, colours named by the network
    (a calibrated palette names them per photo afterwards: :func:`palette_named`).

    Parameters
    ----------
    models_dir : path to the folder holding ``pieces.onnx``, ``piece_kinds.onnx``, ``piece_kinds_fine.onnx``,
        ``piece_spots.onnx`` and ``piece_spots_doubted.onnx``.
    """

    def __init__(self, models_dir: str | Path):
        self.model = OnnxModel(Path(models_dir) / MODEL_FILE)
        self.kinds = OnnxModel(Path(models_dir) / KINDS_MODEL_FILE)
        self.fine_kinds = OnnxModel(Path(models_dir) / FINE_KINDS_MODEL_FILE)
        self.spots = OnnxModel(Path(models_dir) / SPOTS_MODEL_FILE)
        self.doubted_spots = OnnxModel(Path(models_dir) / DOUBTED_SPOTS_MODEL_FILE)

    @property
    def version(self) -> str:
        return "+".join(self.versions.values())

    @property
    def versions(self) -> dict[str, str]:
        """Each piece model's version (what a piece confidence calibration is fitted for)."""
        return {"pieces": self.model.version, "piece_kinds": self.kinds.version,
                "piece_kinds_fine": self.fine_kinds.version, "piece_spots": self.spots.version,
                "piece_spots_doubted": self.doubted_spots.version}

    def read_close_ups(self, close: np.ndarray, model: OnnxModel) -> tuple[np.ndarray, np.ndarray]:
        """Kind (none, house, settler, rune stone) and colour probabilities of piece close-ups (n, s, s, 3) read by
        the kind model ``model`` (``s`` its input side).

        Each close-up is read as it is and mirrored left to right, and the two readings are averaged: a
        piece looks alike mirrored and the kind model was trained on both views, so the second view is a
        second opinion for one more close-up each (on renders of training seeds it removed 19 of the
        107 houses and settlers read as each other, models/README.md).
        """
        n = len(close)
        kind_logits, colour_logits = model.run(to_tensor(np.concatenate([close, close[:, :, ::-1]])))
        return tuple(0.5 * (softmax(logits[:n]) + softmax(logits[n:])) for logits in (kind_logits, colour_logits))

    def read_pieces(self, pyramid: Pyramid, centres: np.ndarray, radii: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Kind (none, house, settler, rune stone) and colour probabilities of the pieces at image points
        ``centres`` (n, 2) on tiles of radius ``radii``: the average of both kind models' readings of their
        close-ups at every size of :data:`CLOSE_UP_SCALES`, each cut at its model's input side and read one size
        at a time (the network's working memory grows with its batch)."""
        kinds, colours = zip(*(self.read_close_ups(close_ups(pyramid, centres, np.asarray(radii) * s, model.input_side),
                                                   model)
                               for model in (self.kinds, self.fine_kinds) for s in CLOSE_UP_SCALES))
        return np.mean(kinds, axis=0), np.mean(colours, axis=0)

    def read_presence(self, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The presence model's chance of a piece (n,) and its base and top points (n, 4: base x, y, top x, y in
        crop units) on piece crops (model input), each the mean of its reading of the crop and of the crop
        mirrored left to right (mirrored back).

        A second view, as the kind and spot models have: on renders of new seeds it matched 9 more pieces of
        100 usual renders and 6 more of 40 bold prints (models/README.md).
        """
        return presence_both_ways(self.model, crops)

    def read_spots(self, crops: np.ndarray, model: OnnxModel | None = None) -> tuple[np.ndarray, np.ndarray]:
        """A spot model's heat logits (n, 1, G, G) and regressions (n, 4, G, G) of piece crops (model input),
        each the mean of its reading of the crop and of the crop mirrored left to right (mirrored back).
        ``model`` defaults to the crowding one, ``self.spots``.

        Where two pieces share a tile the second peak is the weaker, and one view alone may lose it; the
        mean of two views lets a second piece be shown from a lower peak (:data:`MIN_SECOND_SPOT`).
        """
        model = model or self.spots
        heat, regress = model.run(crops)
        mirrored_heat, mirrored_regress = model.run(crops[..., ::-1])
        # Mirrored back: cells run the other way, and the horizontal offset and base-to-top vector turn.
        mirrored_regress = mirrored_regress[..., ::-1] * np.array([-1.0, 1.0, -1.0, 1.0])[None, :, None, None]
        chance = 0.5 * (expit(heat) + expit(mirrored_heat[..., ::-1]))
        return logit(np.clip(chance, 1e-6, 1.0 - 1e-6)), 0.5 * (regress + mirrored_regress)

    def predict(self, pyramid: Pyramid, corners: list[np.ndarray],
                crops: np.ndarray | None = None) -> list[tuple[PieceReading, ...]]:
        """Per tile, the pieces read on it: one reading (which may say "none"), or several where the
        spot model sees several pieces. ``crops`` are the tiles' :func:`~scanner.patches.piece_crops`
        when already cut."""
        if not corners:
            return []
        crops = to_tensor(piece_crops(pyramid, corners) if crops is None else crops)
        p_present, points = self.read_presence(crops)
        # A tile holding two pieces holds one: the spot models need only look where the presence model may see one.
        doubts = p_present < MIN_SPOT
        occupied = np.flatnonzero(~doubts)
        doubted = np.flatnonzero(doubts & (p_present >= MIN_STAND_IN))
        spots: list[list[Spot]] = [[] for _ in corners]
        for tiles, model, min_score in ((occupied, self.spots, MIN_SPOT),
                                        (doubted, self.doubted_spots, MIN_LONE_SPOT)):
            if len(tiles):
                for n, found in zip(tiles, find_spots(*self.read_spots(crops[tiles], model), min_score=min_score)):
                    spots[n] = found
        # One candidate per piece to read: (tile, chance a piece stands there, base and top in crop units).
        candidates = []
        for n, tile_spots in enumerate(spots):
            several = [] if doubts[n] else crowding_spots(tile_spots)
            if several:
                candidates += [(n, s.score, (*s.base, *s.top)) for s in several]
            elif doubts[n] and tile_spots:  # the doubted tile's strongest peak, at least MIN_LONE_SPOT
                lone = tile_spots[0]
                candidates.append((n, lone.score, (*lone.base, *lone.top)))
            else:
                candidates.append((n, float(p_present[n]), tuple(points[n])))
        tiles = [n for n, _, _ in candidates]
        ends = np.array([crop_points_to_image(corners[n], p) for n, _, p in candidates])  # (k, 2 [base, top], 2) px
        radii = np.array([tile_radius(corners[n]) for n in tiles])
        present = np.array([[p] for _, p, _ in candidates])
        close_kinds = np.full((len(candidates), len(PIECE_KINDS)), 1.0 / (len(PIECE_KINDS) - 1))
        close_kinds[:, 0] = 0.0
        colour_probs = np.full((len(candidates), len(COLOUR_NAMES)), 1.0 / len(COLOUR_NAMES))
        read = np.flatnonzero(present[:, 0] >= MIN_READ)
        if len(read):
            close_kinds[read], colour_probs[read] = self.read_pieces(pyramid, ends.mean(axis=1)[read], radii[read])
        close_up_piece = 1.0 - close_kinds[:, 0]
        # The kind among pieces: the close-up's answer given that a piece stands there.
        kind_given_piece = close_kinds[:, 1:] / np.maximum(close_up_piece, 1e-6)[:, None]
        kind_probs = np.hstack([1.0 - present, present * kind_given_piece])
        image = pyramid.levels[0]
        readings: list[list[PieceReading]] = [[] for _ in corners]
        base_sectors = sectors_at([corners[n] for n in tiles], ends[:, 0]) if tiles else []
        for k, n in enumerate(tiles):
            base, top = ends[k]
            rgb = piece_rgb(image, base, top, radii[k] * 0.06)
            readings[n].append(PieceReading(kind_probs[k], colour_probs[k], COLOUR_NAMES,
                                            (float(base[0]), float(base[1])),
                                            (float(top[0]), float(top[1])), int(base_sectors[k]), rgb,
                                            float(close_up_piece[k])))
        return [tuple(r) for r in readings]


if __name__ == "__main__":
    from scanner.train_pieces import main

    raise SystemExit(main())
