"""What the phone does to the light: fall-off, vignetting, white balance, blur, noise and JPEG."""

from __future__ import annotations

import math

import cv2
import numpy as np


def light_falloff(shape: tuple[int, int], gradient: float, angle_deg: float, vignette: float) -> np.ndarray:
    """A ``(H, W, 1)`` gain: a linear fall-off across the photo times a radial vignette."""
    h, w = shape
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    nx, ny = (xs - w / 2) / (w / 2), (ys - h / 2) / (h / 2)
    a = math.radians(angle_deg)
    ramp = 1.0 + gradient * 0.5 * (nx * math.cos(a) + ny * math.sin(a))
    radial = 1.0 - vignette * 0.5 * (nx * nx + ny * ny)
    return (ramp * radial)[..., None]


def sensor(image: np.ndarray, rng: np.random.Generator, *, exposure: float, white_balance, vignette: float,
           gradient: float, gradient_angle_deg: float, blur_sigma: float, noise_sigma: float,
           jpeg_quality: int) -> np.ndarray:
    """The 8-bit photo a phone would store of the scene ``image`` (8-bit BGR, already lens-distorted)."""
    gain = light_falloff(image.shape[:2], gradient, gradient_angle_deg, vignette)
    gain = gain * (exposure * np.asarray(white_balance, np.float32))[None, None, :]
    out = image.astype(np.float32) * gain
    if blur_sigma > 0.05:
        out = cv2.GaussianBlur(out, (0, 0), blur_sigma)
    if noise_sigma > 0:
        # Shot noise grows with brightness; read noise does not.
        scale = noise_sigma * np.sqrt(0.3 + out / 255.0)
        out += rng.standard_normal(out.shape, dtype=np.float32) * scale
    out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)])
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else out
