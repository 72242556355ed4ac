"""Printed tile art: natural terrain shapes that stay faithful to the twelve sectors.

A tile's art is drawn in the tile's own frame (``x`` east, image ``y`` down,
angles counter-clockwise as seen). Each pixel takes the terrain that wins a
vote of the twelve sectors, weighted by angular closeness. The vote is sharp
at the rim (a sector's terrain is the one at its rim, up to the sector's exact
angular limits) and broad near the centre, where the majority terrain wins and
smooth noise bends the boundaries into coasts, ridges and mountain feet. So a
sector's own terrain covers its outer part, which is most of its area.
"""

from __future__ import annotations

import colorsys
import math
from dataclasses import dataclass, replace

import cv2
import numpy as np

from fjords.geometry import SECTORS, sector_mid_angle
from renderer.noise import smooth_noise

TERRAIN_INDEX = {"S": 0, "M": 1, "P": 2}
VOTE_GRID = 96  # the terrain vote is computed on at most this many pixels across
SQRT3 = math.sqrt(3.0)


@dataclass(frozen=True)
class TileStyle:
    """How a family of tile art looks; colours are BGR in ``[0, 1]``.

    ``palette[t]`` holds three colours per terrain ``t`` (``S``, ``M``, ``P``):
    the main one and two variants for shallows, rock faces, fields.
    """

    name: str
    palette: dict[str, tuple[tuple[float, float, float], ...]]
    wiggle: float = 1.0          # how far boundaries bend inside the tile (0 = straight sector lines)
    detail: float = 1.0          # waves, fields, trees, rocks (0 = flat colour)
    coast: tuple[float, float, float] | None = None   # line drawn along coasts
    border: tuple[float, float, float] | None = None  # printed outline near the tile's edge
    paper: float = 0.03          # print and cardboard grain
    gloss: float = 0.1           # specular strength of the printed face
    side: tuple[float, float, float] = (0.35, 0.38, 0.42)  # colour of the cardboard's cut edge
    ink: tuple[float, float, float] | None = None     # outline drawn around every terrain region
    crops: tuple[tuple[float, float, float], ...] = ()  # opaque field colours of their own (bold prints only)
    relief: bool = True          # mountains hill-shaded (False: flat colour, as a printed map)
    peaks: float = 0.5           # chance that a tile's mountains carry drawn peak glyphs
    glyph_scale: float = 1.0     # size of those glyphs; a print of smaller ones draws more of them
    field_patches: bool = False  # fields as a few compact patches in the crops' colours on a one-colour plain


