"""Stage 2: is the photo good enough to read? Blur, darkness, glare and the board's size.

Each measure is made on a copy shrunk to :data:`WORK_SIDE` pixels on its long
side so that thresholds do not depend on the camera's resolution:

- blur: the width (Gaussian sigma, in work pixels) of the image's sharpest
  edges, from how much their gradient drops under a known extra blur — a
  step edge blurred by ``b`` has peak gradient ``∝ 1/b``, so the ratio of peak
  gradients before and after blurring by ``s`` is ``sqrt(b² + s²) / b``,
  independent of the edge's contrast;
- darkness: the 90th percentile of luminance (the board is the bright part
  of most photos; a dark table alone does not make a photo too dark);
- glare: the share of pixels clipped to white, on the board's tiles once they are
  found (:func:`check_glare`): a white table clipped to white is no glare on the board.

A photo past a ``*_retake`` limit cannot be read and raises :class:`RetakePhoto`
(exit code 4); one past a ``*_warn`` limit is read but the advice says why the
result may suffer.

The board's size is judged after the lattice fit (:func:`tile_size_advice`): tiles
smaller in the photo than the hex patch the reading models look through are read
from fewer pixels than the models were built for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from fjords.errors import FjordsError
from scanner.patches import HEX_MARGIN, HEX_PATCH

WORK_SIDE = 1024
#: Extra blur (sigma, work pixels) used to probe the sharpness of edges.
PROBE_SIGMA = 3.0
#: Luminance quantile that measures how bright the photo is.
BRIGHT_QUANTILE = 0.9
#: Share of the strongest gradients taken as "the sharpest edges".
EDGE_QUANTILE = 0.995


class RetakePhoto(FjordsError):
    """The photo cannot be read reliably; the message says what to change (exit code 4)."""

    exit_code = 4


@dataclass(frozen=True)
class QualityLimits:
    """Thresholds of :func:`assess_quality` (blur in work pixels, brightness 0..1)."""

    blur_warn: float = 2.5
    blur_retake: float = 4.0
    dark_warn: float = 0.25
    dark_retake: float = 0.10
    glare_warn: float = 0.05
    glare_retake: float = 0.4


@dataclass(frozen=True)
class QualityReport:
    """Measures of one photo and the advice they lead to.

    Attributes
    ----------
    blur_px : float
        Estimated blur of the sharpest edges (Gaussian sigma, pixels at
        :data:`WORK_SIDE` on the long side); about 0.5–1 for a sharp photo.
    brightness : float
        90th percentile of luminance, 0 (black) to 1 (white).
    glare_fraction : float
        Share of pixels clipped to white.
    advice : tuple of str
        One sentence per problem, for the user.
    retake : bool
        True when some measure is past its retake limit.
    """

    blur_px: float
    brightness: float
    glare_fraction: float
    advice: tuple[str, ...]
    retake: bool


GLARE_ADVICE = "Glare washes out part of the board: tilt the phone or move the lamp."


def assess_quality(image_bgr: np.ndarray, limits: QualityLimits = QualityLimits(),
                   grey: np.ndarray | None = None) -> QualityReport:
    """Measure blur, brightness and glare (of the whole photo) of a BGR photo and say what to improve; ``grey`` is
    its :func:`work_grey` where already made."""
    grey = work_grey(image_bgr) if grey is None else grey
    blur = estimate_blur(grey)
    brightness = float(np.quantile(grey, BRIGHT_QUANTILE)) / 255.0
    glare = glare_share(image_bgr, grey=grey)
    advice: list[str] = []
    retake = False
    for value, warn, limit, message, worse_when_high in (
        (blur, limits.blur_warn, limits.blur_retake,
         "The photo is blurred: hold the phone still and let it focus on the tiles.", True),
        (brightness, limits.dark_warn, limits.dark_retake,
         "The photo is too dark: add light or move away from your own shadow.", False),
        (glare, limits.glare_warn, limits.glare_retake, GLARE_ADVICE, True),
    ):
        past_warn = value > warn if worse_when_high else value < warn
        if past_warn:
            advice.append(message)
            retake |= value > limit if worse_when_high else value < limit
    return QualityReport(blur, brightness, glare, tuple(advice), retake)


def check_quality(image_bgr: np.ndarray, limits: QualityLimits = QualityLimits(), glare: bool = True,
                  grey: np.ndarray | None = None) -> QualityReport:
    """:func:`assess_quality`, raising :class:`RetakePhoto` when the photo cannot be read; without ``glare``, the
    whole photo's glare neither refuses it nor gets advice (the scan judges glare on the board: :func:`check_glare`)."""
    if not glare:
        limits = replace(limits, glare_warn=np.inf, glare_retake=np.inf)
    report = assess_quality(image_bgr, limits, grey)
    if report.retake:
        raise RetakePhoto(" ".join(report.advice))
    return report


