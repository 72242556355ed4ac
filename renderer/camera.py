"""A pinhole camera with radial (barrel) distortion, aimed at the table.

World frame, in millimetres: ``X`` east, ``Y`` north, ``Z`` up out of the table;
the table is the plane ``Z = 0``. Seen from above, an unmirrored photo shows
``X`` to the right and ``Y`` up, so a lattice direction ``d`` at ``60·d``
degrees counter-clockwise in the world is ``60·d`` degrees counter-clockwise in
the photo too. Camera frame as OpenCV's: ``x`` right, ``y`` down, ``z`` forward.
Pixel centres are at integer coordinates.

The scene is drawn in an *ideal* (undistorted) pinhole image, larger than the
photo by a margin, and the lens distortion is applied last by one remap
(:meth:`Camera.distortion_maps`); truth points go through :meth:`Camera.project`,
which applies the same distortion in closed form.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SENSOR_WIDTH_MM = 36.0  # focal lengths are 35 mm-equivalent, as phones report them


def smooth_map(fn, width: int, height: int, step: int = 4) -> np.ndarray:
    """``fn`` of every pixel's ``(x, y)``, evaluated exactly every ``step`` pixels and interpolated between.

    For the smooth maps of a camera (lens distortion, pixel to table plane) this is
    exact to a small fraction of a pixel and many times faster than per pixel.
    """
    import cv2

    gx = np.arange(0, width + step, step, dtype=np.float64)
    gy = np.arange(0, height + step, step, dtype=np.float64)
    values = fn(np.stack(np.meshgrid(gx, gy), axis=-1)).astype(np.float32)
    # Grid node j lies on pixel j·step; scaling by ``step`` and shifting aligns pixel centres.
    big = cv2.resize(values, (len(gx) * step, len(gy) * step), interpolation=cv2.INTER_LINEAR)
    shift = (step - 1) / 2.0
    m = np.float32([[1, 0, shift], [0, 1, shift]])
    return cv2.warpAffine(big, m, (width, height), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


@dataclass(frozen=True)
class Camera:
    """Where the camera stands, where it looks, and its lens.

    Parameters
    ----------
    position : (3,) array, world millimetres.
    rotation : (3, 3) array whose rows are the camera's x, y, z axes in world coordinates.
    focal_px : focal length in pixels.
    width, height : size of the photo in pixels.
    k1, k2 : radial distortion on normalised coordinates (negative ``k1`` is barrel).
    """

    position: np.ndarray
    rotation: np.ndarray
    focal_px: float
    width: int
    height: int
    k1: float = 0.0
    k2: float = 0.0

    @classmethod
    def looking_at(cls, target, *, elevation_deg: float, azimuth_deg: float, roll_deg: float,
                   distance: float, focal_mm: float, width: int, height: int,
                   k1: float = 0.0, k2: float = 0.0) -> "Camera":
        """A camera ``distance`` mm from ``target``, raised ``elevation_deg`` above the table.

        ``azimuth_deg`` is the compass direction (counter-clockwise from east) from
        the target to the camera; the image's up direction is the horizontal
        direction the camera faces, so the straight-down view is continuous with
        the oblique ones.
        """
        el, az = math.radians(elevation_deg), math.radians(azimuth_deg)
        target = np.asarray(target, dtype=float)
        toward_camera = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
        position = target + distance * toward_camera
        forward = -toward_camera
        facing = -np.array([math.cos(az), math.sin(az), 0.0])
        up = _unit(facing * math.sin(el) + np.array([0.0, 0.0, 1.0]) * math.cos(el))
        down = -up
        right = np.cross(down, forward)
        roll = math.radians(roll_deg)
        c, s = math.cos(roll), math.sin(roll)
        right, down = c * right + s * down, -s * right + c * down
        rotation = np.stack([right, down, forward])
        focal_px = focal_mm / SENSOR_WIDTH_MM * width
        return cls(position, rotation, focal_px, width, height, k1, k2)

    @property
    def principal_point(self) -> tuple[float, float]:
        return ((self.width - 1) / 2.0, (self.height - 1) / 2.0)

    def to_camera(self, points: np.ndarray) -> np.ndarray:
        """World points ``(..., 3)`` in camera coordinates."""
        return (np.asarray(points, dtype=float) - self.position) @ self.rotation.T

    def depth(self, points: np.ndarray) -> np.ndarray:
        return self.to_camera(points)[..., 2]

    def project_ideal(self, points: np.ndarray, origin: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        """Undistorted pixel coordinates ``(..., 2)``, shifted by ``origin`` (a canvas offset)."""
        cam = self.to_camera(points)
        z = np.maximum(cam[..., 2], 1e-6)
        cx, cy = self.principal_point
        u = self.focal_px * cam[..., 0] / z + cx - origin[0]
        v = self.focal_px * cam[..., 1] / z + cy - origin[1]
        return np.stack([u, v], axis=-1)

    def distort(self, ideal_px: np.ndarray) -> np.ndarray:
        """Photo pixel coordinates of ideal pixel coordinates (forward lens model).

        Beyond the radius where a strong barrel lens folds back (:meth:`fold_radius`) the
        polynomial would bring far points back towards the middle of the photo, where
        they would count as in view and turn a tile's outline inside out. There the radius
        goes on growing one for one from the fold's, so such points stay beyond the
        lens's reach, outside the photo, in their order.
        """
        cx, cy = self.principal_point
        x = (ideal_px[..., 0] - cx) / self.focal_px
        y = (ideal_px[..., 1] - cy) / self.focal_px
        r2 = x * x + y * y
        gain = 1.0 + self.k1 * r2 + self.k2 * r2 * r2
        fold = self.fold_radius()
        if math.isfinite(fold) and np.any(r2 > fold * fold):
            r = np.sqrt(np.maximum(r2, fold * fold))
            fold_reach = fold * (1.0 + self.k1 * fold ** 2 + self.k2 * fold ** 4)
            gain = np.where(r2 > fold * fold, (fold_reach + (r - fold)) / r, gain)
        return np.stack([x * gain * self.focal_px + cx, y * gain * self.focal_px + cy], axis=-1)

    def undistort(self, photo_px: np.ndarray, iterations: int = 8) -> np.ndarray:
        """Ideal pixel coordinates of photo pixels (inverse of :meth:`distort`).

        Solves ``r · (1 + k1 r² + k2 r⁴) = r_d`` for the ideal radius by Newton's
        method from ``r = r_d``: on a lens whose radius grows monotonically the
        iterates approach the root from one side, where the plain fixed point
        ``r = r_d / gain(r)`` oscillates and diverges under strong barrel
        distortion. A strong barrel lens folds back at some radius; a photo pixel
        beyond the largest radius it reaches (the corner of a wide photo, rarely)
        is given the fold's radius, so every pixel shows the nearest thing the lens can.
        """
        cx, cy = self.principal_point
        xd = (photo_px[..., 0] - cx) / self.focal_px
        yd = (photo_px[..., 1] - cy) / self.focal_px
        rd = np.hypot(xd, yd)
        fold = self.fold_radius()
        r = np.minimum(rd, fold)
        for _ in range(iterations):
            r2 = r * r
            error = r * (1.0 + self.k1 * r2 + self.k2 * r2 * r2) - rd
            slope = 1.0 + 3.0 * self.k1 * r2 + 5.0 * self.k2 * r2 * r2
            r = np.clip(r - error / np.maximum(slope, 1e-3), 0.0, fold)
        stretch = np.divide(r, rd, out=np.ones_like(rd), where=rd > 0)
        return np.stack([xd * stretch * self.focal_px + cx, yd * stretch * self.focal_px + cy], axis=-1)

    def fold_radius(self) -> float:
        """The ideal radius (in focal lengths) where the lens stops spreading the image outwards.

        The first positive root of ``d/dr [r (1 + k1 r² + k2 r⁴)] = 1 + 3 k1 r² + 5 k2 r⁴``;
        infinite for a lens that never folds.
        """
        a, b = 5.0 * self.k2, 3.0 * self.k1  # a u² + b u + 1 = 0 in u = r²
        discriminant = b * b - 4.0 * a
        if discriminant < 0.0:
            return math.inf
        # The stable pair of roots: q / a and 1 / q (their product is 1 / a); a ≈ 0 leaves only 1 / q.
        q = -0.5 * (b + math.copysign(math.sqrt(discriminant), b))
        roots = [1.0 / q] if q != 0.0 else []
        if abs(a) > 1e-12:
            roots.append(q / a)
        squares = [u for u in roots if u > 0.0 and math.isfinite(u)]
        return math.sqrt(min(squares)) if squares else math.inf

    def project(self, points: np.ndarray) -> np.ndarray:
        """Photo pixel coordinates ``(..., 2)`` of world points, lens distortion included."""
        return self.distort(self.project_ideal(points))

    def canvas_box(self, margin: int = 4) -> tuple[int, int, int, int]:
        """``(x0, y0, width, height)`` of the ideal-image canvas that covers every photo pixel."""
        w, h = self.width, self.height
        border = np.concatenate([
            np.stack([np.linspace(0, w - 1, 64), np.zeros(64)], -1),
            np.stack([np.linspace(0, w - 1, 64), np.full(64, h - 1.0)], -1),
            np.stack([np.zeros(64), np.linspace(0, h - 1, 64)], -1),
            np.stack([np.full(64, w - 1.0), np.linspace(0, h - 1, 64)], -1),
        ])
        ideal = self.undistort(border)
        x0 = int(math.floor(min(ideal[:, 0].min(), 0))) - margin
        y0 = int(math.floor(min(ideal[:, 1].min(), 0))) - margin
        x1 = int(math.ceil(max(ideal[:, 0].max(), w - 1))) + margin
        y1 = int(math.ceil(max(ideal[:, 1].max(), h - 1))) + margin
        return x0, y0, x1 - x0 + 1, y1 - y0 + 1

    def distortion_maps(self, origin: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """``cv2.remap`` maps from the ideal canvas (offset ``origin``) to the photo."""
        ideal = smooth_map(lambda px: self.undistort(px) - np.asarray(origin, float), self.width, self.height)
        return ideal[..., 0].copy(), ideal[..., 1].copy()

    def plane_homography(self, z: float, texture_origin: tuple[float, float], mm_per_px: float,
                         canvas_origin: tuple[float, float]) -> np.ndarray:
        """3×3 homography from a top-down texture of the plane ``Z = z`` to the ideal canvas.

        Texture pixel ``(i, j)`` (column, row) lies at world ``X = x0 + i·mm_per_px``,
        ``Y = y0 − j·mm_per_px`` where ``(x0, y0) = texture_origin`` is its top-left.
        """
        x0, y0 = texture_origin
        tex_to_world = np.array([[mm_per_px, 0.0, x0], [0.0, -mm_per_px, y0], [0.0, 0.0, 1.0]])
        r, c = self.rotation, self.position
        # A point (X, Y, z) in camera coordinates is R·(X, Y, z) − R·c = [r0 r1 (z·r2 − R·c)]·(X, Y, 1).
        plane_to_cam = np.column_stack([r[:, 0], r[:, 1], z * r[:, 2] - r @ c])
        cx, cy = self.principal_point
        k = np.array([[self.focal_px, 0.0, cx - canvas_origin[0]], [0.0, self.focal_px, cy - canvas_origin[1]],
                      [0.0, 0.0, 1.0]])
        return k @ plane_to_cam @ tex_to_world

    def plane_point(self, ideal_px: np.ndarray, z: float = 0.0) -> np.ndarray:
        """World point on the plane ``Z = z`` seen at ideal pixel coordinates (no canvas offset)."""
        cx, cy = self.principal_point
        rays_cam = np.stack([(ideal_px[..., 0] - cx) / self.focal_px, (ideal_px[..., 1] - cy) / self.focal_px,
                             np.ones(ideal_px.shape[:-1])], axis=-1)
        rays = rays_cam @ self.rotation
        t = (z - self.position[2]) / np.where(np.abs(rays[..., 2]) < 1e-9, -1e-9, rays[..., 2])
        return self.position + t[..., None] * rays
