"""Players' arms reaching over the board, drawn in the image with rounded shading and a soft shadow."""

from __future__ import annotations

import math

import cv2
import numpy as np

SKIN_BGR = ((180, 200, 235), (150, 175, 220), (110, 145, 200), (70, 100, 150), (45, 65, 100))


def _capsule(a: np.ndarray, b: np.ndarray, ra: float, rb: float, n: int = 12) -> np.ndarray:
    """Outline of a tapered capsule from ``a`` (radius ``ra``) to ``b`` (radius ``rb``)."""
    d = b - a
    angle = math.atan2(d[1], d[0])
    back = [a + ra * np.array([math.cos(t), math.sin(t)]) for t in np.linspace(angle + math.pi / 2,
                                                                              angle + 3 * math.pi / 2, n)]
    front = [b + rb * np.array([math.cos(t), math.sin(t)]) for t in np.linspace(angle - math.pi / 2,
                                                                               angle + math.pi / 2, n)]
    return np.array(back + front)


def arm_shapes(board_px: np.ndarray, px_per_mm: float, canvas_size: tuple[int, int], rng: np.random.Generator):
    """``(sleeve, skin)`` lists of canvas polygons of one arm reaching from a frame edge to the board.

    ``px_per_mm`` is the scale of the board in the image; the hand, nearer the
    lens, is drawn a little larger than life at that scale.
    """
    w, h = canvas_size
    tip = board_px[rng.integers(len(board_px))] + rng.normal(0, 30 * px_per_mm, 2)
    edge = int(rng.integers(4))
    along = rng.uniform(0.15, 0.85)
    start = np.array([(along * w, h * 1.05), (along * w, -0.05 * h), (-0.05 * w, along * h),
                      (w * 1.05, along * h)][edge])
    direction = tip - start
    length = float(np.linalg.norm(direction)) or 1.0
    direction /= length
    normal = np.array([-direction[1], direction[0]])
    width = rng.uniform(55, 75) * px_per_mm * rng.uniform(1.0, 1.3)  # a forearm
    wrist = tip - direction * width * 1.4
    palm = wrist + direction * width * 0.9
    sleeve_end = start + direction * (length - width * 1.4) * rng.uniform(0.2, 0.8)
    skin = [_capsule(start, wrist, width * 0.5, width * 0.4),
            _capsule(wrist, palm, width * 0.5, width * 0.58)]
    spread = rng.uniform(0.1, 0.4)
    for k, finger in enumerate(np.linspace(-1, 1, 4)):
        base = palm + normal * finger * width * 0.42
        reach = width * rng.uniform(0.5, 0.95) * (1.0 - 0.15 * abs(finger))
        bend = direction * math.cos(spread * finger) + normal * math.sin(spread * finger)
        skin.append(_capsule(base, base + bend * reach, width * 0.14, width * 0.12, 6))
    side = 1 if rng.random() < 0.5 else -1
    thumb_base = wrist + direction * width * 0.3 + normal * side * width * 0.45
    thumb_dir = direction * 0.6 + normal * side * 0.8
    skin.append(_capsule(thumb_base, thumb_base + thumb_dir * width * 0.7, width * 0.16, width * 0.13, 6))
    sleeve = [_capsule(start - direction * width, sleeve_end, width * 0.68, width * 0.62)]
    return sleeve, skin


def _fill_each(mask: np.ndarray, polygons, origin: np.ndarray) -> None:
    """Fill polygons (shifted by ``-origin``) one by one: one ``fillPoly`` call would cut holes where they overlap."""
    for p in polygons:
        cv2.fillPoly(mask, [np.round((p - origin) * 8).astype(np.int32)], 1.0, cv2.LINE_AA, shift=3)


def _box(polygons, margin: float, w: int, h: int) -> tuple[int, int, int, int] | None:
    pts = np.concatenate(polygons)
    x0, y0 = np.maximum(np.floor(pts.min(0) - margin), 0).astype(int)
    x1, y1 = np.minimum(np.ceil(pts.max(0) + margin), [w, h]).astype(int)
    return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None


def draw_arms(pixels: np.ndarray, count: int, board_px: np.ndarray, px_per_mm: float, shadow_px: np.ndarray,
              rng: np.random.Generator) -> np.ndarray:
    """Paint ``count`` arms on the 8-bit canvas ``pixels`` (in place); return their ``[0, 1]`` mask.

    ``shadow_px`` is how far, in canvas pixels, the shadow of something 1 mm above
    the board is displaced (away from the light).
    """
    h, w = pixels.shape[:2]
    covered = np.zeros((h, w), np.float32)
    for _ in range(count):
        sleeve, skin = arm_shapes(board_px, px_per_mm, (w, h), rng)
        tone = np.array(SKIN_BGR[rng.integers(len(SKIN_BGR))], np.float32) * rng.uniform(0.85, 1.1)
        cloth = rng.uniform(20, 230, 3).astype(np.float32)
        # The arm floats 60-150 mm above the table: its shadow is displaced away from the light, and soft.
        offset = shadow_px * rng.uniform(60, 150)
        shadow_polygons = [p + offset for p in sleeve + skin]
        box = _box(shadow_polygons, 45, w, h)
        if box is not None:
            x0, y0, x1, y1 = box
            shadow = np.zeros((y1 - y0, x1 - x0), np.float32)
            _fill_each(shadow, shadow_polygons, np.array([x0, y0]))
            shadow = cv2.GaussianBlur(shadow, (0, 0), 15)
            region = pixels[y0:y1, x0:x1]
            pixels[y0:y1, x0:x1] = np.clip(region * (1 - 0.45 * shadow[..., None]), 0, 255).astype(np.uint8)
        for polygons, colour in ((skin, tone), (sleeve, cloth)):
            box = _box(polygons, 2, w, h)
            if box is None:
                continue
            x0, y0, x1, y1 = box
            mask = np.zeros((y1 - y0, x1 - x0), np.float32)
            _fill_each(mask, polygons, np.array([x0, y0]))
            # Round shading: brighter along the middle of each limb, darker at its silhouette.
            depth = cv2.distanceTransform((mask > 0.5).astype(np.uint8), cv2.DIST_L2, 5)
            depth = np.sqrt(np.clip(depth / max(float(depth.max()), 1.0) * 2.0, 0, 1))
            shaded = colour[None, None, :] * (0.55 + 0.5 * depth)[..., None]
            region = pixels[y0:y1, x0:x1]
            pixels[y0:y1, x0:x1] = np.clip(region * (1 - mask[..., None]) + shaded * mask[..., None], 0,
                                           255).astype(np.uint8)
            covered[y0:y1, x0:x1] = np.maximum(covered[y0:y1, x0:x1], mask)
    return covered
