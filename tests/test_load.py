"""scanner.load: formats, EXIF orientation, downscaling and one-line errors."""

import io

import cv2
import numpy as np
import pytest
from PIL import Image

from scanner.load import UnreadableImage, decode_image, load_image


def _photo(width=64, height=48):
    image = np.zeros((height, width, 3), np.uint8)
    image[:, : width // 2] = (255, 0, 0)  # left half blue in BGR
    return image


def _encode(image_bgr, fmt, **save_kwargs):
    buffer = io.BytesIO()
    Image.fromarray(image_bgr[:, :, ::-1]).save(buffer, fmt, **save_kwargs)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP"])
def test_formats_decode_to_bgr(fmt):
    loaded = decode_image(_encode(_photo(), fmt, quality=95) if fmt != "PNG" else _encode(_photo(), fmt))
    assert loaded.image_bgr.shape == (48, 64, 3)
    assert loaded.scale == 1.0
    blue, green, red = loaded.image_bgr[24, 8].astype(int)
    assert blue > 200 and red < 60 and green < 60


def test_exif_orientation_is_applied():
    image = Image.fromarray(_photo()[:, :, ::-1])
    exif = image.getexif()
    exif[0x0112] = 6  # the camera was turned: rotate 90 degrees clockwise to view
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif.tobytes(), quality=95)
    loaded = decode_image(buffer.getvalue())
    assert loaded.image_bgr.shape == (64, 48, 3)
    assert loaded.original_size == (48, 64)
    # The blue left half is now the top half.
    assert loaded.image_bgr[8, 24, 0] > 200 and loaded.image_bgr[56, 24, 0] < 60


def test_large_photo_is_downscaled_with_scale_recorded():
    big = np.zeros((3000, 4000, 3), np.uint8)
    ok, data = cv2.imencode(".jpg", big)
    loaded = decode_image(data.tobytes(), max_side=1000)
    assert loaded.image_bgr.shape == (750, 1000, 3)
    assert loaded.scale == pytest.approx(0.25)
    assert loaded.original_size == (4000, 3000)
    np.testing.assert_allclose(loaded.to_original([[250.0, 100.0]]), [[1000.0, 400.0]])


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (b"this is a text file, not a photo", "not an image"),
])
def test_garbage_is_unreadable(data, words):
    with pytest.raises(UnreadableImage, match=words) as info:
        decode_image(data, source="x.jpg")
    assert info.value.exit_code == 2
    assert "\n" not in str(info.value)


def test_truncated_jpeg_is_unreadable():
    rng = np.random.default_rng(0)
    ok, data = cv2.imencode(".jpg", rng.integers(0, 255, (200, 300, 3), dtype=np.uint8))
    with pytest.raises(UnreadableImage, match="damaged or incomplete"):
        decode_image(data.tobytes()[: len(data) // 2])


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(UnreadableImage, match="no such file"):
        load_image(tmp_path / "nothing.jpg")
    with pytest.raises(UnreadableImage, match="directory"):
        load_image(tmp_path)


def test_load_image_reads_a_file(tmp_path):
    path = tmp_path / "board.png"
    path.write_bytes(_encode(_photo(), "PNG"))
    loaded = load_image(path)
    assert loaded.source == str(path)
    assert loaded.image_bgr.shape == (48, 64, 3)
