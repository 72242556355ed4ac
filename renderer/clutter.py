"""Things beside and over the board: a box lid, cards, a cup, dice, and players' arms."""

from __future__ import annotations

import math

import numpy as np

from renderer.mesh import Face, circle, prism
from renderer.pieces import block

SKIN_BGR = ((180, 200, 235), (140, 170, 215), (100, 135, 190), (60, 90, 140), (45, 65, 100))


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


def hand_polygons(count: int, board_px: np.ndarray, canvas_size: tuple[int, int],
                  rng: np.random.Generator) -> list[tuple[tuple[float, float, float], np.ndarray]]:
    """``(BGR colour, canvas polygon)`` of sleeves and arms reaching from a frame edge over the board."""
    w, h = canvas_size
    span = float(np.max(board_px.max(0) - board_px.min(0)))
    polygons = []
    for _ in range(count):
        reach_to = board_px[rng.integers(len(board_px))] + rng.normal(0, 0.05 * span, 2)
        edge = int(rng.integers(4))
        along = rng.uniform(0.2, 0.8)
        start = np.array([(along * w, h + 50), (along * w, -50), (-50, along * h), (w + 50, along * h)][edge])
        width = rng.uniform(0.07, 0.11) * span
        direction = reach_to - start
        length = float(np.linalg.norm(direction))
        if length < 1:
            continue
        direction /= length
        normal = np.array([-direction[1], direction[0]])
        skin = tuple(float(c) + rng.normal(0, 8) for c in SKIN_BGR[rng.integers(len(SKIN_BGR))])
        arm = np.array([start + normal * width / 2, reach_to + normal * width / 2,
                        reach_to - normal * width / 2, start - normal * width / 2])
        hand = reach_to + direction * width * 0.6 + np.stack(
            [np.cos(a) * direction * width * 0.9 + np.sin(a) * normal * width * 0.7
             for a in np.linspace(0, 2 * math.pi, 24, endpoint=False)])
        polygons.append((skin, arm))
        polygons.append((skin, hand))
        sleeve_end = start + direction * length * rng.uniform(0.3, 0.7)
        sleeve = np.array([start + normal * width * 0.7, sleeve_end + normal * width * 0.7,
                           sleeve_end - normal * width * 0.7, start - normal * width * 0.7])
        polygons.append((tuple(float(c) for c in rng.uniform(20, 220, 3)), sleeve))
    return polygons
