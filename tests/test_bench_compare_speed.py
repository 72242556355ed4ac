"""benchmarks/compare_scan_speed.py: each checkout's own code is timed, photo by photo."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_PIPELINE = """
import time
from fjords.errors import FjordsError


class Scanner:
    def scan_path(self, path):
        if str(path).endswith("refused.jpg"):
            raise FjordsError("no board")
        time.sleep({delay})

    def scan(self, frame, *, previous=None, scale=1.0, original_size=None, file=None):
        # A frame follows the one named before it in its folder, or is its folder's first.
        expected = None if file == "f0.jpg" else f"f{{int(file[1]) - 1}}.jpg"
        if (previous and previous[1]) != expected or previous and previous[0] != frame:
            raise FjordsError("not following the frame before")
        time.sleep({delay})
        return frame, file
"""

FAKE_LOAD = """
from types import SimpleNamespace


def load_image(path):
    return SimpleNamespace(image_bgr=str(path.parent), scale=1.0, original_size=(4, 3))
"""


@pytest.fixture
def compare_scan_speed(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("compare_scan_speed", ROOT / "benchmarks" / "compare_scan_speed.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _checkout(folder: Path, delay: float) -> Path:
    (folder / "scanner").mkdir(parents=True)
    (folder / "scanner" / "__init__.py").write_text("")
    (folder / "scanner" / "pipeline.py").write_text(FAKE_PIPELINE.format(delay=delay))
    (folder / "scanner" / "load.py").write_text(FAKE_LOAD)
    return folder


def test_paired_ratio_of_a_code_twice_as_fast_is_a_half(compare_scan_speed):
    old = [0.5, 1.0, 2.0, 4.0, 8.0]
    ratio, low, high = compare_scan_speed.paired_ratio(old, [t / 2 for t in old])
    assert ratio == pytest.approx(0.5) and low == pytest.approx(0.5) and high == pytest.approx(0.5)


def test_paired_ratio_interval_holds_the_median_ratio(compare_scan_speed):
    old = [1.0] * 9
    new = [0.7, 0.8, 0.9, 1.0, 1.0, 1.1, 1.2, 0.95, 1.05]
    ratio, low, high = compare_scan_speed.paired_ratio(old, new)
    assert low < ratio < high and ratio == pytest.approx(1.0)


def test_each_checkout_scans_with_its_own_code_and_refused_photos_are_left_out(compare_scan_speed, tmp_path,
                                                                                 capsys, monkeypatch):
    old, new = _checkout(tmp_path / "old", 0.04), _checkout(tmp_path / "new", 0.02)
    photos = tmp_path / "photos"
    photos.mkdir()
    for name in ["a0", "a1", "a2", "a3", "a4", "a5", "refused"]:
        (photos / f"{name}.jpg").write_bytes(b"")
    monkeypatch.chdir(old)  # started from one checkout, the workers must still import their own
    assert compare_scan_speed.main([str(old), str(new), str(photos)]) == 0
    out = capsys.readouterr().out
    assert "6 photos scanned by both (of 7)" in out
    ratio = float(out.rsplit("per photo: ", 1)[1].split()[0])
    assert 0.4 < ratio < 0.65, out


def test_following_frames_each_scan_follows_the_frame_before_and_first_frames_are_left_out(compare_scan_speed, tmp_path,
                                                                                                capsys):
    old, new = _checkout(tmp_path / "old", 0.04), _checkout(tmp_path / "new", 0.02)
    clips = [tmp_path / "clip1", tmp_path / "clip2"]
    for clip in clips:
        clip.mkdir()
        for n in range(4):
            (clip / f"f{n}.jpg").write_bytes(b"")
    assert compare_scan_speed.main([str(old), str(new), *map(str, clips), "--follow"]) == 0
    out = capsys.readouterr().out
    assert "6 frames following another scanned by both (of 8)" in out
    ratio = float(out.rsplit("per photo: ", 1)[1].split()[0])
    assert 0.4 < ratio < 0.65, out


def test_a_folder_that_is_no_checkout_is_refused_in_one_line(compare_scan_speed, tmp_path, capsys):
    with pytest.raises(SystemExit) as refused:
        compare_scan_speed.main([str(tmp_path), str(ROOT), str(ROOT / "sample_images")])
    assert refused.value.code == 2
    assert "is not a checkout of this project" in capsys.readouterr().err
