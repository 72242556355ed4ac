"""The truth document of a render: the board's ``fjords-board/1`` JSON plus where everything is in the photo."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from fjords import Board, Hex
from fjords.geometry import SECTORS
from renderer.camera import Camera
from renderer.layout import SQRT3, TilePose
from renderer.mesh import Light
from renderer.scene import Scene
from renderer.tileart import TileStyle

if TYPE_CHECKING:
    from renderer.compose import Canvas


def rim_distance(angle_deg: float, radius: float) -> float:
    """Distance from a hexagon's centre to its rim at ``angle_deg`` (tile frame; corners at ``30 + 60k``°), for a
    hexagon of circumradius ``radius``."""
    return radius * SQRT3 / 2 / math.cos(math.radians((angle_deg + 30) % 60 - 30))


def face_samples(pose: TilePose, radius: float, z: float) -> np.ndarray:
    """49 points spread over a tile's top face: its centre and four rings of twelve, the last on the rim."""
    pts = [pose.rim_point(0, 0, z)]
    for ring in (0.35, 0.65, 0.9, 1.0):
        pts += [pose.rim_point(a, rim_distance(a, ring * radius), z) for a in range(0, 360, 30)]
    return np.array(pts)


def sector_samples(pose: TilePose, radius: float, z: float, sector: int) -> np.ndarray:
    """12 points spread over sector ``sector`` of a tile's top face (the spec's triangle from the centre to the rim
    between ``30·sector − 30`` and ``30·sector`` degrees): four angles across it at three distances out to the rim."""
    pts = []
    for a in 30.0 * sector - 30.0 + np.array([3.75, 11.25, 18.75, 26.25]):
        rim = rim_distance(a, radius)
        pts += [pose.rim_point(a, ring * rim, z) for ring in (0.4, 0.7, 0.95)]
    return np.array(pts)


def visible_fraction(camera: Camera, canvas: "Canvas", points: np.ndarray, hand_mask: np.ndarray) -> float:
    """Share of world ``points`` inside the frame and not under a hand."""
    photo = camera.project(points)
    inside = (photo[:, 0] >= -0.5) & (photo[:, 0] <= camera.width - 0.5) & (photo[:, 1] >= -0.5) & (
        photo[:, 1] <= camera.height - 0.5)
    ideal = np.round(canvas.project(points)).astype(int)
    hh, ww = hand_mask.shape
    ok = (ideal[:, 0] >= 0) & (ideal[:, 0] < ww) & (ideal[:, 1] >= 0) & (ideal[:, 1] < hh)
    covered = np.zeros(len(points), bool)
    covered[ok] = hand_mask[ideal[ok, 1], ideal[ok, 0]] > 0.5
    return float(np.mean(inside & ~covered))


def rounded(points: np.ndarray) -> list:
    return np.round(points, 2).tolist()


def truth_document(board: Board, scene: Scene, style: TileStyle, camera: Camera, canvas: "Canvas",
           poses: dict[Hex, TilePose], piece_truth: list, hand_mask: np.ndarray, light: Light, width: int,
           height: int) -> dict:
    s, top = scene.tile_radius_mm, scene.tile_thickness_mm
    doc = board.to_json()
    for tile in doc["tiles"]:
        pose = poses[Hex(tile["q"], tile["r"])]
        tile["center_px"] = rounded(camera.project(pose.rim_point(0, 0, top)))
        tile["corners_px"] = rounded(camera.project(pose.corners(s, top)))
        tile["visible"] = round(visible_fraction(camera, canvas, face_samples(pose, s, top), hand_mask), 3)
        # Per sector as well: a hand or the frame hides sectors, not tiles, and the spec asks that a hidden sector
        # be written `?` (docs/renderer.md).
        tile["sector_visible"] = [round(visible_fraction(camera, canvas, sector_samples(pose, s, top, i), hand_mask), 3)
                                  for i in range(SECTORS)]
        tile["rotation_deg"] = round(pose.turn_deg, 3)
    for piece, (base, crown, faces) in zip(doc["pieces"], piece_truth):
        vertices = camera.project(np.concatenate([f.points for f in faces]))
        lo = np.clip(vertices.min(0), 0, [width - 1, height - 1])
        hi = np.clip(vertices.max(0), 0, [width - 1, height - 1])
        piece["base_px"] = rounded(camera.project(base))
        piece["center_px"] = rounded(camera.project(crown))
        piece["bbox_px"] = rounded(np.concatenate([lo, hi]))
        corners = np.concatenate([f.points for f in faces])
        piece["visible"] = round(visible_fraction(camera, canvas, np.concatenate([corners, [base, crown]]),
                                                   hand_mask), 3)
    doc["image"] = {"file": None, "width": width, "height": height}
    doc["style"] = scene.style
    doc["camera"] = {"elevation_deg": scene.elevation_deg, "azimuth_deg": scene.azimuth_deg,
                     "roll_deg": scene.roll_deg, "focal_mm": scene.focal_mm, "k1": scene.k1, "k2": scene.k2,
                     "position_mm": rounded(camera.position), "focal_px": round(camera.focal_px, 3)}
    doc["lights"] = {"key_direction": rounded(light.direction), "key_bgr": rounded(light.key),
                     "ambient_bgr": rounded(light.ambient), "kelvin": scene.kelvin, "glare": scene.glare}
    doc["players"] = list(board.players)
    doc["physical"] = {"tile_circumradius_mm": s, "tile_thickness_mm": top, "gap_mm": scene.gap_mm}
    doc["render"] = {"scene": scene.as_dict(),
                     "palette": {t: [rounded(np.array(c) * 255) for c in v] for t, v in style.palette.items()}}
    return doc
