"""benchmarks/bench_piece_effect.py: a render drawn again, as it was and without its pieces."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

from renderer import render_random

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmark imports bench_scan beside it
    try:
        spec = importlib.util.spec_from_file_location("bench_piece_effect", ROOT / "benchmarks" / "bench_piece_effect.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_a_render_is_drawn_again_the_same_and_without_pieces_only_where_they_stood(tmp_path):
    bench = _bench()
    # `fjords render` names the style (a style left to the renderer is drawn from the seed, before the scene).
    photo = next(p for p in (render_random(s, width=320, height=240, style="pastel") for s in range(20))
                 if p.truth["pieces"])
    truth = tmp_path / "render.json"
    truth.write_text(json.dumps(photo.truth))
    np.testing.assert_array_equal(bench.drawn_again(truth), photo.image)
    bare = bench.drawn_again(truth, piece_scale=bench.NO_PIECES_SCALE)
    changed = np.abs(bare.astype(int) - photo.image).max(axis=2) > 40
    assert changed.any()
    # What changed is the pieces and their shadows, near the pieces' boxes.
    near = np.zeros_like(changed)
    for piece in photo.truth["pieces"]:
        x0, y0, x1, y1 = np.round(piece["bbox_px"]).astype(int)
        pad = max(x1 - x0, y1 - y0)
        near[max(0, y0 - pad):y1 + pad, max(0, x0 - pad):x1 + pad] = True
    assert changed[near].sum() > 0.95 * changed.sum()


def test_a_truth_without_its_scene_is_not_drawn_again(tmp_path):
    truth = tmp_path / "board.json"
    truth.write_text(json.dumps({"format": "fjords-board/1", "edition": "classic", "tiles": [], "pieces": []}))
    assert _bench().drawn_again(truth) is None


def test_a_folder_of_photos_that_cannot_be_drawn_again_is_refused_in_one_line(tmp_path, capsys):
    import cv2

    cv2.imwrite(str(tmp_path / "table.jpg"), np.full((60, 80, 3), 128, np.uint8))
    (tmp_path / "table.json").write_text(json.dumps({"format": "fjords-board/1", "edition": "classic",
                                                      "tiles": [], "pieces": []}))
    assert _bench().main([str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("no render in ")
