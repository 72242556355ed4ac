"""Training data and the training loop shared by the reading stages' models.

Samples come from the renderer's photos only (seeds below 1 000 000; seeds from
1 000 000 up are the held-out evaluation set). Tiles are cut out with the
render's TRUTH corners, jittered by a few percent of the tile radius and turned
a few degrees, so that the classifiers tolerate the lattice fit's errors
without depending on it.

This module needs the ``[train]`` extra (torch); the scanner never imports it.
"""

from __future__ import annotations

import argparse
import functools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fjords.compare import HIDDEN_SECTOR, SEEN_SECTOR
from fjords.geometry import SECTORS, TERRAINS
from fjords.simulate import PLAYER_COUNTS
from scanner.holdout import (HELD_OUT_COLOURS, HELD_OUT_STYLE, MAX_TRAINING_SEED, planned_scene, shows_held_out,
                             training_seeds)
from scanner.patches import (CLOSE_UP, HEX_PATCH, PIECE_CROP, Pyramid, apply_homography, close_ups,
                             crop_points_to_image, hex_homography, hex_patches, piece_crops, piece_window_matrix,
                             sector_at, sector_polygons, tile_radius)
from scanner.pieces import COLOUR_NAMES, PIECE_KINDS

DEFAULT_DATA = Path("out/reading-data.npz")


def jitter_corners(corners: np.ndarray, rng: np.random.Generator, amount: float = 0.04,
                   max_turn_deg: float = 4.0) -> np.ndarray:
    """The tile's corners moved as a lattice fit might get them wrong.

    Each corner moves by ``amount`` tile radii (standard deviation), the whole
    tile shifts by as much, scales by a few percent and turns by up to
    ``max_turn_deg`` degrees.
    """
    centre = corners.mean(axis=0)
    radius = float(np.max(np.linalg.norm(corners - centre, axis=1)))
    t = math.radians(rng.uniform(-max_turn_deg, max_turn_deg))
    turn = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    scale = 1.0 + rng.normal(0.0, amount)
    moved = (corners - centre) @ turn.T * scale + centre
    moved += rng.normal(0.0, amount * radius, size=2)
    moved += rng.normal(0.0, amount * radius, size=(6, 2))
    return moved


@dataclass
class ReadingSamples:
    """Labelled hex patches and piece crops cut from photos."""

    hex_patches: np.ndarray    # (n, 48, 48, 3) uint8
    sector_labels: np.ndarray  # (n, 12) int8 index into TERRAINS
    piece_crops: np.ndarray    # (n, 64, 64, 3) uint8
    piece_kind: np.ndarray     # (n,) int8 index into PIECE_KINDS
    piece_colour: np.ndarray   # (n,) int8 index into COLOUR_NAMES, -1 without a player colour
    piece_points: np.ndarray   # (n, 4) float32: base x, y, top x, y in crop units (0..1)
    piece_close: np.ndarray    # (n, 40, 40, 3) uint8 close-up of the piece (black without one)
    second_points: np.ndarray  # (n, 4) float32: a second piece on the tile (a rule break), as piece_points; -1 without
    sector_only: np.ndarray    # (n,) bool: a tile partly under a hand, for the sector model alone (see _read_fields)
    sector_cover: np.ndarray   # (n, 12) float16: share of each sector inside some piece's box (sector_cover)

    @classmethod
    def concatenate(cls, parts: list["ReadingSamples"]) -> "ReadingSamples":
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in cls.__dataclass_fields__))

    def save(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **{f: getattr(self, f) for f in self.__dataclass_fields__})

    @classmethod
    def load(cls, path: str | Path) -> "ReadingSamples":
        """Read samples; files from before close-ups (second pieces) were cut get black close-ups (none)."""
        return cls(**_read_fields(path, tuple(cls.__dataclass_fields__)))

    @classmethod
    def load_all(cls, paths: list[Path]) -> "ReadingSamples":
        return cls.concatenate([cls.load(p) for p in paths])


def load_fields(paths: list[Path], *names: str) -> dict[str, np.ndarray]:
    """Only the named arrays of sample files, each concatenated over the files.

    A model trains on a few of the arrays; reading all of them for every model
    that trains side by side would need more memory than the machine has.
    """
    parts = [_read_fields(p, names) for p in paths]
    return {name: np.concatenate([part[name] for part in parts]) for name in names}


SECTOR_FIELDS = ("hex_patches", "sector_labels", "sector_cover")
"""The arrays the sector model trains on: the only ones a :attr:`ReadingSamples.sector_only` sample is read for."""


