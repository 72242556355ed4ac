"""Stage 1: read a photo into a BGR array, upright and at a workable size.

Phones store the camera's orientation in EXIF instead of turning the pixels,
so the orientation is applied here; photos larger than the pipeline needs are
shrunk while decoding (JPEG draft mode makes a 50-megapixel photo cheap).
Every failure becomes an :class:`UnreadableImage` (exit code 2) with one line.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from fjords.errors import FjordsError

try:  # HEIC/HEIF from iPhones, only where the optional extra is installed
    from pillow_heif import register_heif_opener
except ImportError:  # pragma: no cover - depends on the installation
    HEIF_SUPPORTED = False
else:  # pragma: no cover
    register_heif_opener()
    HEIF_SUPPORTED = True

#: The photo files :func:`load_image` reads, by suffix (what a folder of photos is searched for; HEIC needs the extra).
PHOTO_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".bmp", ".heic", ".heif")
#: Longest side, in pixels, that the pipeline works with; larger photos are shrunk.
DEFAULT_MAX_SIDE = 2048
#: Refuse images whose header claims more pixels than this (decompression bombs).
MAX_PIXELS = 250_000_000


class UnreadableImage(FjordsError):
    """The file is not an image this program can read (exit code 2)."""

    exit_code = 2


@dataclass(frozen=True)
class LoadedImage:
    """A decoded photo and how it relates to the original file.

    Attributes
    ----------
    image_bgr : ndarray, shape (H, W, 3), uint8
        Upright pixels, at most ``max_side`` on the longest side.
    scale : float
        ``image size / original size`` (1.0 when not shrunk); divide pixel
        coordinates by it to report geometry in the original photo's pixels.
    original_size : tuple of int
        ``(width, height)`` of the upright original.
    source : str
        The file name, or ``"<bytes>"``.
    """

    image_bgr: np.ndarray
    scale: float
    original_size: tuple[int, int]
    source: str

    def to_original(self, points_px: np.ndarray) -> np.ndarray:
        """Pixel coordinates in this image mapped to the original photo."""
        return np.asarray(points_px, dtype=np.float64) / self.scale


def fit_within(image_bgr: np.ndarray, max_side: int = DEFAULT_MAX_SIDE) -> tuple[np.ndarray, float]:
    """A decoded photo shrunk (area-averaged) so that its longer side is at most ``max_side``, and the factor."""
    height, width = image_bgr.shape[:2]
    factor = min(1.0, max_side / max(height, width))
    if factor == 1.0:
        return image_bgr, 1.0
    size = (max(1, round(width * factor)), max(1, round(height * factor)))
    return cv2.resize(image_bgr, size, interpolation=cv2.INTER_AREA), factor


def load_image(path: str | os.PathLike, *, max_side: int = DEFAULT_MAX_SIDE) -> LoadedImage:
    """Read an image file (JPEG, PNG, WebP, TIFF, BMP; HEIC with pillow-heif).

    Raises
    ------
    UnreadableImage
        Missing, empty, truncated or non-image files.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UnreadableImage(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UnreadableImage(f"{path}: is a directory, not an image") from None
    except OSError as exc:
        raise UnreadableImage(f"{path}: cannot read ({exc.strerror or exc})") from None
    return decode_image(data, max_side=max_side, source=str(path))


def decode_image(data: bytes, *, max_side: int = DEFAULT_MAX_SIDE, source: str = "<bytes>") -> LoadedImage:
    """Decode an encoded image held in memory (e.g. an upload from the phone page)."""
    if not data:
        raise UnreadableImage(f"{source}: the file is empty")
    try:
        with Image.open(io.BytesIO(data)) as im:
            return _decode(im, max_side, source)
    except UnreadableImage:
        raise
    except UnidentifiedImageError:
        hint = " (HEIC needs the 'heic' extra: pip install pillow-heif)" if _looks_like_heif(data) else ""
        raise UnreadableImage(f"{source}: not an image file this program can read{hint}") from None
    except Image.DecompressionBombError:
        raise UnreadableImage(f"{source}: the image is implausibly large") from None
    except (OSError, ValueError, SyntaxError) as exc:  # Pillow reports truncation and corruption this way
        raise UnreadableImage(f"{source}: the image is damaged or incomplete ({_first_line(exc)})") from None


def _decode(im: Image.Image, max_side: int, source: str) -> LoadedImage:
    width, height = im.size
    if width * height > MAX_PIXELS:
        raise UnreadableImage(f"{source}: {width}x{height} is implausibly large for a photo")
    orientation = im.getexif().get(0x0112, 1)
    upright = (height, width) if orientation in (5, 6, 7, 8) else (width, height)
    scale = min(1.0, max_side / max(upright))
    if scale < 1.0 and im.format == "JPEG":
        # Decoding at 1/2, 1/4 or 1/8 straight from the DCT is much faster than shrinking afterwards.
        im.draft("RGB", (int(width * scale) + 1, int(height * scale) + 1))
    im.load()
    ImageOps.exif_transpose(im, in_place=True)  # not a copy of every upright photo, as without in_place
    if im.mode != "RGB":
        im = _to_rgb(im)
    target = (max(1, round(upright[0] * scale)), max(1, round(upright[1] * scale)))
    if im.size != target:
        im = im.resize(target, Image.Resampling.BILINEAR, reducing_gap=2.0)
    # cv2.cvtColor swaps the channels several times faster than copying numpy's reversed view.
    bgr = cv2.cvtColor(np.asarray(im), cv2.COLOR_RGB2BGR)
    return LoadedImage(bgr, target[0] / upright[0], upright, source)


def _to_rgb(im: Image.Image) -> Image.Image:
    """Flatten transparency onto white and convert any mode to 8-bit RGB."""
    if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
        im = im.convert("RGBA")
        background = Image.new("RGBA", im.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, im).convert("RGB")
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        array = np.asarray(im, dtype=np.float64)
        peak = max(float(array.max()), 1.0)
        return Image.fromarray((array * (255.0 / peak)).astype(np.uint8)).convert("RGB")
    return im.convert("RGB")


def _looks_like_heif(data: bytes) -> bool:
    return data[4:8] == b"ftyp" and data[8:12] in (b"heic", b"heix", b"mif1", b"msf1", b"hevc")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
