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
        planks = int(rng.integers(2, 6))
        row = np.arange(n) * planks // n
        grain = fractal_noise(rng, n, 5.0, 3, stretch=float(rng.uniform(8, 20)))
        # Each plank has its own tone and its own stretch of grain (rolled along its length).
        tone = 1.0 + rng.normal(0, 0.07, planks)[row][:, None]
        rolled = np.stack([np.roll(grain[y], int(row[y]) * n // 3) for y in range(n)])
        rings = np.sin(rolled * rng.uniform(3, 9) + periodic_noise(rng, n, 40.0, 6.0) * 2.5)
        seams = np.ones(n, np.float32)
        seams[(np.arange(n) * planks) % n < planks] = 0.5
        tex = base[None, None] * ((tone + 0.1 * rings + 0.05 * rolled) * seams[:, None])[..., None]
        mm_per_px = float(rng.uniform(0.5, 1.0))
    elif kind == "cloth":
        weave = (np.indices((n, n)).sum(axis=0) % 2 * 2.0 - 1.0) * 0.04
        pattern = np.ones((n, n), np.float32)
        if rng.random() < 0.35:  # gingham: darker bands both ways
            bands = (np.arange(n) // int(rng.choice([16, 32, 64]))) % 2
            pattern = 1.0 - 0.25 * (bands[:, None] + bands[None, :])
        wrinkles = 0.05 * periodic_noise(rng, n, float(rng.uniform(20, 60)))
        tex = base[None, None] * (pattern * (1.0 + weave + wrinkles))[..., None]
        mm_per_px = float(rng.uniform(0.2, 0.4))
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