def _read_fields(path: str | Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The named arrays of one sample file, with what older files lack filled in as "none".

    Samples of tiles partly under a hand (``sector_only``) are read only when nothing but :data:`SECTOR_FIELDS`
    is asked for: their hidden sectors teach the sector model what a hand looks like, but a piece crop there
    may show a piece the hand hides, which the piece models must not learn as a piece or as none.
    """
    with np.load(path) as data:
        fields = {f: data[f] for f in names if f in data}
        n = len(data["piece_kind"])
        sector_only = data["sector_only"] if "sector_only" in data else np.zeros(n, bool)
    missing = {"piece_close": lambda: np.zeros((n, CLOSE_UP, CLOSE_UP, 3), np.uint8),
               "second_points": lambda: np.full((n, 4), -1.0, np.float32),
               "sector_only": lambda: sector_only,
               "sector_cover": lambda: np.zeros((n, SECTORS), np.float16)}
    out = {f: fields[f] if f in fields else missing[f]() for f in names}
    if set(names) <= set(SECTOR_FIELDS):
        return out
    return {f: array[~sector_only] for f, array in out.items()}


MIN_TILE_RADIUS_PX = 4.0
"""Tiles smaller than this in a photo are not worth a training sample."""
NOT_TERRAIN = len(TERRAINS)
"""Sector label of a window that shows no tile top: table, hand, clutter (read as ``?``)."""
UNLABELLED = -1
"""Sector label of a sector partly under a hand: neither its terrain nor none, so no model learns from it."""


def empty_positions(truth: dict, rng: np.random.Generator, count: int,
                    keep: set[tuple[int, int]] = frozenset()) -> list[tuple[tuple[int, int], np.ndarray]]:
    """Lattice positions next to the board where no tile lies, with their corners.

    Every position in ``keep`` (say, those holding a rune stone) that borders
    the board is returned, and up to ``count`` others drawn at random. A
    neighbour's corners are its tile's corners moved across the shared edge
    (twice the edge midpoint minus the centre): exact for an affine view, close
    enough under perspective for a sample.
    """
    present = {(t["q"], t["r"]) for t in truth["tiles"]}
    from fjords.geometry import DIRECTIONS

    found: dict[tuple[int, int], np.ndarray] = {}
    for t in truth["tiles"]:
        if "corners_px" not in t:
            continue
        c = np.asarray(t["corners_px"], dtype=np.float64)
        for d, (dq, dr) in enumerate(DIRECTIONS):
            position = (t["q"] + dq, t["r"] + dr)
            if position not in present and position not in found:
                found[position] = c + 2.0 * ((c[(d - 1) % 6] + c[d]) / 2.0 - c.mean(axis=0))
    kept = [p for p in found if p in keep]
    others = [p for p in found if p not in keep]
    chosen = kept + [others[k] for k in rng.permutation(len(others))[:count]]
    return [(p, found[p]) for p in chosen]


def samples_from_render(image: np.ndarray, truth: dict, rng: np.random.Generator,
                        copies: int = 1, min_visible: float = 0.95, negatives: int = 4,
                        partly_hidden: bool = False, presence=None, close_up: int = CLOSE_UP) -> ReadingSamples:
    """Cut every visible tile of one rendered photo, ``copies`` times with different jitter.

    Also cuts windows that show no tile top, labelled :data:`NOT_TERRAIN` in
    every sector: tiles hidden under a hand, ``negatives`` empty lattice
    positions beside the board, and every empty position where a rune stone
    stands (Odin), which is labelled with its stone, so the piece models learn
    to see a stone beside the tiles instead of being taught it is not there.

    With ``partly_hidden``, tiles partly under a hand (inside the frame) are cut as well, each sector labelled
    by what the photo shows of it (the truth's ``sector_visible``): its terrain where at least
    :data:`SEEN_SECTOR` shows, :data:`NOT_TERRAIN` where at most :data:`HIDDEN_SECTOR` does, and
    :data:`UNLABELLED` between. They are ``sector_only`` samples (:func:`_read_fields`).

    A window that holds no piece gets a close-up too, labelled "none" (:func:`empty_close_centre`); with
    ``presence`` (the presence model, an :class:`~scanner.onnx_model.OnnxModel`) it is centred where that model
    would centre a piece's close-up there, so that the kind model sees what the scan will show it where the
    presence model errs, unless that point lies too near a piece (:func:`clear_of_pieces`). Close-ups are
    ``close_up`` pixels square (the input side of the kind model they teach).
    """
    height, width = image.shape[:2]
    tiles = [t for t in truth["tiles"] if t.get("visible", 1.0) >= min_visible and "corners_px" in t
             and tile_radius(np.asarray(t["corners_px"])) >= MIN_TILE_RADIUS_PX]
    hidden = [np.asarray(t["corners_px"], dtype=np.float64) for t in truth["tiles"]
              if t.get("visible", 1.0) <= 0.02 and "corners_px" in t
              and 0 <= t["center_px"][0] < width and 0 <= t["center_px"][1] < height]
    partly = [t for t in truth["tiles"] if partly_hidden and 0.02 < t.get("visible", 1.0) < min_visible
              and "sector_visible" in t and _in_frame(t, width, height)
              and tile_radius(np.asarray(t["corners_px"])) >= MIN_TILE_RADIUS_PX]
    pieces: dict[tuple[int, int], list[dict]] = {}
    for p in truth.get("pieces", []):
        if "base_px" in p:
            pieces.setdefault((p["q"], p["r"]), []).append(p)
    pyramid = Pyramid(image)
    boxes = np.array([p["bbox_px"] for p in truth.get("pieces", []) if "bbox_px" in p], np.float64).reshape(-1, 4)
    piece_ends = np.array([end for p in truth.get("pieces", []) if "base_px" in p
                           for end in (p["base_px"], p.get("center_px", p["base_px"]))], np.float64).reshape(-1, 2)
    corners, labels, kinds, colours, points, seconds, close_centres, alone = [], [], [], [], [], [], [], []

    def cut(c: np.ndarray, sector_labels: list[int], standing: list[dict], sector_only: bool = False) -> None:
        corners.append(c)
        labels.append(sector_labels)
        alone.append(sector_only)
        m = piece_window_matrix(c)
        ends = [(apply_homography(m, np.array([p["base_px"], p.get("center_px", p["base_px"])]))
                 / PIECE_CROP).ravel() for p in standing]
        seconds.append(list(ends[1]) if len(ends) > 1 else [-1.0] * 4)
        if not standing:
            kinds.append(0)
            colours.append(-1)
            points.append([0.0] * 4)
            close_centres.append(None if sector_only else empty_close_centre(c, sector_labels, piece_ends, rng))
            return
        piece = standing[0]
        kinds.append(PIECE_KINDS.index(piece["kind"]))
        player = (piece.get("player") or "").lower()
        colours.append(COLOUR_NAMES.index(player) if player in COLOUR_NAMES else -1)
        points.append(list(ends[0]))
        # The close-up is centred where the presence model will put it: between base and top, give or take.
        middle = (np.asarray(piece["base_px"]) + np.asarray(piece.get("center_px", piece["base_px"]))) / 2.0
        close_centres.append(middle + rng.normal(0.0, 0.08 * tile_radius(c), 2))

    no_top = [NOT_TERRAIN] * SECTORS
    for c in hidden:
        cut(jitter_corners(c, rng), no_top, [])
    for position, c in empty_positions(truth, rng, negatives, keep=set(pieces)):
        cut(jitter_corners(c, rng), no_top, pieces.get(position, []))
    for _ in range(copies):
        for t in tiles:
            cut(jitter_corners(np.asarray(t["corners_px"], dtype=np.float64), rng),
                [TERRAINS.index(ch) for ch in t["terrain"]], pieces.get((t["q"], t["r"]), []))
        for t in partly:
            cut(jitter_corners(np.asarray(t["corners_px"], dtype=np.float64), rng),
                [TERRAINS.index(ch) if share >= SEEN_SECTOR else NOT_TERRAIN if share <= HIDDEN_SECTOR else UNLABELLED
                 for ch, share in zip(t["terrain"], t["sector_visible"])], [], sector_only=True)
    radii = [tile_radius(c) for c in corners]
    crops = piece_crops(pyramid, corners) if corners else np.zeros((0, 64, 64, 3), np.uint8)
    if presence is not None:
        empty = [n for n, m in enumerate(close_centres) if m is not None and kinds[n] == 0]
        for n, middle in zip(empty, presence_middles(presence, crops[empty], [corners[n] for n in empty])):
            if clear_of_pieces(middle, piece_ends, radii[n]):
                close_centres[n] = middle
    close = np.zeros((len(corners), close_up, close_up, 3), np.uint8)
    with_close = [n for n, m in enumerate(close_centres) if m is not None]
    if with_close:
        close[with_close] = close_ups(pyramid, np.array([close_centres[n] for n in with_close]),
                                      np.array([radii[n] for n in with_close]), close_up)
    return ReadingSamples(
        hex_patches=hex_patches(pyramid, corners) if corners else np.zeros((0, 48, 48, 3), np.uint8),
        sector_labels=np.asarray(labels, np.int8).reshape(-1, SECTORS),
        piece_crops=crops,
        piece_kind=np.asarray(kinds, np.int8),
        piece_colour=np.asarray(colours, np.int8),
        piece_points=np.asarray(points, np.float32).reshape(-1, 4),
        piece_close=close,
        second_points=np.asarray(seconds, np.float32).reshape(-1, 4),
        sector_only=np.asarray(alone, bool),
        sector_cover=np.array([sector_cover(c, boxes) for c in corners], np.float16).reshape(-1, SECTORS),
    )


COVER_SUPERSAMPLE = 4
"""Hex patch pixels are split this many times each way when measuring how much of a sector a piece covers."""


def sector_cover(corners: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Share of each of a tile's twelve sectors that lies inside some piece's box in the photo, shape (12,).

    A piece stands on one segment, but the photo shows its body over neighbouring sectors too, and over a
    neighbouring tile where it leans towards the camera's horizon: what the sector model then sees of those
    sectors is paint and wood, not terrain. The box (the truth's ``bbox_px``, axis-aligned in the photo) is a
    little larger than the body it holds.

    Parameters
    ----------
    corners : (6, 2) the tile's corners as cut, image px.
    boxes : (k, 4) every piece's box in the photo, x0, y0, x1, y1 image px.
    """
    size = HEX_PATCH * COVER_SUPERSAMPLE
    if not len(boxes):
        return np.zeros(SECTORS)
    import cv2

    to_patch = np.diag([COVER_SUPERSAMPLE, COVER_SUPERSAMPLE, 1.0]) @ hex_homography(corners)
    covered = np.zeros((size, size), np.uint8)
    for x0, y0, x1, y1 in boxes:
        quad = apply_homography(to_patch, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64))
        # A box far off the tile can map anywhere (even through the horizon) under the tile's homography.
        if np.all(np.isfinite(quad)) and np.abs(quad).max() < 8 * size:
            cv2.fillConvexPoly(covered, np.round(quad).astype(np.int32), 1)
    return np.array([covered[mask].mean() for mask in _sector_masks()])


@functools.cache
def _sector_masks() -> tuple[np.ndarray, ...]:
    """The twelve sectors of a hex patch as boolean masks at :data:`COVER_SUPERSAMPLE` times its size."""
    import cv2

    size = HEX_PATCH * COVER_SUPERSAMPLE
    masks = []
    for triangle in sector_polygons(size):
        mask = np.zeros((size, size), np.uint8)
        cv2.fillConvexPoly(mask, np.round(triangle).astype(np.int32), 1)
        masks.append(mask.astype(bool))
    return tuple(masks)


EMPTY_CLOSE_UP_CLEARANCE = 0.8
"""Least distance, in tile radii, from an empty tile's close-up centre to any piece's base or top in the photo, so
that a close-up labelled "none" shows no piece leaning over from a neighbour."""


def empty_close_centre(corners: np.ndarray, sector_labels: list[int], piece_ends: np.ndarray,
                       rng: np.random.Generator, tries: int = 20) -> np.ndarray | None:
    """Where to cut a close-up labelled "none" on a window that holds no piece, or None where no point will do.

    The kind model reads a close-up wherever the presence model sees a piece; taught only real pieces, it cannot
    say that a printed field, a lake or a finger it is shown holds none. So every empty window gives a close-up
    too: on a tile, centred on a random point of one of its plain sectors (the pieces' ground, and where printed
    fields lie), on a window with no tile top (a hand, the table) anywhere inside it; never within
    :data:`EMPTY_CLOSE_UP_CLEARANCE` tile radii of a piece's base or top (``piece_ends``, image px).

    Parameters
    ----------
    corners : (6, 2) the window's corners, image px.
    sector_labels : its twelve sector labels (:data:`NOT_TERRAIN` where it shows no tile top).
    piece_ends : (k, 2) the bases and tops of every piece in the photo, image px.
    """
    centre = corners.mean(axis=0)
    radius = tile_radius(corners)
    plain = TERRAINS.index("P")
    wanted = {k for k, label in enumerate(sector_labels) if label == plain} or set(range(SECTORS))
    for _ in range(tries):
        corner = int(rng.integers(6))
        a, b = sorted(rng.random(2))  # a uniform point of the triangle centre, corner, next corner
        point = centre + 0.9 * (a * (corners[corner] - centre) + (b - a) * (corners[(corner + 1) % 6] - centre))
        if sector_at(corners, point) in wanted and clear_of_pieces(point, piece_ends, radius):
            return point
    return None


def clear_of_pieces(point: np.ndarray, piece_ends: np.ndarray, radius: float) -> bool:
    """Whether an image point lies at least :data:`EMPTY_CLOSE_UP_CLEARANCE` tile radii from every piece end."""
    return not len(piece_ends) or bool(np.min(np.linalg.norm(piece_ends - point, axis=1))
                                       >= EMPTY_CLOSE_UP_CLEARANCE * radius)


def presence_middles(presence, crops: np.ndarray, corners: list[np.ndarray]) -> np.ndarray:
    """Where the presence model (an :class:`~scanner.onnx_model.OnnxModel` of ``pieces.onnx``) would centre the
    close-up of a piece on each window: the middle of the base and top it places on the window's piece crop
    (``crops``, uint8), in image px, (n, 2)."""
    from scanner.sectors import to_tensor

    if not len(crops):
        return np.zeros((0, 2))
    points = presence.run(to_tensor(crops))[2]
    return np.array([crop_points_to_image(c, p).mean(axis=0) for c, p in zip(corners, points)])


def _in_frame(tile: dict, width: int, height: int) -> bool:
    """Whether every corner of a truth tile lies inside the photo (so what hides part of it is a hand)."""
    corners = np.asarray(tile["corners_px"])
    return bool(np.all((corners >= 0) & (corners < [width, height])))


def shipped_presence_model():
    """The shipped presence model on one thread (several sample builders run side by side), which places the
    close-ups of empty windows (:func:`samples_from_render`)."""
    from scanner.onnx_model import DEFAULT_MODELS_DIR, OnnxModel
    from scanner.pieces import MODEL_FILE

    return OnnxModel(DEFAULT_MODELS_DIR / MODEL_FILE, threads=1)


def render_sizes(rng: np.random.Generator) -> tuple[int, int]:
    """A photo size for training: phone-like 4:3, mostly smaller than full size to save time."""
    width = int(rng.choice([1008, 1200, 1344, 1600]))
    return width, width * 3 // 4


CROWD_KINDS = ("house", "settler")
"""Kinds of the second piece on a crowded tile in training renders."""


def build_dataset(count: int, seed: int, out: str | Path, copies: int = 2, save_every: int = 20,
                  progress: bool = True, locate_out: Path | None = None, crowd: int = 0,
                  style: str | None = None, partly_hidden: bool = False,
                  colours: Sequence[str] | None = None, runestones: bool = False,
                  close_up: int = CLOSE_UP) -> ReadingSamples:
    """Samples from ``count`` rendered training photos (seeds from ``seed`` on, held-out ones skipped).

    The file is rewritten every ``save_every`` photos, so a long run can be
    used (or stopped) part way. With ``locate_out`` the same renders also give
    the tile-top network's data (:mod:`scanner.train_locate`), saving a second render.
    With ``crowd``, up to that many tiles of each board get a second piece
    (:func:`renderer.boards.crowd_tiles`, any kind of :data:`CROWD_KINDS`, any
    player): a rule break the piece spot model must see to learn to count.
    With ``style``, every photo is printed in that tile-art style (such as a bold print, which random renders
    never draw); the held-out style is refused. With ``colours``, each board's players paint their pieces in
    colours drawn (seeded) from these names, at least as many as the most players drawn, so that colours the
    boxed games seldom use can be taught as often as the models need; the held-out colours are refused.
    With ``runestones``, every game is the 2022 edition with the rune-stone variant (random renders play it in
    about one game in six), so that the rune stones, grey and small, are taught as often as the pieces.
    ``partly_hidden`` is :func:`samples_from_render`'s.
    """
    import random

    import cv2
    from renderer import random_board, render_board
    from renderer.boards import crowd_tiles, random_setup
    from tqdm import tqdm

    from scanner.train_locate import LocateData

    if style == HELD_OUT_STYLE:
        raise ValueError(f"style {style!r} is held out of all training")
    if colours is not None and set(colours) & set(HELD_OUT_COLOURS):
        raise ValueError(f"colours {', '.join(sorted(set(colours) & set(HELD_OUT_COLOURS)))} are held out of all "
                         "training")
    if runestones and colours is not None:
        raise ValueError("the rune-stone games are painted as drawn; name colours without --runestones")
    most_players = max(max(counts) for counts in PLAYER_COUNTS.values())
    if colours is not None and len(set(colours)) < most_players:
        raise ValueError(f"name at least {most_players} colours, one for each player of the largest game")
    cv2.setNumThreads(1)  # several of these run side by side on few cores
    presence = shipped_presence_model()
    parts, located = [], LocateData()
    seeds = training_seeds(seed, count, is_rune_stone_training_seed if runestones else None)
    for n, s in enumerate(tqdm(seeds, disable=not progress, desc="rendering", unit="photo")):
        rng = np.random.default_rng(s)
        width, height = render_sizes(rng)
        if runestones:
            board = rune_stone_game(s)
        else:
            edition, players = random_setup(s)
            painted = {} if colours is None else {"colours": random.Random(s).sample(list(colours), players)}
            board = random_board(s, edition, players, **painted)
        if crowd:
            board, _ = crowd_tiles(board, random.Random(s), crowd, CROWD_KINDS, same_player=False)
        render = render_board(board, s, width=width, height=height, style=style)
        parts.append(samples_from_render(render.image, render.truth, rng, copies=copies, partly_hidden=partly_hidden,
                                         presence=presence, close_up=close_up))
        if locate_out is not None:
            located.add(s, render.image, render.truth)
        if (n + 1) % save_every == 0 or n + 1 == count:
            ReadingSamples.concatenate(parts).save(out)
            if locate_out is not None:
                located.save(locate_out)
    return ReadingSamples.concatenate(parts)


def rune_stone_game(seed: int):
    """The table of training photo ``seed`` when every game plays the rune-stone variant (2022 edition)."""
    from renderer import random_board
    from renderer.boards import random_setup

    edition, players = random_setup(seed, "2022")
    return random_board(seed, edition, players, runestones=True)


def is_rune_stone_training_seed(seed: int) -> bool:
    """Whether :func:`rune_stone_game` of ``seed``, rendered with that seed, shows neither the held-out style nor a
    held-out colour (its board and scene are not those :func:`scanner.holdout.is_training_seed` plans for)."""
    return not shows_held_out(planned_scene(seed, "2022").style, rune_stone_game(seed).players)


def samples_from_dir(folder: Path, copies: int = 1, partly_hidden: bool = False,
                     close_up: int = CLOSE_UP) -> ReadingSamples:
    """Samples from every ``NAME.jpg`` with its truth ``NAME.json`` in ``folder`` (``partly_hidden``, ``close_up``: see
    :func:`samples_from_render`), but renders of the held-out evaluation seeds and those showing the held-out
    style or a held-out colour (renders made by ``fjords render`` draw them at any seed).

    Raises
    ------
    ValueError
        When no photo of ``folder`` may be trained on.
    """
    import json

    import cv2

    parts, presence = [], shipped_presence_model()
    for photo in sorted(folder.glob("*.jpg")):
        truth = json.loads(photo.with_suffix(".json").read_text())
        seed = truth.get("render", {}).get("seed", 0)
        if seed >= MAX_TRAINING_SEED or shows_held_out(truth.get("style"), truth.get("players", ())):
            continue
        rng = np.random.default_rng(seed)
        parts.append(samples_from_render(cv2.imread(str(photo)), truth, rng, copies=copies,
                                         partly_hidden=partly_hidden, presence=presence, close_up=close_up))
    if not parts:
        raise ValueError(f"no photo in {folder} may be trained on (none, or all held out of training)")
    return ReadingSamples.concatenate(parts)


# -- the training loop -----------------------------------------------------------


def photometric_jitter(x, generator):
    """Random brightness, contrast and per-channel gain on a batch of [-1, 1] images (torch)."""
    import torch

    n = x.shape[0]
    gain = 1.0 + 0.15 * (torch.rand(n, 3, 1, 1, generator=generator) - 0.5)
    contrast = 1.0 + 0.4 * (torch.rand(n, 1, 1, 1, generator=generator) - 0.5)
    shift = 0.3 * (torch.rand(n, 1, 1, 1, generator=generator) - 0.5)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    noise = 0.03 * torch.rand(n, 1, 1, 1, generator=generator) * torch.randn(x.shape, generator=generator)
    return ((x - mean) * contrast + mean) * gain + shift + noise


def fit(model, batches, steps: int, lr: float = 3e-3, log_every: int = 200, frozen_norms: bool = False) -> None:
    """Train ``model`` with AdamW and a one-cycle schedule.

    ``batches`` yields ``loss_fn`` closures: ``batches(step)`` returns the loss
    of one batch as a torch scalar. ``frozen_norms`` keeps the batch norms in eval mode (weights taken back
    from an export by :func:`load_folded_onnx`).
    """
    import torch

    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.15)
    train_mode(model, frozen_norms)
    start, running = time.time(), 0.0
    for step in range(steps):
        loss = batches(step)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        running += loss.item()
        if (step + 1) % log_every == 0:
            print(f"step {step + 1}/{steps} loss {running / log_every:.4f} ({time.time() - start:.0f} s)",
                  flush=True)
            running = 0.0
    model.eval()


