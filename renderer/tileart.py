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
from dataclasses import dataclass, field

import cv2
import numpy as np

from fjords.geometry import SECTORS, sector_mid_angle
from renderer.noise import smooth_noise

TERRAIN_INDEX = {"S": 0, "M": 1, "P": 2}
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
    extra: dict = field(default_factory=dict)


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
    "dark": dict(sat=(0.4, 0.65), val=(0.35, 0.55), wiggle=1.0, detail=0.8, coast=0.6, border=0.5, gloss=0.2),
}
STYLES: tuple[str, ...] = tuple(_FAMILIES)


def sample_style(name: str, rng: np.random.Generator) -> TileStyle:
    """A member of the family ``name`` with its own palette and finish."""
    fam = _FAMILIES[name]
    sat = lambda: rng.uniform(*fam["sat"])  # noqa: E731 - a fresh draw per colour
    val = lambda: rng.uniform(*fam["val"])  # noqa: E731
    warm = fam.get("warm", False)
    sea_h = rng.uniform(185, 225) - (15 if warm else 0)
    plain_h = rng.uniform(55, 120) - (15 if warm else 0)
    rock_h = rng.choice([rng.uniform(20, 45), rng.uniform(200, 260)])
    rock_s = rng.uniform(0.05, 0.3) * (1.3 if name == "saturated" else 1.0)
    palette = {
        "S": (_hsv(sea_h, sat(), val()), _hsv(sea_h - 15, sat() * 0.7, min(1, val() * 1.15)),
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
    return TileStyle(name, palette, wiggle=fam["wiggle"] * rng.uniform(0.7, 1.2),
                     detail=fam["detail"] * rng.uniform(0.6, 1.0), coast=coast, border=border,
                     paper=rng.uniform(0.01, 0.05), gloss=fam["gloss"] * rng.uniform(0.5, 1.0), side=side)


def hex_mask(size: int, radius: float) -> np.ndarray:
    """Anti-aliased pointy-top hexagon of circumradius ``radius`` centred in a ``size`` square, ``[0, 1]``."""
    c = (size - 1) / 2.0
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    x, y = xs - c, -(ys - c)
    inradius = radius * SQRT3 / 2.0
    edge = np.zeros_like(x)
    for d in range(6):
        a = math.radians(60.0 * d)
        edge = np.maximum(edge, x * math.cos(a) + y * math.sin(a))
    return np.clip(inradius - edge + 0.5, 0.0, 1.0)


def terrain_labels(terrain: str, size: int, radius: float, wiggle: float,
                   rng: np.random.Generator) -> np.ndarray:
    """Terrain index (0 sea, 1 mountain, 2 plain) of every pixel of the tile's square."""
    c = (size - 1) / 2.0
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    x, y = xs - c, -(ys - c)
    theta = np.arctan2(y, x)
    # t: 0 at the centre, 1 on the hexagon's rim, along the pixel's own direction.
    nearest_normal = np.radians(60.0 * np.round(np.degrees(theta) / 60.0))
    t = np.hypot(x, y) * np.cos(theta - nearest_normal) / (radius * SQRT3 / 2.0)
    inner = np.clip(1.0 - t, 0.0, 1.0)
    bend = np.radians(25.0) * wiggle * inner * smooth_noise(rng, (size, size), 3)
    kappa = 1.5 + 400.0 * np.clip(t, 0.0, 1.2) ** 4
    votes = np.zeros((3, size, size), np.float32)
    for i in range(SECTORS):
        mid = math.radians(sector_mid_angle(i))
        votes[TERRAIN_INDEX[terrain[i]]] += np.exp(kappa * (np.cos(theta + bend - mid) - 1.0))
    for k in range(3):
        votes[k] *= np.exp(1.2 * wiggle * inner * smooth_noise(rng, (size, size), 4))
    return np.argmax(votes, axis=0).astype(np.uint8)


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
    if style.paper > 0:
        colour *= 1.0 + style.paper * rng.standard_normal((size, size, 1)).astype(np.float32)
    alpha = hex_mask(size, radius)
    if style.border is not None:
        ring = hex_mask(size, radius * 0.94) - hex_mask(size, radius * 0.94 - max(1.0, radius / 45))
        colour = colour * (1 - ring[..., None]) + np.float32(style.border) * ring[..., None]
    # The cut cardboard edge shows as a thin lighter or darker rim.
    rim = alpha - hex_mask(size, radius - max(0.8, radius / 70))
    colour = colour * (1 - rim[..., None]) + np.float32(style.side) * rim[..., None]
    return np.clip(colour, 0, 1), alpha


def _add_detail(colour: np.ndarray, labels: np.ndarray, pal: np.ndarray, style: TileStyle, radius: float,
                rng: np.random.Generator) -> None:
    """Shallows and waves on sea, field patches and trees on plains, relief and peaks on mountains."""
    size = labels.shape[0]
    amount = style.detail
    sea = labels == 0
    # Shallows: lighter water near the coast.
    dist = cv2.distanceTransform(sea.astype(np.uint8), cv2.DIST_L2, 3)
    shallow = np.exp(-dist / (0.12 * radius))[..., None] * amount
    colour[sea] = (colour * (1 - shallow) + pal[0, 1] * shallow)[sea]
    deep = np.clip(dist / (0.6 * radius), 0, 1)[..., None] * 0.5 * amount
    colour[sea] = (colour * (1 - deep) + pal[0, 2] * deep)[sea]
    for _ in range(int(amount * rng.integers(2, 7))):
        cx, cy = rng.uniform(0.2, 0.8, 2) * size
        if sea[int(cy), int(cx)]:
            half = radius * rng.uniform(0.05, 0.1)
            pts = np.array([[cx - half, cy], [cx - half / 2, cy - half / 3], [cx, cy], [cx + half / 2, cy - half / 3],
                            [cx + half, cy]], np.int32)
            cv2.polylines(colour, [pts], False, tuple(float(v) for v in pal[0, 1] * 1.15), max(1, int(radius / 50)),
                          cv2.LINE_AA)
    plain = labels == 2
    patches = smooth_noise(rng, (size, size), 5)
    for level, variant in ((0.35, 1), (-0.45, 2)):
        patch = (patches > level) if level > 0 else (patches < level)
        mix = 0.6 * amount
        sel = plain & patch
        colour[sel] = colour[sel] * (1 - mix) + pal[2, variant] * mix
    tree = tuple(float(v) for v in pal[2, 2] * 0.6)
    for _ in range(int(amount * rng.integers(0, 14))):
        x, y = rng.uniform(0.1, 0.9, 2) * size
        if plain[int(y), int(x)]:
            cv2.circle(colour, (int(x), int(y)), max(1, int(radius * rng.uniform(0.03, 0.06))), tree, -1, cv2.LINE_AA)
    mountain = labels == 1
    relief = smooth_noise(rng, (size, size), 6)
    shade = np.clip(1.0 + 0.25 * amount * np.gradient(relief, axis=1) * size / 6, 0.7, 1.3)[..., None]
    colour[mountain] = (colour * shade)[mountain]
    for _ in range(int(amount * rng.integers(0, 6))):
        x, y = rng.uniform(0.2, 0.8, 2) * size
        if mountain[int(y), int(x)]:
            h = radius * rng.uniform(0.1, 0.2)
            w = h * rng.uniform(0.6, 1.0)
            top = (int(x), int(y - h))
            cv2.fillPoly(colour, [np.array([(int(x - w), int(y)), top, (int(x), int(y))], np.int32)],
                         tuple(float(v) for v in pal[1, 1]), cv2.LINE_AA)
            cv2.fillPoly(colour, [np.array([(int(x), int(y)), top, (int(x + w), int(y))], np.int32)],
                         tuple(float(v) for v in pal[1, 2]), cv2.LINE_AA)
