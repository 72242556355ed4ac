"""Things beside the board: a box lid, cards, a cup, dice."""

from __future__ import annotations

import math

import numpy as np

from renderer.mesh import Face, circle, prism
from renderer.pieces import block

def clutter_faces(kinds, board_centre: np.ndarray, board_radius: float,
                  rng: np.random.Generator) -> list[list[Face]]:
    """One mesh per object, standing on the table just beyond the board."""
    meshes = []
    for kind in kinds:
        angle = rng.uniform(0, 2 * math.pi)
        reach = board_radius + {"box_lid": 190.0, "cup": 70.0}.get(kind, 30.0) + rng.uniform(0, 60)
        at = np.array([*(board_centre + reach * np.array([math.cos(angle), math.sin(angle)])), 0.0])
        yaw = float(rng.uniform(0, 360))
        colour = rng.uniform(0.1, 0.9, 3)
        if kind == "box_lid":
            meshes.append(block(at, yaw, colour, (rng.uniform(220, 300), rng.uniform(220, 300), 40.0)))
        elif kind == "cards":
            for n in range(int(rng.integers(1, 5))):
                offset = rng.normal(0, 20, 3) * [1, 1, 0] + [0, 0, 0.4 * n]
                meshes.append(block(at + offset, yaw + rng.normal(0, 20), rng.uniform(0.6, 0.95, 3),
                                    (88.0, 63.0, 0.4)))
        elif kind == "cup":
            meshes.append(prism(circle(rng.uniform(35, 45), 28), rng.uniform(80, 100), at, [1, 0, 0], [0, 1, 0],
                                colour, 0.4, cap_albedo=colour * 0.35))
        else:  # dice
            for _ in range(int(rng.integers(1, 4))):
                die = at + rng.normal(0, 25, 3) * [1, 1, 0]
                meshes.append(block(die, float(rng.uniform(0, 360)), [0.92, 0.92, 0.9] if rng.random() < 0.5
                                    else [0.15, 0.15, 0.75], (16.0, 16.0, 16.0)))
    return meshes
