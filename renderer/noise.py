"""Smooth random fields, the raw material of every texture and light gradient."""

from __future__ import annotations

import numpy as np


def periodic_noise(rng: np.random.Generator, size: int, scale: float, stretch: float = 1.0) -> np.ndarray:
    """A tileable ``size × size`` field of zero mean and unit deviation.

    White noise filtered by a Gaussian in the frequency domain, so it wraps at
    the borders (textures repeat across a table without seams).

    Parameters
    ----------
    scale : feature size in pixels (the filter's standard deviation).
    stretch : features ``stretch`` times longer along x than along y (wood grain).
    """
    white = rng.standard_normal((size, size))
    fy = np.fft.fftfreq(size)[:, None]
    fx = np.fft.fftfreq(size)[None, :]
    envelope = np.exp(-2.0 * (np.pi * scale) ** 2 * ((fx * stretch) ** 2 + fy ** 2))
    field = np.real(np.fft.ifft2(np.fft.fft2(white) * envelope))
    field -= field.mean()
    return (field / (field.std() + 1e-12)).astype(np.float32)


def fractal_noise(rng: np.random.Generator, size: int, scale: float, octaves: int = 3,
                  stretch: float = 1.0) -> np.ndarray:
    """Sum of :func:`periodic_noise` octaves (halving feature size and amplitude), unit deviation."""
    field = np.zeros((size, size), np.float32)
    for k in range(octaves):
        field += 0.5 ** k * periodic_noise(rng, size, max(scale / 2 ** k, 0.5), stretch)
    return field / (field.std() + 1e-12)


def smooth_noise(rng: np.random.Generator, shape: tuple[int, int], cells: int) -> np.ndarray:
    """A non-periodic field of ``shape`` with about ``cells`` blobs across, in ``[-1, 1]``."""
    import cv2

    h, w = shape
    grid = rng.uniform(-1.0, 1.0, (cells + 3, cells + 3)).astype(np.float32)
    big = cv2.resize(grid, (w + 2 * w // cells, h + 2 * h // cells), interpolation=cv2.INTER_CUBIC)
    oy, ox = h // cells, w // cells
    return np.clip(big[oy:oy + h, ox:ox + w], -1.0, 1.0)