def train_mode(model, frozen_norms: bool) -> None:
    """Put ``model`` in training mode, its batch norms too unless ``frozen_norms``."""
    import torch

    model.train()
    if frozen_norms:
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.eval()


def load_folded_onnx(model, path: str | Path) -> None:
    """Put the weights of an exported network back into ``model`` (the same architecture, freshly built).

    The export folded each batch norm into the convolution before it: those convolutions' weights go into
    the convolution, and the batch norm is set to pass its input on with the folded bias added. It must
    then stay in eval mode (:func:`train_mode` with ``frozen_norms``), since batch statistics would undo the
    folding. Layers the export kept by name (linear layers, a convolution without a batch norm) are copied
    by name; the folded convolutions come in the network's own order.
    """
    import onnx
    import torch
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in graph.initializer}
    state = model.state_dict()
    folded = [n.input[1:3] for n in graph.node if n.op_type == "Conv" and n.input[1] not in state]
    modules = list(model.modules())
    pairs = [(conv, norm) for conv, norm in zip(modules, modules[1:])
             if isinstance(conv, torch.nn.Conv2d) and isinstance(norm, torch.nn.BatchNorm2d)]
    if len(pairs) != len(folded):
        raise ValueError(f"{path}: {len(folded)} folded convolutions for {len(pairs)} convolutions with a batch norm")
    with torch.no_grad():
        for name in set(weights) & set(state):
            state[name].copy_(weights[name])
        for (conv, norm), (weight, bias) in zip(pairs, folded):
            conv.weight.copy_(weights[weight])
            norm.weight.fill_(1.0)
            norm.bias.copy_(weights[bias])
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)


