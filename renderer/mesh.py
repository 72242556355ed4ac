"""Small polygon meshes (prisms) and their rasterisation with Lambert shading.

Every object on the table is a prism: an outline drawn in a plane and pushed
through a depth (a house is its gable end pushed along its length, a field
disc is a circle pushed up, a meeple is its silhouette pushed through its
thickness). Faces of all objects are drawn far to near; back faces are culled.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from renderer.camera import Camera


NEAR_MM = 30.0      # faces closer to the lens than this are not drawn (nothing sits on the phone)
FAR_PX = 1.0e6      # projected coordinates are clipped here so fixed-point drawing cannot overflow


@dataclass(frozen=True)
class Face:
    """One flat polygon of an object: world points ``(K, 3)``, outward normal, BGR albedo in ``[0, 1]``."""

    points: np.ndarray
    normal: np.ndarray
    albedo: np.ndarray
    shine: float = 0.0


def prism(outline, depth: float, origin, u, v, albedo, shine: float = 0.0,
          cap_albedo=None) -> list[Face]:
    """Faces of ``outline`` (``(N, 2)``, counter-clockwise in the ``(u, v)`` plane) pushed ``depth`` along ``u × v``.

    ``origin`` is where outline point ``(0, 0)`` lies on the back cap.
    """
    outline = np.asarray(outline, float)
    origin, u, v = (np.asarray(a, float) for a in (origin, u, v))
    w = np.cross(u, v)
    back = origin + outline[:, :1] * u + outline[:, 1:2] * v
    front = back + depth * w
    albedo = np.asarray(albedo, float)
    cap = albedo if cap_albedo is None else np.asarray(cap_albedo, float)
    faces = [Face(front, w, cap, shine), Face(back[::-1], -w, cap, shine)]
    n = len(outline)
    for i in range(n):
        j = (i + 1) % n
        du, dv = outline[j] - outline[i]
        normal = dv * u - du * v
        length = np.linalg.norm(normal)
        if length < 1e-9:
            continue
        faces.append(Face(np.array([back[i], back[j], front[j], front[i]]), normal / length, albedo, shine))
    return faces


def circle(radius: float, n: int = 20) -> np.ndarray:
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)


@dataclass(frozen=True)
class Light:
    """A directional key light (``direction`` points toward the light) and an ambient term, BGR gains."""

    direction: np.ndarray
    key: np.ndarray
    ambient: np.ndarray


def shade(face: Face, light: Light, view_dir: np.ndarray) -> np.ndarray:
    """BGR colour of a face in ``[0, 1+]``: ambient plus Lambert plus a little Blinn-Phong."""
    lambert = max(0.0, float(face.normal @ light.direction))
    colour = face.albedo * (light.ambient + light.key * lambert)
    if face.shine > 0 and lambert > 0:
        half = light.direction + view_dir
        half /= np.linalg.norm(half)
        colour = colour + face.shine * light.key * max(0.0, float(face.normal @ half)) ** 24
    return colour


def draw_faces(canvas: np.ndarray, faces: list[Face], camera: Camera, origin, light: Light,
               edge_gain: float = 0.0, coverage: np.ndarray | None = None) -> None:
    """Paint the visible faces on an 8-bit BGR ``canvas`` (ideal image, offset ``origin``), far first.

    ``edge_gain`` brightens a thin line along each face's outline: the rounded,
    light-catching edges of sanded wooden pieces. ``coverage`` (8-bit, canvas
    sized), when given, is set to 255 wherever a face was drawn.
    """
    if not faces:
        return
    centroids = np.array([f.points.mean(axis=0) for f in faces])
    to_camera = camera.position - centroids
    depth = camera.depth(centroids)
    order = np.argsort(-depth)
    for k in order:
        face = faces[k]
        if float(face.normal @ to_camera[k]) <= 0 or np.min(camera.depth(face.points)) < NEAR_MM:
            continue
        view = to_camera[k] / np.linalg.norm(to_camera[k])
        colour = np.clip(shade(face, light, view), 0, 1) * 255
        pts = np.clip(camera.project_ideal(face.points, origin), -FAR_PX, FAR_PX)
        poly = np.round(pts * 16).astype(np.int32)
        cv2.fillPoly(canvas, [poly], tuple(float(c) for c in colour), cv2.LINE_AA, shift=4)
        if coverage is not None:
            cv2.fillPoly(coverage, [poly], 255, cv2.LINE_AA, shift=4)
        if edge_gain > 0:
            edge = tuple(float(c) for c in np.clip(colour * (1 + edge_gain) + 12 * edge_gain, 0, 255))
            cv2.polylines(canvas, [poly], True, edge, 1, cv2.LINE_AA, shift=4)


def shadow_outline(faces: list[Face], light_dir: np.ndarray, z: float) -> np.ndarray:
    """Convex outline (world ``(K, 3)``) of the shadow ``faces`` cast on the plane ``Z = z``."""
    pts = np.concatenate([f.points for f in faces])
    t = (pts[:, 2] - z) / max(light_dir[2], 0.05)
    flat = pts[:, :2] - t[:, None] * light_dir[:2]
    hull = cv2.convexHull(flat.astype(np.float32)).reshape(-1, 2)
    return np.column_stack([hull, np.full(len(hull), z)])
