"""What the pieces on the tiles cost the sector reading: each render photographed again without them.

    python benchmarks/bench_piece_effect.py DIR [--in-view 0.95] [--limit N] [--json]

Each render of DIR (``fjords render``: its truth keeps the scene it was drawn from) is drawn again from its seed
and scene twice: as it was, which must give the same photo (otherwise it is left out: a copy's printing, drawn
from a seed the truth does not keep, or another renderer version), and with its houses and settlers shrunk to
specks (the scene's ``piece_scale``; rune stones stay). Both are read at their true corners, so the lattice plays
no part, and the sectors' outcomes are counted on the board's rim and inside it, on tiles holding a piece and not
(:func:`fjords.compare.sector_outcomes_by_place`). What the pieces cost is the difference. The second photos go
to a temporary folder; nothing is written beside the renders.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from bench_scan import measure, photos_in

from fjords.boardjson import read_board_file
from fjords.errors import FjordsError
from renderer import render_board
from renderer.scene import Scene
from scanner.pipeline import Scanner

#: ``piece_scale`` of the photos without pieces: houses and settlers a fiftieth of their size, a few pixels.
NO_PIECES_SCALE = 0.02
#: Largest mean absolute difference (0-255) between a photo and its render drawn again that counts as the same
#: photo: the JPEG coding alone gives about 0.1.
SAME_PHOTO = 1.0


def drawn_again(truth_path: Path, **pinned) -> np.ndarray | None:
    """The render of ``truth_path`` drawn again from its seed and scene (with ``pinned`` scene fields changed), or
    None when the truth keeps no scene."""
    doc = json.loads(truth_path.read_text())
    render = doc.get("render") or {}
    if "scene" not in render or "seed" not in render:
        return None
    fields = {field.name for field in dataclasses.fields(Scene)}
    scene = {k: tuple(v) if isinstance(v, list) else v for k, v in render["scene"].items() if k in fields}
    style = scene.pop("style")
    return render_board(read_board_file(str(truth_path)), render["seed"], width=doc["image"]["width"],
                        height=doc["image"]["height"], style=style, **{**scene, **pinned}).image


def without_pieces(photos: list[Path], out: Path) -> tuple[list[Path], list[Path]]:
    """The photos whose render is drawn again the same, and their copies without pieces written into ``out``."""
    kept, copies = [], []
    for photo in photos:
        truth_path = photo.with_suffix(".json")
        try:
            again = drawn_again(truth_path)
        except (OSError, ValueError, KeyError, TypeError, FjordsError):  # no truth, or not a render's
            again = None
        original = cv2.imread(str(photo))
        if again is None or original is None or again.shape != original.shape or \
                np.abs(again.astype(np.int16) - original).mean() > SAME_PHOTO:
            print(f"{photo.name}: not drawn again the same; left out", file=sys.stderr)
            continue
        copy = out / photo.name
        cv2.imwrite(str(copy), drawn_again(truth_path, piece_scale=NO_PIECES_SCALE), [cv2.IMWRITE_JPEG_QUALITY, 95])
        (out / truth_path.name).write_text(truth_path.read_text())
        kept.append(photo)
        copies.append(copy)
    return kept, copies


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path, help="renders of `fjords render`, each beside its truth")
    parser.add_argument("--in-view", type=float, metavar="F", help="only renders wholly in view to this share")
    parser.add_argument("--limit", type=int, help="at most this many renders")
    parser.add_argument("--models", type=Path, help="folder of the ONNX models (default: models/)")
    parser.add_argument("--json", action="store_true", help="indented JSON")
    args = parser.parse_args(argv)
    try:
        photos = photos_in(args.dir, args.in_view)[: args.limit]
    except FjordsError as exc:
        print(exc, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        kept, copies = without_pieces(photos, Path(folder))
        if not kept:
            print(f"no render in {args.dir} could be drawn again the same (renders of `fjords render` only)",
                  file=sys.stderr)
            return 2
        scanner = Scanner(args.models)
        report = {"photos": len(kept)}
        for name, read in (("with pieces", kept), ("without pieces", copies)):
            (figures,) = _one_setting(measure(read, scanner, truth_geometry=True))
            report[name] = {"sectors_by_place": figures["sectors_by_place"],
                            "wrong_sectors": figures["wrong_sectors"],
                            "wrong_sectors_written_?": figures["wrong_sectors_written_?"]}
    wrong = {name: Counter({k: v for k, v in report[name]["sectors_by_place"].items() if not k.endswith("right")})
             for name in ("with pieces", "without pieces")}
    report["wrong or ? by place, with / without pieces"] = {
        place: [wrong["with pieces"][place], wrong["without pieces"][place]]
        for place in sorted(set(wrong["with pieces"]) | set(wrong["without pieces"]))}
    print(json.dumps(report, indent=2 if args.json else None))
    return 0


def _one_setting(report: dict) -> tuple[dict]:
    """The figures of :func:`bench_scan.measure`'s one decoder setting (its report's only dict with a summary)."""
    return tuple(value for value in report.values() if isinstance(value, dict) and "summary" in value)


if __name__ == "__main__":
    sys.exit(main())
