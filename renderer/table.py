"""Table surfaces: wood, cloth, laminate and felt, textured in world millimetres.

A table is a tileable texture (:func:`table_texture`) looked up through the
world position of every canvas pixel, so grain and weave recede in true
perspective at any camera angle.
"""

from __future__ import annotations

import cv2
import numpy as np

from renderer.noise import fractal_noise, periodic_noise

TEXTURE_PX = 512


def table_texture(kind: str, rgb, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """A tileable BGR float texture of the table and the millimetres one texture pixel covers."""
    base = np.array(rgb[::-1], np.float32) / 255.0
    n = TEXTURE_PX
    if kind == "wood":
        grain = fractal_noise(rng, n, 6.0, 3, stretch=12.0)
        rings = np.sin(grain * rng.uniform(3, 8) + periodic_noise(rng, n, 30.0, 4.0) * 2.0)
        planks = np.ones((n, n), np.float32)
        for y in range(0, n, n // int(rng.integers(2, 5))):
            planks[y:y + 2] = 0.55
        tone = 1.0 + 0.12 * rings + 0.06 * grain
        tex = base[None, None] * (tone * planks)[..., None]
        mm_per_px = float(rng.uniform(0.5, 1.0))
    elif kind == "cloth":
        weave = np.indices((n, n)).sum(axis=0) % 2 * 2.0 - 1.0
        tex = base[None, None] * (1.0 + 0.05 * weave + 0.06 * periodic_noise(rng, n, 20.0))[..., None]
        mm_per_px = float(rng.uniform(0.25, 0.5))
    elif kind == "felt":
        tex = base[None, None] * (1.0 + 0.08 * fractal_noise(rng, n, 2.0, 2) + 0.05 * periodic_noise(rng, n, 40.0)
                                  )[..., None]
        mm_per_px = float(rng.uniform(0.3, 0.6))
    else:  # laminate: near-uniform with a fine speckle
        tex = base[None, None] * (1.0 + 0.03 * fractal_noise(rng, n, 1.5, 2) + 0.03 * periodic_noise(rng, n, 60.0)
                                  )[..., None]
        mm_per_px = float(rng.uniform(0.5, 1.0))
    return np.clip(tex, 0, 1).astype(np.float32), mm_per_px


def draw_table(world_xy: np.ndarray, texture: np.ndarray, mm_per_px: float) -> np.ndarray:
    """The table seen at every canvas pixel, given each pixel's world ``(X, Y)`` on the table plane."""
    size = texture.shape[0]
    map_x = np.mod(world_xy[..., 0] / mm_per_px, size).astype(np.float32)
    map_y = np.mod(-world_xy[..., 1] / mm_per_px, size).astype(np.float32)
    return cv2.remap(texture, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
