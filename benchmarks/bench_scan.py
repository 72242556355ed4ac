"""Scan photos with truth beside them: accuracy of the reading stages, calibration, and time per stage.

    python benchmarks/bench_scan.py DIR [--truth-geometry] [--limit N] [--in-view F] [--unsure 0.8 0.9 0.95]
        [--switch 0.175 0.667] [--piece-floor 0 0.4] [--stone-beside 0.5 0.8] [--setting FIELD=V[,V...]]
        [--calibration NAME]

DIR holds ``NAME.jpg`` + ``NAME.json`` (``fjords render --out DIR`` writes such
a folder). ``--truth-geometry`` reads the tiles at their TRUE corners instead of
the lattice fit, which measures the sector and piece stages alone. Several
``--unsure`` thresholds (or ``--mismatch`` weights, ``--switch`` chances,
``--piece-floor`` confidences, ``--stone-beside`` thresholds, or any other decoder setting with ``--setting``, e.g.
``--setting photo_look_rounds=1,3``) are compared on the same classifier outputs (the decoder is cheap).
``--in-view F`` keeps only the photos whose every true tile is at least ``F`` in
view, which separates reading errors from tiles under hands or cut off by the frame. Prints the pooled summary of :mod:`fjords.compare`, the
share of wrong sectors written ``?``, why pieces are wrong
(:func:`fjords.compare.piece_error_causes`), how many pieces of each colour are read right
(:func:`fjords.compare.pieces_by_colour`), what was written on sectors the photo shows and on sectors a hand
or the frame hides (:func:`fjords.compare.sector_outcomes_by_visibility`; renders of 2026-12-02 on) and on the
board's rim or inside it, on tiles holding a piece or not (:func:`fjords.compare.sector_outcomes_by_place`), rune stones
beside the tiles found and invented, legal
boards read with two pieces on a tile, how often confident tiles and pieces are wrong, each photo's errors,
the scanned tiles the lattice put off every true tile (:func:`fjords.compare.misplaced_tiles`), the figures by
the camera's elevation (:func:`by_elevation`) and median seconds per stage.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import time
from collections import Counter
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

from fjords.board import Board
from fjords.compare import (compare, misplaced_tiles, piece_error_causes, pieces_by_colour,
                            sector_outcomes_by_place, sector_outcomes_by_visibility, stones_and_crowding, summarize)
from fjords.errors import FjordsError
from fjords_cli.eval_command import find_photos
from scanner.assemble import DecodeSettings, assemble
from scanner.load import load_image
from scanner.pipeline import Scanner

#: Width in degrees of the camera-elevation bands of :func:`by_elevation` (the issue asks for 40° to 90°).
ELEVATION_BAND = 10


class TruthCell:
    """A tile of a render's truth, shaped like the lattice's ``CellGeometry``."""

    def __init__(self, tile: dict, scale: float):
        from fjords.geometry import Hex

        self.hex = Hex(tile["q"], tile["r"])
        self.corners_px = np.asarray(tile["corners_px"], dtype=np.float64) * scale
        self.visible = float(tile.get("visible", 1.0))


#: Decoder settings with an option of their own, by field: the option, and the name every report key gives the
#: setting (in this order).
OWN_OPTIONS = {"mismatch": ("--mismatch", "mismatch"), "switch": ("--switch", "switch"),
               "unsure": ("--unsure", "unsure"), "min_piece_confidence": ("--piece-floor", "piece_floor"),
               "min_stone_beside": ("--stone-beside", "stone_beside")}


def settings_grid(items: list[str]) -> dict[str, list]:
    """``FIELD=V[,V...]`` items as decoder settings to try, each value typed as the field's default.

    Raises ``ValueError`` with a one-line message for a field :class:`DecodeSettings` does not have, one with an
    option of its own (:data:`OWN_OPTIONS`), or a value its type does not take.
    """
    defaults = {field.name: getattr(DecodeSettings(), field.name) for field in fields(DecodeSettings)}
    grid: dict[str, list] = {}
    for item in items:
        name, _, values = item.partition("=")
        if name in OWN_OPTIONS:
            raise ValueError(f"--setting {item!r}: {name} has its own option, {OWN_OPTIONS[name][0]}")
        if name not in defaults or not values:
            raise ValueError(f"--setting {item!r}: expected FIELD=V[,V...] with FIELD a DecodeSettings field")
        kind = type(defaults[name])
        try:
            grid[name] = [_typed(value, kind) for value in values.split(",")]
        except ValueError:
            raise ValueError(f"--setting {item!r}: {name} takes {kind.__name__} values") from None
    return grid


def _typed(value: str, kind: type):
    """``value`` as a ``kind`` (bool: true / false / 1 / 0); ``ValueError`` where it is none."""
    if kind is bool:
        if value.lower() not in ("true", "false", "1", "0"):
            raise ValueError(value)
        return value.lower() in ("true", "1")
    return kind(value)


def measure(photos: list[Path], scanner: Scanner, truth_geometry: bool = False,
            grid: dict[str, list] | None = None) -> dict:
    """Scan ``photos`` (or read them at their true corners) and compare with their truth.

    Each combination of the values ``grid`` gives decoder settings (:class:`DecodeSettings` field → values; the
    scanner's own where it gives none) is decoded from the same classifier outputs. A combination's key names the
    settings of :data:`OWN_OPTIONS` always, then ``FIELD=VALUE`` for every other setting of ``grid``.
    """
    evidence, truths, elevations, seconds, timings = [], [], [], [], []
    for path in photos:
        truth_doc = json.loads(path.with_suffix(".json").read_text())
        truths.append(Board.from_json(truth_doc))
        elevations.append(truth_doc.get("camera", {}).get("elevation_deg"))
        start = time.perf_counter()
        try:
            if truth_geometry:
                loaded = load_image(path)
                stage_times: dict[str, float] = {}
                cells = [TruthCell(t, loaded.scale) for t in truth_doc["tiles"]]
                evidence.append(scanner.evidence(loaded.image_bgr, cells, scale=loaded.scale, timings=stage_times))
            else:
                result = scanner.scan_path(path)
                stage_times = result.timings
                evidence.append(result.evidence)
        except Exception as exc:  # noqa: BLE001 - a benchmark reports every failure and goes on
            print(f"{path.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
            evidence.append({})
            stage_times = {}
        seconds.append(time.perf_counter() - start)
        timings.append(stage_times)

    report = {}
    defaults = scanner.settings
    grid = {**{field: [getattr(defaults, field)] for field in OWN_OPTIONS}, **(grid or {})}
    for values in itertools.product(*grid.values()):
        chosen = dict(zip(grid, values))
        settings = replace(defaults, **chosen)
        boards = [assemble(ev, settings=settings, piece_calibration=scanner.piece_calibration) for ev in evidence]
        comparisons = [compare(board, truth) for board, truth in zip(boards, truths)]

        def pooled(diagnosis) -> Counter:
            """A diagnosis of :mod:`fjords.compare` (counts per photo) summed over the photos."""
            return sum((diagnosis(b, t, c) for b, t, c in zip(boards, truths, comparisons)), Counter())

        causes = pooled(piece_error_causes)
        misplaced = [misplaced_tiles(board, truth) for board, truth in zip(boards, truths)]
        summary = summarize(comparisons).to_json()
        wrong = sum(c.total_sectors - c.correct_sectors for c in comparisons)
        flagged = sum(c.total_sectors - c.correct_sectors - c.silent_sector_errors for c in comparisons)
        report[" ".join(f"{OWN_OPTIONS[field][1] if field in OWN_OPTIONS else field}={value}"
                        for field, value in chosen.items())] = {
            "summary": {k: v for k, v in summary.items() if not isinstance(v, (dict, list))},
            "ci95": summary["ci95"],
            "wrong_sectors": wrong, "wrong_sectors_written_?": flagged,
            "doubtful_pieces": sum(len(b.extra.get("doubtful_pieces", ())) for b in boards),
            "piece_error_causes": dict(causes.most_common()),
            "pieces_right_of_true_by_colour": right_of_true(pooled(pieces_by_colour)),
            "stones_and_crowding": dict(pooled(stones_and_crowding)),
            "sectors_by_visibility": dict(sorted(pooled(sector_outcomes_by_visibility).items())),
            "sectors_by_place": dict(sorted(pooled(sector_outcomes_by_place).items())),
            "reliability": summary["reliability"],
            "errors_by_photo": {path.name: c.errors for path, c in zip(photos, comparisons)},
            "misplaced_tiles_of_judged": pooled_misplaced(misplaced),
            "by_elevation": by_elevation(elevations, comparisons, misplaced),
        }
    stages = sorted({s for t in timings for s in t})
    report["median_seconds"] = {s: statistics.median([t.get(s, 0.0) for t in timings]) for s in stages}
    report["median_seconds"]["total"] = statistics.median(seconds)
    report["photos"] = len(photos)
    return report


def right_of_true(by_colour: Counter) -> dict[str, list[int]]:
    """:func:`fjords.compare.pieces_by_colour`'s pooled counts as ``{colour: [right, true]}``, most pieces first."""
    names = sorted((n for n in by_colour if not n.endswith(" right")), key=lambda n: (-by_colour[n], n))
    return {n: [by_colour[f"{n} right"], by_colour[n]] for n in names}


def pooled_misplaced(misplaced: list[tuple[int, int]]) -> list[int]:
    """Scanned tiles misplaced and judged (:func:`fjords.compare.misplaced_tiles`), summed over the photos."""
    return [sum(count for count, _ in misplaced), sum(judged for _, judged in misplaced)]


def by_elevation(elevations: list[float | None], comparisons: list, misplaced: list[tuple[int, int]]
                 ) -> dict[str, dict]:
    """The photos' figures by the camera's elevation over the table (the truth's ``camera.elevation_deg``), in
    bands of :data:`ELEVATION_BAND` degrees (90 joins the top band); photos without it are left out.

    Per band: photos, errors per board (with its 95 % interval), silent sector errors, board and score exact,
    and the scanned tiles misplaced of those judged (``misplaced``: each photo's
    :func:`fjords.compare.misplaced_tiles`).
    """
    bands: dict[int, list[int]] = {}
    for n, elevation in enumerate(elevations):
        if elevation is not None:
            bands.setdefault(min(int(elevation // ELEVATION_BAND) * ELEVATION_BAND, 90 - ELEVATION_BAND), []).append(n)
    out = {}
    for low in sorted(bands):
        members = bands[low]
        summary = summarize([comparisons[n] for n in members]).to_json()
        out[f"{low}-{low + ELEVATION_BAND}"] = {
            "photos": len(members), "errors_per_board": summary["mean_errors"],
            "errors_per_board_ci95": summary["ci95"]["mean_errors"],
            "silent_sector_errors": sum(comparisons[n].silent_sector_errors for n in members),
            "board_exact": sum(comparisons[n].board_exact for n in members),
            "score_exact": sum(comparisons[n].score_exact for n in members),
            "misplaced_tiles_of_judged": pooled_misplaced([misplaced[n] for n in members])}
    return out


def photos_in(folder: Path, in_view: float | None = None) -> list[Path]:
    """The photos of ``folder`` (:func:`fjords_cli.eval_command.find_photos`: ``FjordsError`` when it holds none),
    only those whose every true tile is at least ``in_view`` in view when it is given (:func:`all_in_view`)."""
    return [photo for photo in find_photos(folder) if in_view is None or all_in_view(photo, in_view)]


def all_in_view(photo: Path, share: float) -> bool:
    """Whether every tile of the photo's truth is at least ``share`` in view (not cut off, not under a hand)."""
    truth = json.loads(photo.with_suffix(".json").read_text())
    return all(float(tile.get("visible", 1.0)) >= share for tile in truth["tiles"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--truth-geometry", action="store_true", help="read tiles at their true corners")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--in-view", type=float, metavar="F",
                        help="only photos whose every true tile is at least this share in view (truth 'visible')")
    parser.add_argument("--unsure", type=float, nargs="+", default=[DecodeSettings.unsure])
    parser.add_argument("--mismatch", type=float, nargs="+", default=[DecodeSettings.mismatch])
    parser.add_argument("--switch", type=float, nargs="+", default=[DecodeSettings.switch],
                        help="chance the next sector round a rim differs (2/3: no ring prior)")
    parser.add_argument("--piece-floor", type=float, nargs="+", default=[DecodeSettings.min_piece_confidence],
                        help="calibrated confidence under which a tile's one piece is set aside as doubtful")
    parser.add_argument("--stone-beside", type=float, nargs="+", default=[DecodeSettings.min_stone_beside],
                        help="chance of a rune stone at which one is read on an empty position beside the tiles")
    parser.add_argument("--setting", action="append", default=[], metavar="FIELD=V[,V...]",
                        help="also try these values of any scanner.assemble.DecodeSettings field (repeatable)")
    parser.add_argument("--calibration", metavar="NAME", help="scan with this calibration (fjords calibrate)")
    parser.add_argument("--models", type=Path, help="folder of the ONNX models (default: models/)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    try:
        grid = settings_grid(args.setting)
        photos = photos_in(args.dir, args.in_view)[: args.limit]
    except (FjordsError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    grid = {"mismatch": args.mismatch, "switch": args.switch, "unsure": args.unsure,
            "min_piece_confidence": args.piece_floor, "min_stone_beside": args.stone_beside, **grid}
    report = measure(photos, Scanner(args.models, calibration=args.calibration), args.truth_geometry, grid)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