def start_from(model, resume: Path | None) -> bool:
    """Load ``resume`` (an exported model) into ``model`` when given; whether its batch norms must stay frozen."""
    if resume is None:
        return False
    load_folded_onnx(model, resume)
    return True


def export_onnx(model, example, path: str | Path, output_names: list[str]) -> None:
    """Write ``model`` as ONNX with a dynamic batch dimension."""
    import torch

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, example, str(path), input_names=["image"], output_names=output_names,
                          dynamic_axes={"image": {0: "n"}, **{o: {0: "n"} for o in output_names}},
                          opset_version=17, dynamo=False)


def average_onnx(start: str | Path, tuned: str | Path, weight: float, out: str | Path) -> None:
    """Write the model whose weights are ``(1 − weight)·start + weight·tuned`` (a weight-space ensemble).

    ``tuned`` must be fine-tuned from ``start`` (same graph, same weight names): interpolating between a model and
    its fine-tuned self keeps much of what the start read well and of what the fine-tuning gained (WiSE-FT,
    Wortsman et al. 2022). Integer tensors (shapes) are the start's.
    """
    import onnx
    from onnx import numpy_helper

    model, other = onnx.load(str(start)), onnx.load(str(tuned))
    tuned_weights = {init.name: numpy_helper.to_array(init) for init in other.graph.initializer}
    if sorted(tuned_weights) != sorted(init.name for init in model.graph.initializer):
        raise ValueError(f"{tuned} is not a fine-tuned {start}: their weights differ in name")
    for init in model.graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype.kind == "f":
            mixed = (1.0 - weight) * value + weight * tuned_weights[init.name]
            init.CopyFrom(numpy_helper.from_array(mixed.astype(value.dtype), init.name))
    onnx.save(model, str(out))


