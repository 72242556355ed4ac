"""Where things lie on the table: each tile's jittered pose and where each piece stands.

World frame in millimetres: ``X`` east, ``Y`` north, ``Z`` up (see :mod:`renderer.camera`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from fjords import Board, Hex
from fjords.geometry import corner_angle, segment_of
from renderer.scene import Scene

SQRT3 = math.sqrt(3.0)


@dataclass(frozen=True)
class TilePose:
    """Where a tile lies on the table: centre (world mm) and turn (degrees counter-clockwise)."""

    centre: np.ndarray
    turn_deg: float

    def rim_point(self, angle_deg: float, radius: float, z: float) -> np.ndarray:
        a = math.radians(angle_deg + self.turn_deg)
        return np.array([self.centre[0] + radius * math.cos(a), self.centre[1] + radius * math.sin(a), z])

    def corners(self, radius: float, z: float) -> np.ndarray:
        return np.array([self.rim_point(corner_angle(k), radius, z) for k in range(6)])


def lattice_centre(h: Hex, spacing: float) -> np.ndarray:
    """World centre of lattice position ``h`` (north is up, so world Y is minus the spec's image y)."""
    x, y = h.pixel_center(spacing)
    return np.array([x, -y])


def layout(board: Board, scene: Scene, rng: np.random.Generator) -> dict[Hex, TilePose]:
    """Each tile's jittered pose; the lattice spacing leaves ``gap_mm`` between parallel edges."""
    spacing = scene.tile_radius_mm + scene.gap_mm / SQRT3
    poses = {}
    for h in sorted(board.tiles):
        offset = rng.normal(0, scene.jitter_mm / 2, 2).clip(-scene.jitter_mm, scene.jitter_mm)
        turn = float(np.clip(rng.normal(0, scene.jitter_deg / 2), -scene.jitter_deg, scene.jitter_deg))
        poses[h] = TilePose(lattice_centre(h, spacing) + offset, turn)
    return poses


def piece_base(piece, tile_terrain: str | None, pose: TilePose | None, spacing: float, radius: float,
               top_z: float, rng: np.random.Generator) -> np.ndarray:
    """Where a piece stands: anywhere well inside its sector's segment, or at an empty position's centre.

    A segment of ``n`` sectors starting at sector ``i`` spans the rim angles
    ``30·i − 30`` to ``30·(i + n) − 30``; plains reach furthest in near the
    rim, so short segments keep their pieces further out.
    """
    if pose is None or piece.sector is None:
        return np.append(lattice_centre(piece.hex, spacing), 0.0) if pose is None else pose.rim_point(0, 0, top_z)
    run = segment_of(tile_terrain, piece.sector) if tile_terrain[piece.sector] == "P" else None
    run = run or (piece.sector,)
    start = 30.0 * run[0] - 30.0
    angle = rng.uniform(start + 8.0, start + 30.0 * len(run) - 8.0)
    if len(run) >= 10:
        reach = rng.uniform(0.0, 0.5)
    else:
        reach = rng.uniform(0.5, 0.65) if len(run) <= 2 else rng.uniform(0.38, 0.6)
    return pose.rim_point(angle, reach * radius, top_z)
