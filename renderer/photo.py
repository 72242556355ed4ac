"""What the phone does to the light: fall-off, vignetting, colour fringes, tone curve, blur, sharpening, noise, JPEG."""

from __future__ import annotations

import math

import cv2
import numpy as np


def light_falloff(shape: tuple[int, int], gradient: float, angle_deg: float, vignette: float) -> np.ndarray:
    """A ``(H, W, 1)`` gain: a linear fall-off across the photo times a radial vignette."""
    h, w = shape
    nx = ((np.arange(w, dtype=np.float32) - w / 2) / (w / 2))[None, :]
    ny = ((np.arange(h, dtype=np.float32) - h / 2) / (h / 2))[:, None]
    a = math.radians(angle_deg)
    ramp = 1.0 + gradient * 0.5 * (nx * math.cos(a) + ny * math.sin(a))
    radial = 1.0 - vignette * 0.5 * (nx * nx + ny * ny)
    return (ramp * radial)[..., None]


def depth_of_field(image: np.ndarray, depth: np.ndarray, focus: float, max_sigma: float) -> np.ndarray:
    """Blur growing with the distance from the focal plane (a thin-lens circle of confusion, in two levels).

    ``depth`` is each pixel's distance along the optical axis, ``focus`` the
    distance in focus; ``max_sigma`` the blur, in pixels, of the far background.
    """
    if max_sigma < 0.3:
        return image
    confusion = np.abs(1.0 - focus / np.maximum(depth, 1e-3)) * max_sigma
    weight = np.clip(confusion / max_sigma, 0, 1)[..., None]
    blurred = cv2.GaussianBlur(image, (0, 0), max_sigma)
    return (image * (1 - weight) + blurred * weight).astype(np.uint8)


def motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """A normalised line kernel: the smear of a hand that moved ``length`` pixels while the shutter was open."""
    size = int(math.ceil(length)) | 1
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * length / 2, math.sin(a) * length / 2
    cv2.line(kernel, (round(c * 16 - dx * 16), round(c * 16 - dy * 16)), (round(c * 16 + dx * 16), round(c * 16 + dy * 16)),
             1.0, 1, cv2.LINE_AA, shift=4)
    return kernel / kernel.sum()


def chromatic_aberration(image: np.ndarray, shift_px: float) -> np.ndarray:
    """Lateral colour fringes: red magnified and blue shrunk about the centre, ``shift_px`` at the corners."""
    h, w = image.shape[:2]
    corner = math.hypot(w / 2, h / 2)
    out = image.copy()
    for channel, sign in ((2, 1.0), (0, -1.0)):
        m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), 0.0, 1.0 + sign * shift_px / corner)
        out[..., channel] = cv2.warpAffine(image[..., channel], m, (w, h), flags=cv2.INTER_LINEAR,
                                           borderMode=cv2.BORDER_REFLECT)
    return out


def tone_curve(exposure: float, strength: float) -> np.ndarray:
    """A 256-entry table: exposure, then a phone's highlight roll-off ``1 − exp(−a·x)`` (``a = 3·strength``).

    The roll-off is normalised so that 255 stays 255; ``strength`` 0 is linear.
    """
    x = np.arange(256, dtype=np.float32) * exposure
    a = 3.0 * strength
    if a < 1e-3:
        return x
    return (255.0 * (1.0 - np.exp(-a * x / 255.0)) / (1.0 - math.exp(-a))).astype(np.float32)


def sensor(image: np.ndarray, rng: np.random.Generator, *, exposure: float, white_balance, vignette: float,
           gradient: float, gradient_angle_deg: float, blur_sigma: float, motion_px: float, chromatic_px: float,
           tone: float, sharpen: float, noise_sigma: float, jpeg_quality: int) -> np.ndarray:
    """The 8-bit photo a phone would store of the scene ``image`` (8-bit BGR, already lens-distorted)."""
    if chromatic_px > 0.05:
        image = chromatic_aberration(image, chromatic_px)
    gain = light_falloff(image.shape[:2], gradient, gradient_angle_deg, vignette)
    out = tone_curve(exposure, tone)[image] * (gain * np.asarray(white_balance, np.float32)[None, None, :])
    if blur_sigma > 0.05:
        out = cv2.GaussianBlur(out, (0, 0), blur_sigma)
    if motion_px >= 1.5:
        out = cv2.filter2D(out, -1, motion_kernel(motion_px, float(rng.uniform(0, 180))))
    if sharpen > 0.01:  # unsharp masking, as phone pipelines do, with its halos
        out = out * (1 + sharpen) - cv2.GaussianBlur(out, (0, 0), 1.5) * sharpen
    if noise_sigma > 0:
        # Shot noise grows with brightness; read noise does not. Sharpening halos far below black get none (they
        # clip to black all the same) instead of the square root of a negative number.
        scale = noise_sigma * np.sqrt(np.maximum(0.3 + out / 255.0, 0.0))
        out += rng.standard_normal(out.shape, dtype=np.float32) * scale
    out = np.clip(out + 0.5, 0, 255).astype(np.uint8)
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(jpeg_quality)])
    return cv2.imdecode(data, cv2.IMREAD_COLOR) if ok else out