def stage_main(module: str, doc: str, model_file: str, train, evaluate, *, steps: int, batch: int,
               keeps_answers: bool = False, train_options: Mapping[str, dict] | None = None,
               argv: list[str] | None = None) -> int:
    """The ``train`` / ``evaluate`` / ``average`` command line of a reading stage's model.

    ``keeps_answers``: ``train`` takes ``keep``, the weight of the resumed model's answers (``--keep``).
    ``train_options``: more options of ``train`` (flag → ``add_argument`` keywords), passed to it by name.
    """
    from scanner.onnx_model import DEFAULT_MODELS_DIR

    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    p_train = sub.add_parser("train", help="train on rendered samples and write the ONNX model")
    p_train.add_argument("--data", type=Path, nargs="+", required=True,
                         help="sample files from python -m scanner.training")
    p_train.add_argument("--out", type=Path, default=DEFAULT_MODELS_DIR / model_file)
    p_train.add_argument("--steps", type=int, default=steps)
    p_train.add_argument("--batch", type=int, default=batch)
    p_train.add_argument("--seed", type=int, default=0)
    p_train.add_argument("--resume", type=Path, metavar="ONNX",
                         help="fine-tune this exported model instead of starting afresh (its batch norms stay frozen)")
    p_train.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default 3e-3)")
    if keeps_answers:
        p_train.add_argument("--keep", type=float, default=0.0, metavar="WEIGHT",
                             help="with --resume: also keep the resumed model's answers, at this weight (default 0)")
    more_names = [p_train.add_argument(flag, **keywords).dest for flag, keywords in (train_options or {}).items()]
    p_eval = sub.add_parser("evaluate", help="accuracy and calibration on held-out samples")
    p_eval.add_argument("--data", type=Path, nargs="+", required=True)
    p_eval.add_argument("--models", type=Path, default=DEFAULT_MODELS_DIR)
    p_average = sub.add_parser("average", help="interpolate the weights of a model and its fine-tuned self")
    p_average.add_argument("start", type=Path, help="the model fine-tuning started from (ONNX)")
    p_average.add_argument("tuned", type=Path, help="the fine-tuned model (ONNX)")
    p_average.add_argument("--weight", type=float, default=0.5, help="share of the fine-tuned weights (default 0.5)")
    p_average.add_argument("--out", type=Path, default=DEFAULT_MODELS_DIR / model_file)
    args = parser.parse_args(argv)
    if keeps_answers and args.action == "train" and args.keep and not args.resume:
        parser.error("--keep needs --resume: the answers to keep are the resumed model's")
    if args.action == "train":
        kept = {"keep": args.keep} if keeps_answers else {}
        more = {name: getattr(args, name) for name in more_names}
        try:
            train(args.data, args.out, args.steps, args.batch, args.seed, resume=args.resume, lr=args.lr, **kept,
                  **more)
        except ValueError as exc:  # options that do not go together: one line, exit 2
            parser.error(str(exc))
    elif args.action == "average":
        average_onnx(args.start, args.tuned, args.weight, args.out)
        print(f"wrote {args.out}")
    else:
        try:
            scores = evaluate(args.data, args.models)
        except ValueError as exc:  # data no model of the stage reads: one line, exit 2
            parser.error(str(exc))
        for key, value in scores.items():
            print(f"{key:36s} {value:.6g}")
    return 0


