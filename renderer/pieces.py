"""Wooden pieces as prisms: farms and longhouses, field discs and blocks, Viking meeples, rune stones.

Sizes are millimetres, close to the boxed games'. Copies differ: a reprint or a
home-made set may use plain bars for houses and pieces a little larger or
smaller, so a scene draws a house shape and a scale (``Scene.house_shape``,
``Scene.piece_scale``). Paint colours are named as the spec names player
colours; each photo varies them like real paint on wood.
"""

from __future__ import annotations

import colorsys
import math

import numpy as np

from renderer.mesh import Face, circle, prism

# Paint of each named colour, RGB 0..255 (overridable per player by ``colours``).
PAINTS: dict[str, tuple[int, int, int]] = {
    "red": (190, 30, 35), "yellow": (240, 200, 40), "blue": (30, 80, 185), "black": (28, 28, 30),
    "white": (235, 232, 222), "green": (40, 140, 60), "grey": (128, 128, 130), "beige": (215, 195, 150),
    "brown": (120, 75, 40), "orange": (240, 120, 30), "purple": (110, 50, 140),
}
STONE_RGB = (135, 135, 128)


def paint_albedo(rgb, rng: np.random.Generator, vary: bool = True) -> np.ndarray:
    """BGR albedo in ``[0, 1]`` of a paint, shifted in hue, saturation and value like real batches."""
    r, g, b = (c / 255.0 for c in rgb)
    if vary:
        h, s, v = colorsys.rgb_to_hsv(r, g, b)
        h = (h + rng.normal(0, 0.012)) % 1.0
        s = min(1.0, max(0.0, s * rng.uniform(0.85, 1.1)))
        v = min(1.0, max(0.02, v * rng.uniform(0.85, 1.1)))
        r, g, b = colorsys.hsv_to_rgb(h, s, v)
    return np.array([b, g, r])


def _frame(yaw_deg: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Horizontal forward, horizontal side and up axes of a piece turned ``yaw_deg``."""
    a = math.radians(yaw_deg)
    return np.array([math.cos(a), math.sin(a), 0.0]), np.array([-math.sin(a), math.cos(a), 0.0]), np.array(
        [0.0, 0.0, 1.0])


HOUSE_SHAPES = ("roof", "bar")
#: Settler shapes of the classic edition's copies (the 2022 edition has meeples).
CLASSIC_SETTLER_SHAPES = ("disc", "block")
BAR_HOUSE_MM = (15.0, 7.5, 7.5)  # length, width, height of a house cut as a plain wooden bar


def house(base, yaw_deg: float, albedo, edition: str, scale: float = 1.0, shape: str = "roof") -> list[Face]:
    """A farm (classic: short, steep roof), a longhouse (2022: long, low curved roof line), or a plain bar."""
    if shape == "bar":
        return block(base, yaw_deg, albedo, tuple(d * scale for d in BAR_HOUSE_MM))
    if edition == "2022":
        length, width, wall, ridge = 16.0, 8.0, 5.0, 9.0
        gable = [(-width / 2, 0), (width / 2, 0), (width / 2, wall), (width / 4, ridge - 1), (0, ridge),
                 (-width / 4, ridge - 1), (-width / 2, wall)]
    else:
        length, width, wall, ridge = 12.0, 9.0, 6.0, 11.0
        gable = [(-width / 2, 0), (width / 2, 0), (width / 2, wall), (0, ridge), (-width / 2, wall)]
    fwd, side, up = _frame(yaw_deg)
    origin = np.asarray(base, float) - fwd * length * scale / 2
    outline = np.array(gable) * scale
    # The gable lies in the (side, up) plane and is pushed along side × up = forward.
    return prism(outline, length * scale, origin, side, up, albedo, shine=0.15)


def settler(base, yaw_deg: float, albedo, edition: str, scale: float = 1.0) -> list[Face]:
    """A classic field (a flat disc or a small block) or a 2022 Viking meeple."""
    fwd, side, up = _frame(yaw_deg)
    base = np.asarray(base, float)
    if edition == "2022":
        return prism(_meeple_outline() * scale, 5.0 * scale, base - fwd * 2.5 * scale, side, up, albedo, 0.15)
    outline = circle(5.0 * scale, 20)
    return prism(outline, 5.0 * scale, base, fwd, side, albedo, 0.15)


def block(base, yaw_deg: float, albedo, size=(9.0, 9.0, 6.0)) -> list[Face]:
    """A box ``size`` (length, width, height) standing on ``base``."""
    fwd, side, up = _frame(yaw_deg)
    length, width, height = size
    rect = np.array([(-length / 2, -width / 2), (length / 2, -width / 2), (length / 2, width / 2),
                     (-length / 2, width / 2)])
    return prism(rect, height, np.asarray(base, float), fwd, side, albedo, 0.1)


def _meeple_outline() -> np.ndarray:
    """A Viking meeple's silhouette (horned helmet, arms, legs), 16 mm tall, counter-clockwise."""
    pts = [(-5.5, 0), (-1.2, 0), (0, 3.5), (1.2, 0), (5.5, 0), (4.0, 6.5), (7.0, 8.5), (6.5, 10.5), (2.5, 10.5)]
    head = [(2.8 * math.cos(a), 12.8 + 2.8 * math.sin(a)) for a in np.linspace(-0.9, math.pi + 0.9, 9)]
    horns = [(2.2, 15.0), (3.6, 17.0), (1.0, 15.7)]
    return np.array(pts + head[:5] + horns + head[5:] + [(-2.5, 10.5), (-6.5, 10.5), (-7.0, 8.5), (-4.0, 6.5)])


def runestone(base, yaw_deg: float, albedo) -> list[Face]:
    """An upright slab with a rounded top, 14 mm tall."""
    fwd, side, up = _frame(yaw_deg)
    arc = [(3.5 * math.cos(a), 10.5 + 3.5 * math.sin(a)) for a in np.linspace(0, math.pi, 8)]
    outline = np.array([(-3.5, 0.0), (3.5, 0.0)] + arc)
    return prism(outline, 3.0, np.asarray(base, float) - fwd * 1.5, side, up, albedo, 0.05)


CROWN_HEIGHT_MM = {"house": 10.0, "settler": 5.0, "runestone": 14.0}  # where the truth puts a piece's top


def crown_height_mm(kind: str, house_shape: str = "roof", scale: float = 1.0) -> float:
    """Height above its foot of the top point the truth records for a piece (rune stones are never scaled)."""
    if kind == "runestone":
        return CROWN_HEIGHT_MM[kind]
    if kind == "house" and house_shape == "bar":
        return BAR_HOUSE_MM[2] * scale
    return CROWN_HEIGHT_MM[kind] * scale


def piece_faces(kind: str, edition: str, base, yaw_deg: float, albedo, settler_shape: str = "disc",
                house_shape: str = "roof", scale: float = 1.0) -> list[Face]:
    """Faces of a piece of ``kind`` standing at ``base`` (world mm); houses and settlers sized by ``scale``."""
    if kind == "house":
        return house(base, yaw_deg, albedo, edition, scale, house_shape)
    if kind == "runestone":
        return runestone(base, yaw_deg, albedo)
    if edition == "classic" and settler_shape == "block":
        return block(base, yaw_deg, albedo, (8.0 * scale, 8.0 * scale, 5.0 * scale))
    return settler(base, yaw_deg, albedo, edition, scale)