def glare_share(image_bgr: np.ndarray, tile_corners_px=None, grey: np.ndarray | None = None) -> float:
    """Share of pixels clipped to white: on the tiles given (each six corners in the photo's pixels), else in the
    whole photo; ``grey`` is its :func:`work_grey` where already made."""
    grey = work_grey(image_bgr) if grey is None else grey
    clipped = grey >= 250
    if tile_corners_px is None:
        return float(np.count_nonzero(clipped)) / clipped.size
    scale = grey.shape[1] / image_bgr.shape[1]
    mask = np.zeros(grey.shape, np.uint8)
    for corners in tile_corners_px:
        cv2.fillConvexPoly(mask, np.round(np.asarray(corners, np.float64) * scale).astype(np.int32), 1)
    on_board = mask.astype(bool)
    return float(np.count_nonzero(clipped & on_board)) / max(int(np.count_nonzero(on_board)), 1)


def check_glare(image_bgr: np.ndarray, tile_corners_px, limits: QualityLimits = QualityLimits(),
                grey: np.ndarray | None = None) -> list[str]:
    """The glare advice for the board's tiles in view (each six corners in the photo's pixels), judged on those
    tiles alone (:func:`glare_share`; ``grey`` is the photo's :func:`work_grey` where already made); raises
    :class:`RetakePhoto` past ``limits.glare_retake``.

    A photo of a board on a white table may clip most of its pixels to white while its tiles read well: measured
    on the whole photo, it was refused (models/README.md, fifty-ninth session).
    """
    share = glare_share(image_bgr, tile_corners_px, grey)
    if share > limits.glare_retake:
        raise RetakePhoto(GLARE_ADVICE)
    return [GLARE_ADVICE] if share > limits.glare_warn else []


def estimate_blur(grey: np.ndarray) -> float:
    """Gaussian sigma (pixels) of the sharpest edges of a greyscale image.

    Returns 0 for an image without any edge (nothing to judge).
    """
    image = grey.astype(np.float32)
    peak = _edge_strength(image)
    if peak < 1.0:
        return 0.0
    probed = _edge_strength(cv2.GaussianBlur(image, (0, 0), PROBE_SIGMA))
    ratio = peak / max(probed, 1e-6)
    if ratio <= 1.0 + 1e-3:
        return float("inf")
    return float(PROBE_SIGMA / np.sqrt(ratio * ratio - 1.0))


def _edge_strength(image: np.ndarray) -> float:
    gx = cv2.Sobel(image, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(image, cv2.CV_32F, 0, 1, ksize=3)
    # cv2.magnitude, not np.hypot: a twelfth of the time, equal to float32 rounding.
    return float(np.quantile(cv2.magnitude(gx, gy), EDGE_QUANTILE)) / 8.0


def work_grey(image_bgr: np.ndarray) -> np.ndarray:
    """The grey copy of a BGR photo, shrunk to :data:`WORK_SIDE` pixels on its long side, that every measure of this
    module is made on (a scan makes it once for :func:`check_quality` and :func:`check_glare`)."""
    if image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
        raise ValueError("expected a BGR image of shape (H, W, 3)")
    height, width = image_bgr.shape[:2]
    scale = WORK_SIDE / max(height, width)
    # Grey first, then shrunk: both are weighted means, so the order changes the grey levels by rounding only, and
    # one channel shrinks in a third of the time of three.
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    if scale < 1.0:
        grey = cv2.resize(grey, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    return grey


def hex_area(circumradius: float) -> float:
    """Area of a regular hexagon of this circumradius."""
    return 1.5 * np.sqrt(3.0) * circumradius ** 2


#: A tile whose area in the photo is under this (pixels) is enlarged to fill the models' hex patch.
MIN_TILE_AREA = hex_area(HEX_PATCH / 2.0 / HEX_MARGIN)


#: Tiles fewer pixels across than this are read far worse, and wrongly without a mark: on renders scaled down so
#: (fifty-third session, models/README.md) silent sector errors were 3-15 times full size's below 20 px, and
#: tiles reported at >= 0.99 wrong 3-4 %; at 24-32 px about as at full size.
UNREADABLE_ACROSS = 20.0


def tile_size_advice(tile_corners_px, min_area: float = MIN_TILE_AREA) -> list[str]:
    """Advice when the median tile is smaller in the photo than the reading models' hex patch.

    Parameters
    ----------
    tile_corners_px : the six corners of each tile in view, in pixels of the photo as read.
    min_area : float
        Median tile area (pixels) below which the photo gets the advice.
    """
    areas = [cv2.contourArea(np.asarray(corners, np.float32)) for corners in tile_corners_px]
    if not areas or float(np.median(areas)) >= min_area:
        return []
    across = 2.0 * np.sqrt(float(np.median(areas)) / hex_area(1.0))
    if across < UNREADABLE_ACROSS:
        return [f"The board is far too small in the photo to read reliably (tiles about {across:.0f} pixels across): "
                "many sectors and pieces may be wrong without being marked. Move the phone closer so that the board "
                "fills the picture."]
    return [f"The board is small in the photo (tiles about {across:.0f} pixels across): move the phone closer "
            "so that the board fills the picture."]