def dataset_main(argv: list[str] | None = None) -> int:
    """``python -m scanner.training``: render photos and save their labelled samples."""
    parser = argparse.ArgumentParser(prog="python -m scanner.training",
                                     description="Render training photos and cut labelled tile samples.")
    parser.add_argument("--count", type=int, default=400, help="photos to render")
    parser.add_argument("--seed", type=int, default=0, help="first render seed (< 1 000 000)")
    parser.add_argument("--copies", type=int, default=2, help="jittered cut-outs per tile")
    parser.add_argument("--out", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--locate-out", type=Path, metavar="NPZ",
                        help="also save the same renders as tile-top network data (python -m scanner.train_locate)")
    parser.add_argument("--crowd", type=int, default=0, metavar="N",
                        help="put a second piece on up to N tiles of each board (data for the piece spot model)")
    parser.add_argument("--style", metavar="NAME",
                        help="print every photo's tiles in this art style, e.g. patchwork (random renders never "
                        "draw it)")
    parser.add_argument("--colours", nargs="+", metavar="NAME", choices=COLOUR_NAMES,
                        help="paint each board's pieces in colours drawn from these names (at least four, for "
                        "four players), e.g. the light ones a model misses")
    parser.add_argument("--from-dir", type=Path, metavar="DIR",
                        help="cut photos NAME.jpg + NAME.json already rendered (fjords render --out DIR) instead")
    parser.add_argument("--runestones", action="store_true",
                        help="every game the 2022 edition with the rune-stone variant (data for the presence model)")
    parser.add_argument("--partly-hidden", action="store_true",
                        help="also cut tiles partly under a hand, each sector labelled by what shows of it (for the "
                        "sector model only; the piece models never read these samples)")
    parser.add_argument("--close-up", type=int, default=CLOSE_UP, metavar="SIDE",
                        help=f"side in pixels of the piece close-ups (default {CLOSE_UP}; 56 for the fine kind "
                        "model, piece_kinds_fine.onnx)")
    args = parser.parse_args(argv)
    try:
        if args.from_dir:
            samples = samples_from_dir(args.from_dir, args.copies, args.partly_hidden, args.close_up)
            samples.save(args.out)
        else:
            samples = build_dataset(args.count, args.seed, args.out, args.copies, locate_out=args.locate_out,
                                    crowd=args.crowd, style=args.style, partly_hidden=args.partly_hidden,
                                    colours=args.colours, runestones=args.runestones, close_up=args.close_up)
    except ValueError as exc:  # a held-out style or colour, too few colours, nothing to cut: one line, exit 2
        parser.error(str(exc))
    print(f"{len(samples.sector_labels)} tiles, {int((samples.piece_kind > 0).sum())} pieces -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(dataset_main())