def _hsv(h: float, s: float, v: float) -> tuple[float, float, float]:
    r, g, b = colorsys.hsv_to_rgb((h % 360.0) / 360.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return (b, g, r)


# Family: (sea hue, mountain hue, plain hue) ranges and saturation/value levels, and finish.
_FAMILIES = {
    "painted": dict(sat=(0.45, 0.7), val=(0.6, 0.85), wiggle=1.0, detail=1.0, coast=0.6, border=0.2, gloss=0.1),
    "flat": dict(sat=(0.5, 0.8), val=(0.65, 0.9), wiggle=0.6, detail=0.0, coast=0.3, border=0.3, gloss=0.05),
    "muted": dict(sat=(0.18, 0.35), val=(0.5, 0.75), wiggle=1.0, detail=0.7, coast=0.5, border=0.3, gloss=0.05),
    "saturated": dict(sat=(0.75, 0.95), val=(0.7, 0.95), wiggle=0.8, detail=0.6, coast=0.7, border=0.4,
                      gloss=0.25),
    "vintage": dict(sat=(0.25, 0.45), val=(0.55, 0.8), wiggle=1.2, detail=0.9, coast=0.9, border=0.8, gloss=0.0,
                    warm=True),
    "glossy": dict(sat=(0.5, 0.75), val=(0.6, 0.85), wiggle=1.0, detail=0.8, coast=0.5, border=0.0, gloss=0.9),
    "pastel": dict(sat=(0.15, 0.35), val=(0.8, 0.97), wiggle=1.0, detail=0.5, coast=0.3, border=0.3, gloss=0.05),
    "inked": dict(sat=(0.35, 0.6), val=(0.65, 0.9), wiggle=1.1, detail=0.8, coast=0.0, border=0.5, gloss=0.05,
                  ink=True),
    "dark": dict(sat=(0.4, 0.65), val=(0.35, 0.55), wiggle=1.0, detail=0.8, coast=0.6, border=0.5, gloss=0.2),
    "patchwork": dict(sat=(0.6, 0.95), val=(0.7, 0.95), wiggle=1.0, detail=1.0, coast=0.8, border=0.3, gloss=0.05),
    "map": dict(sat=(0.55, 0.85), val=(0.7, 0.92), wiggle=1.1, detail=0.8, coast=0.8, border=0.2, gloss=0.05),
    "farmland": dict(sat=(0.55, 0.85), val=(0.72, 0.92), wiggle=1.0, detail=0.8, coast=0.8, border=0.3,
                     gloss=0.05),
}
STYLES: tuple[str, ...] = tuple(_FAMILIES)
BOLD_STYLES: tuple[str, ...] = ("patchwork", "map", "farmland")
"""Families of bold prints: fields in opaque colours of their own, flat patches that may look like painted pieces;
``map`` also prints its mountains as a map does, in flat tan or brown with drawn peaks; ``farmland`` prints each
plain in one green with a few compact ripe fields on it, about a piece's size, dotted with trees (a cartoon print,
whose lone yellow fields a scan takes for yellow pieces). They are drawn only when asked for (``style=``), so
that every seed renders as it did before they existed."""
RANDOM_STYLES: tuple[str, ...] = tuple(s for s in STYLES if s not in BOLD_STYLES)
"""The families a render draws from when no style is given."""


def sample_style(name: str, rng: np.random.Generator) -> TileStyle:
    """A member of the family ``name`` with its own palette and finish."""
    fam = _FAMILIES[name]
    sat = lambda: rng.uniform(*fam["sat"])  # noqa: E731 - a fresh draw per colour
    val = lambda: rng.uniform(*fam["val"])  # noqa: E731
    warm = fam.get("warm", False)
    sea_h = rng.uniform(185, 225) - (15 if warm else 0)
    plain_h = rng.uniform(55, 120) - (15 if warm else 0)
    rock_h = rng.choice([rng.uniform(20, 45), rng.uniform(200, 260)])
    sea_s = sat()
    # Rock stays greyer than the sea, so muted palettes keep sea and mountain apart.
    rock_s = min(rng.uniform(0.05, 0.3) * (1.3 if name == "saturated" else 1.0), 0.5 * sea_s)
    palette = {
        "S": (_hsv(sea_h, sea_s, val()), _hsv(sea_h - 15, sat() * 0.7, min(1, val() * 1.15)),
              _hsv(sea_h + 10, sat(), val() * 0.75)),
        "M": (_hsv(rock_h, rock_s, val() * 0.9), _hsv(rock_h, rock_s * 0.8, min(1, val() * 1.2)),
              _hsv(rock_h, rock_s, val() * 0.55)),
        "P": (_hsv(plain_h, sat(), val()), _hsv(plain_h - rng.uniform(20, 45), sat(), min(1, val() * 1.1)),
              _hsv(plain_h + 15, sat(), val() * 0.7)),
    }
    coast = None
    if rng.random() < fam["coast"]:
        coast = _hsv(sea_h, 0.1, 0.95) if rng.random() < 0.5 else _hsv(sea_h, 0.6, 0.3)
    border = None
    if rng.random() < fam["border"]:
        border = _hsv(0, 0, rng.choice([0.1, 0.95])) if rng.random() < 0.7 else _hsv(rng.uniform(0, 60), 0.5, 0.5)
    side = _hsv(rng.uniform(0, 360), rng.uniform(0, 0.2), rng.uniform(0.2, 0.8))
    ink = _ink(rng) if fam.get("ink") else None
    style = TileStyle(name, palette, wiggle=fam["wiggle"] * rng.uniform(0.7, 1.2),
                      detail=fam["detail"] * rng.uniform(0.6, 1.0), coast=coast, border=border,
                      paper=rng.uniform(0.01, 0.05), gloss=fam["gloss"] * rng.uniform(0.5, 1.0), side=side, ink=ink)
    if name == "map":
        return _map(style, rng)
    if name == "farmland":
        return _farmland(style, rng)
    return _bold(style, rng) if name in BOLD_STYLES else style


def _ink(rng: np.random.Generator) -> tuple[float, float, float]:
    """A dark, warm-to-neutral outline colour."""
    return _hsv(rng.uniform(0, 60), rng.uniform(0, 0.5), rng.uniform(0.05, 0.3))


def _bold(style: TileStyle, rng: np.random.Generator) -> TileStyle:
    """A bold print of ``style``: ripe and green fields in their own opaque colours, and outlined regions on
    half the copies (drawn after every other family's draws, which stay as they were)."""
    crops = tuple(_hsv(h, rng.uniform(0.55, 0.95), rng.uniform(0.7, 0.97))
                  for h in (rng.uniform(40, 60), rng.uniform(25, 45), rng.uniform(70, 100), rng.uniform(95, 130)))
    return replace(style, crops=crops, ink=_ink(rng) if rng.random() < 0.5 else None)


def hex_masks(size: int, radii) -> list[np.ndarray]:
    """Anti-aliased pointy-top hexagons of circumradii ``radii`` centred in a ``size`` square, ``[0, 1]``."""
    c = (size - 1) / 2.0
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    x, y = xs - c, -(ys - c)
    edge = np.zeros_like(x)
    for d in range(6):
        a = math.radians(60.0 * d)
        edge = np.maximum(edge, x * math.cos(a) + y * math.sin(a))
    return [np.clip(r * SQRT3 / 2.0 - edge + 0.5, 0.0, 1.0) for r in radii]


def terrain_labels(terrain: str, size: int, radius: float, wiggle: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Terrain index (0 sea, 1 mountain, 2 plain) of every pixel of the tile's square.

    The vote is smooth, so it is taken on a grid of at most :data:`VOTE_GRID`
    pixels across and interpolated (as log-votes) before the argmax.
    """
    n = min(size, VOTE_GRID)
    scale = size / n
    c = (n - 1) / 2.0
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    x, y = (xs - c) * scale, -(ys - c) * scale
    theta = np.arctan2(y, x)
    # t: 0 at the centre, 1 on the hexagon's rim, along the pixel's own direction.
    nearest_normal = np.radians(60.0 * np.round(np.degrees(theta) / 60.0))
    t = np.hypot(x, y) * np.cos(theta - nearest_normal) / (radius * SQRT3 / 2.0)
    inner = np.clip(1.0 - t, 0.0, 1.0) ** 1.5
    # Coarse bends make bays and headlands; fine ones roughen the coast, fading out before the rim.
    rough = np.clip((0.85 - t) / 0.25, 0.0, 1.0)
    bend = np.radians(wiggle) * (20.0 * inner * smooth_noise(rng, (n, n), 3)
                                 + 9.0 * rough * smooth_noise(rng, (n, n), 9))
    kappa = 1.5 + 400.0 * np.clip(t, 0.0, 1.2) ** 4
    votes = np.full((3, n, n), 1e-30, np.float32)
    for i in range(SECTORS):
        mid = math.radians(sector_mid_angle(i))
        votes[TERRAIN_INDEX[terrain[i]]] += np.exp(kappa * (np.cos(theta + bend - mid) - 1.0))
    log_votes = np.log(votes)
    for k in range(3):
        log_votes[k] += 1.2 * wiggle * inner * smooth_noise(rng, (n, n), 4)
    if n < size:
        log_votes = cv2.resize(log_votes.transpose(1, 2, 0), (size, size), interpolation=cv2.INTER_LINEAR)
        log_votes = log_votes.transpose(2, 0, 1)
    return np.argmax(log_votes, axis=0).astype(np.uint8)


def _map(style: TileStyle, rng: np.random.Generator) -> TileStyle:
    """A printed map's look of ``style``: flat mountains in tan, ochre or brown (more saturated than the other
    families' greyish rock) strewn with peak glyphs, and opaque ripe fields on the plains, as board-game maps
    are commonly printed."""
    rock_h, rock_s, rock_v = rng.uniform(18, 40), rng.uniform(0.2, 0.5), rng.uniform(0.55, 0.85)
    rock = (_hsv(rock_h, rock_s, rock_v), _hsv(rock_h, rock_s * 0.5, min(1.0, rock_v * 1.25)),
            _hsv(rock_h, min(1.0, rock_s * 1.3), rock_v * 0.5))
    crops = tuple(_hsv(rng.uniform(42, 60), rng.uniform(0.5, 0.85), rng.uniform(0.8, 0.97))
                  for _ in range(int(rng.integers(1, 3))))
    return replace(style, palette={**style.palette, "M": rock}, crops=crops, relief=False,
                   peaks=float(rng.uniform(0.7, 1.0)), glyph_scale=float(rng.uniform(0.5, 0.8)),
                   ink=_ink(rng) if rng.random() < 0.3 else None)


def _farmland(style: TileStyle, rng: np.random.Generator) -> TileStyle:
    """A cartoon print's look of ``style``: plains in one bright green carrying a few compact ripe fields in
    yellow to ochre (:func:`_paint_field_patches`), flat tan mountains with peak glyphs, and ink outlines on most
    copies."""
    plain_h, plain_s, plain_v = rng.uniform(70, 105), rng.uniform(0.5, 0.8), rng.uniform(0.65, 0.88)
    plain = (_hsv(plain_h, plain_s, plain_v), _hsv(plain_h - 10, plain_s * 0.9, min(1.0, plain_v * 1.1)),
             _hsv(plain_h + 15, plain_s, plain_v * 0.6))
    rock_h, rock_s, rock_v = rng.uniform(20, 38), rng.uniform(0.2, 0.45), rng.uniform(0.6, 0.85)
    rock = (_hsv(rock_h, rock_s, rock_v), _hsv(rock_h, rock_s * 0.5, min(1.0, rock_v * 1.25)),
            _hsv(rock_h, min(1.0, rock_s * 1.3), rock_v * 0.5))
    crops = tuple(_hsv(rng.uniform(40, 60), rng.uniform(0.5, 0.85), rng.uniform(0.82, 0.98))
                  for _ in range(int(rng.integers(1, 3))))
    return replace(style, palette={**style.palette, "P": plain, "M": rock}, crops=crops, relief=False,
                   peaks=float(rng.uniform(0.6, 1.0)), glyph_scale=float(rng.uniform(0.6, 0.9)),
                   ink=_ink(rng) if rng.random() < 0.7 else None, field_patches=True)


def paint_tile(terrain: str, style: TileStyle, radius: float, rng: np.random.Generator) -> tuple[np.ndarray,
                                                                                                    np.ndarray]:
    """The printed top face of one tile.

    Returns
    -------
    colour : (S, S, 3) float32 BGR in ``[0, 1]``, S = ``2·ceil(radius) + 3``.
    alpha : (S, S) float32, the anti-aliased hexagon.
    """
    size = 2 * int(math.ceil(radius)) + 3
    labels = terrain_labels(terrain, size, radius, style.wiggle, rng)
    pal = np.array([style.palette[t] for t in "SMP"], np.float32)  # (3 terrains, 3 variants, 3 channels)
    colour = pal[labels, 0].copy()
    if style.detail > 0:
        _add_detail(colour, labels, pal, style, radius, rng)
    if style.coast is not None:
        sea = (labels == 0).astype(np.uint8)
        line = cv2.dilate(sea, np.ones((3, 3), np.uint8), iterations=max(1, int(radius / 40))) - sea
        colour[line > 0] = style.coast
    if style.ink is not None:
        edges = cv2.morphologyEx(labels, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
        colour[edges] = style.ink
    if style.paper > 0:
        colour *= 1.0 + style.paper * rng.standard_normal((size, size, 1)).astype(np.float32)
    alpha, inside_rim, border_out, border_in = hex_masks(
        size, (radius, radius - max(0.8, radius / 70), radius * 0.94, radius * 0.94 - max(1.0, radius / 45)))
    if style.border is not None:
        ring = border_out - border_in
        colour = colour * (1 - ring[..., None]) + np.float32(style.border) * ring[..., None]
    # The cut cardboard edge shows as a thin lighter or darker rim.
    rim = alpha - inside_rim
    colour = colour * (1 - rim[..., None]) + np.float32(style.side) * rim[..., None]
    return np.clip(colour, 0, 1), alpha


def _bgr(colour) -> tuple[float, float, float]:
    return tuple(float(v) for v in colour)


def _add_detail(colour: np.ndarray, labels: np.ndarray, pal: np.ndarray, style: TileStyle, radius: float,
                rng: np.random.Generator) -> None:
    """Shallows and waves on sea, fields and trees on plains, ridges and peaks on mountains."""
    _paint_sea(colour, labels == 0, pal[0], style.detail, radius, rng)
    if style.field_patches:
        _paint_field_patches(colour, labels == 2, pal[2], style, radius, rng)
    else:
        _paint_plains(colour, labels == 2, pal[2], style.detail, radius, rng, style.crops)
    _paint_mountains(colour, labels == 1, pal[1], style, radius, rng)


def _inside(mask: np.ndarray, x: float, y: float) -> bool:
    h, w = mask.shape
    return 0 <= int(y) < h and 0 <= int(x) < w and bool(mask[int(y), int(x)])


def _paint_sea(colour, sea, pal, amount, radius, rng) -> None:
    """Lighter shallows along the coast, deeper water far out, and short wave strokes."""
    # An all-sea tile has no coast: its distances are "infinite"; beyond a few radii all is deep water.
    dist = np.minimum(cv2.distanceTransform(sea.astype(np.uint8), cv2.DIST_L2, 3), 4.0 * radius)
    shallow = np.exp(-dist / (0.1 * radius))[..., None] * amount
    deep = np.clip(dist / (0.6 * radius), 0, 1)[..., None] * 0.5 * amount
    mixed = colour * (1 - shallow) + pal[1] * shallow
    mixed = mixed * (1 - deep) + pal[2] * deep
    colour[sea] = mixed[sea]
    size = sea.shape[0]
    stroke = _bgr(np.minimum(pal[1] * 1.2, 1))
    width = max(1, int(round(radius / 45)))
    for _ in range(int(amount * rng.integers(2, 9))):
        cx, cy = rng.uniform(0.15, 0.85, 2) * size
        if dist[int(cy), int(cx)] < 0.12 * radius:
            continue
        half = radius * rng.uniform(0.05, 0.1)
        xs = np.linspace(cx - half, cx + half, 9)
        ys = cy - np.abs(np.sin((xs - cx) / half * np.pi)) * half * 0.3
        cv2.polylines(colour, [np.round(np.stack([xs, ys], 1) * 8).astype(np.int32)], False, stroke, width,
                      cv2.LINE_AA, shift=3)


def _paint_plains(colour, plain, pal, amount, radius, rng, crops=()) -> None:
    """A patchwork of fields (Voronoi cells in the plain's colours, or opaque in ``crops`` too) and clumps of
    trees."""
    size = plain.shape[0]
    n = min(size, VOTE_GRID)
    ys, xs = np.mgrid[0:n, 0:n].astype(np.float32)
    seeds = rng.uniform(0, n, (int(rng.integers(5, 14)), 2)).astype(np.float32)
    d = (xs[None] - seeds[:, 0, None, None]) ** 2 + (ys[None] - seeds[:, 1, None, None]) ** 2
    cell = cv2.resize(np.argmin(d, axis=0).astype(np.uint8), (size, size), interpolation=cv2.INTER_NEAREST)
    if crops:
        # A bold print's fields are opaque, in the plain's colours or the crops' own.
        choices = np.concatenate([pal, np.array(crops, np.float32)])
        tones = np.array([choices[int(rng.integers(0, len(choices)))] for _ in seeds], np.float32)
        mix = 1.0
    else:
        tones = np.array([pal[int(rng.integers(0, 3))] * rng.uniform(0.92, 1.08) for _ in seeds], np.float32)
        mix = 0.55 * amount * rng.uniform(0.3, 1.0)
    tones = np.clip(tones, 0, 1)
    fields = colour * (1 - mix) + tones[cell] * mix
    # Hedges or furrows between fields: where the nearest two seeds are almost equally near.
    two = np.sqrt(np.partition(d, 1, axis=0)[:2])
    margin = cv2.resize(two[1] - two[0], (size, size), interpolation=cv2.INTER_LINEAR) * (size / n)
    hedge = (margin < max(1.0, radius / 60))[..., None] * 0.12 * amount
    fields = fields * (1 - hedge)
    colour[plain] = fields[plain]
    dark, light = _bgr(pal[2] * 0.45), _bgr(np.minimum(pal[2] * 0.85, 1))
    for _ in range(int(amount * rng.integers(0, 5))):
        cx, cy = rng.uniform(0.15, 0.85, 2) * size
        for _ in range(int(rng.integers(1, 7))):
            x, y = cx + rng.normal(0, radius * 0.07), cy + rng.normal(0, radius * 0.07)
            r = radius * rng.uniform(0.035, 0.06)
            if _inside(plain, x, y) and _inside(plain, x + r, y + r) and _inside(plain, x - r, y - r):
                cv2.circle(colour, (int(x * 8), int(y * 8)), int(r * 8), dark, -1, cv2.LINE_AA, shift=3)
                cv2.circle(colour, (int((x - r / 3) * 8), int((y - r / 3) * 8)), int(r * 4), light, -1, cv2.LINE_AA,
                           shift=3)


def _paint_field_patches(colour, plain, pal, style: TileStyle, radius, rng) -> None:
    """Up to three compact fields in the crops' colours on the plain, each a rounded blob of 0.15–0.35 tile radii
    from its middle (about a piece's size), outlined in ink where the print has ink, and dotted with trees."""
    size = plain.shape[0]
    room = cv2.distanceTransform(plain.astype(np.uint8), cv2.DIST_L2, 3)
    trees = _bgr(pal[2] * 0.55)
    wanted, tries = int(rng.integers(0, 4)), 0
    while wanted and tries < 12:
        tries += 1
        x, y = size / 2.0 + rng.uniform(-0.7, 0.7, 2) * radius
        across = radius * rng.uniform(0.15, 0.35)
        if not _inside(plain, x, y) or room[int(y), int(x)] < across * 0.5:
            continue
        wanted -= 1
        blob = np.zeros((size, size), np.uint8)
        for _ in range(2):  # two overlapping ellipses: a rounded, irregular field
            cx, cy = x + rng.normal(0, across * 0.25), y + rng.normal(0, across * 0.25)
            axes = (int(across * rng.uniform(0.6, 1.0) * 8), int(across * rng.uniform(0.4, 0.8) * 8))
            cv2.ellipse(blob, (int(cx * 8), int(cy * 8)), axes, float(rng.uniform(0, 180)), 0, 360, 1, -1,
                        cv2.LINE_AA, shift=3)
        blob &= plain.astype(np.uint8)
        colour[blob > 0] = style.crops[int(rng.integers(0, len(style.crops)))]
        if style.ink is not None:
            edge = cv2.morphologyEx(blob, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
            colour[edge & plain] = style.ink
        for _ in range(int(rng.integers(0, 5))):
            tx, ty = x + rng.normal(0, across * 0.5), y + rng.normal(0, across * 0.5)
            r = radius * rng.uniform(0.02, 0.035)
            if _inside(plain, tx, ty):
                cv2.circle(colour, (int(tx * 8), int(ty * 8)), int(r * 8), trees, -1, cv2.LINE_AA, shift=3)


def _paint_mountains(colour, mountain, pal, style: TileStyle, radius, rng) -> None:
    """A hill-shaded relief: rising from the mountain's foot to ridges along its middle, lit from the upper left.

    The height is the distance from the foot (so ridges follow the middle of
    each range) roughened by ridged noise; high ground may carry snow; some
    prints add drawn peaks where the range has room. A print without
    ``relief`` keeps the flat colour and draws only the peaks.
    """
    amount = style.detail
    size = mountain.shape[0]
    room = cv2.distanceTransform(mountain.astype(np.uint8), cv2.DIST_L2, 3)
    if not room.any():
        return
    if style.relief:
        ridged = 1.0 - np.abs(0.7 * smooth_noise(rng, (size, size), 6) + 0.3 * smooth_noise(rng, (size, size), 13))
        height = np.minimum(room / (0.35 * radius), 1.0) ** 0.7 * (0.45 + 0.55 * ridged) * radius * 0.35 * amount
        gy, gx = np.gradient(height)
        lambert = (-gx * -0.6 + -gy * -0.6 + 0.55) / np.sqrt(gx * gx + gy * gy + 1.0)  # light from up-left (y down)
        shade = np.clip(0.45 + lambert / 0.55 * 0.55, 0.45, 1.45)[..., None]
        rock = colour * shade
        if rng.random() < 0.45 * amount:
            top = height > np.quantile(height[mountain], 0.75)
            rock[top] = rock[top] * 0.3 + np.float32(0.95) * 0.7 * shade[top]
        colour[mountain] = rock[mountain]
    if rng.random() < style.peaks:
        _draw_peaks(colour, room, pal, amount, radius, rng, style.glyph_scale)


def _draw_peaks(colour, room, pal, amount, radius, rng, scale) -> None:
    """Printed peak glyphs (a lit and a shaded flank) where the range has room for them; glyphs ``scale`` times
    the usual size come ``1 / scale²`` times as many."""
    size = room.shape[0]
    lit, dark = _bgr(pal[1]), _bgr(pal[2])
    snow = _bgr(np.full(3, 0.93)) if rng.random() < 0.5 else None
    for _ in range(int(amount * rng.integers(1, 8) / scale ** 2)):
        x, y = rng.uniform(0.15, 0.85, 2) * size
        h = radius * rng.uniform(0.12, 0.22) * scale
        if not _inside(room, x, y) or room[int(y), int(x)] < h * 0.8:
            continue
        w = h * rng.uniform(0.6, 0.9)
        top = (x + rng.normal(0, w * 0.1), y - h)
        left = np.array([(x - w, y), top, (x, y)]) * 8
        right = np.array([(x, y), top, (x + w, y)]) * 8
        cv2.fillPoly(colour, [np.round(left).astype(np.int32)], lit, cv2.LINE_AA, shift=3)
        cv2.fillPoly(colour, [np.round(right).astype(np.int32)], dark, cv2.LINE_AA, shift=3)
        if snow is not None:
            cap = np.array([(top[0] - w * 0.3, top[1] + h * 0.3), top, (top[0] + w * 0.3, top[1] + h * 0.3)]) * 8
            cv2.fillPoly(colour, [np.round(cap).astype(np.int32)], snow, cv2.LINE_AA, shift=3)
