"""Scan photos with truth beside them: accuracy of the reading stages, calibration, and time per stage.

    python benchmarks/bench_scan.py DIR [--truth-geometry] [--limit N] [--unsure 0.8 0.9 0.95]

DIR holds ``NAME.jpg`` + ``NAME.json`` (``fjords render --out DIR`` writes such
a folder). ``--truth-geometry`` reads the tiles at their TRUE corners instead of
the lattice fit, which measures the sector and piece stages alone. Several
``--unsure`` thresholds are compared on the same classifier outputs (the
decoder is cheap). Prints the pooled summary of :mod:`fjords.compare`, the
share of wrong sectors written ``?``, how often confident tiles and pieces
are wrong, and median seconds per stage.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from fjords.board import Board
from fjords.compare import compare, summarize
from scanner.assemble import DecodeSettings, assemble
from scanner.load import load_image
from scanner.pipeline import Scanner


class TruthCell:
    """A tile of a render's truth, shaped like the lattice's ``CellGeometry``."""

    def __init__(self, tile: dict, scale: float):
        from fjords.geometry import Hex

        self.hex = Hex(tile["q"], tile["r"])
        self.corners_px = np.asarray(tile["corners_px"], dtype=np.float64) * scale
        self.visible = float(tile.get("visible", 1.0))


def confident_errors(scanned: Board, truth: Board, rotation: int, translation: tuple[int, int],
                     level: float = 0.99) -> tuple[int, int, int, int]:
    """(confident tiles, of them wrong, confident pieces, of them wrong) after the comparison's alignment."""
    aligned = scanned.rotated(rotation).translated(*translation)
    sure_tiles = wrong_tiles = sure_pieces = wrong_pieces = 0
    for tile in aligned.tiles.values():
        if tile.extra.get("confidence", 0.0) >= level:
            sure_tiles += 1
            true = truth.tiles.get(tile.hex)
            wrong_tiles += true is None or true.terrain != tile.terrain
    truth_pieces = {(p.hex, p.kind, p.player) for p in truth.pieces}
    for piece in aligned.pieces:
        if piece.extra.get("confidence", 0.0) >= level:
            sure_pieces += 1
            wrong_pieces += (piece.hex, piece.kind, piece.player) not in truth_pieces
    return sure_tiles, wrong_tiles, sure_pieces, wrong_pieces


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--truth-geometry", action="store_true", help="read tiles at their true corners")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--unsure", type=float, nargs="+", default=[DecodeSettings.unsure])
    parser.add_argument("--mismatch", type=float, nargs="+", default=[DecodeSettings.mismatch])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    photos = sorted(p for p in args.dir.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp")
                    and p.with_suffix(".json").exists())[: args.limit]
    if not photos:
        print(f"no photos with truth in {args.dir}", file=sys.stderr)
        return 2
    scanner = Scanner()
    evidence, truths, seconds, timings = [], [], [], []
    for path in photos:
        truth_doc = json.loads(path.with_suffix(".json").read_text())
        truths.append(Board.from_json(truth_doc))
        start = time.perf_counter()
        try:
            if args.truth_geometry:
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
    for mismatch in args.mismatch:
        for unsure in args.unsure:
            settings = replace(scanner.settings, unsure=unsure, mismatch=mismatch)
            comparisons, sure = [], np.zeros(4, int)
            for ev, truth in zip(evidence, truths):
                board = assemble(ev, settings=settings)
                c = compare(board, truth)
                comparisons.append(c)
                sure += confident_errors(board, truth, c.rotation, c.translation)
            summary = summarize(comparisons).to_json()
            wrong = sum(c.total_sectors - c.correct_sectors for c in comparisons)
            flagged = sum(c.total_sectors - c.correct_sectors - c.silent_sector_errors for c in comparisons)
            key = f"mismatch={mismatch} unsure={unsure}"
            report[key] = {
                "summary": {k: v for k, v in summary.items() if not isinstance(v, (dict, list))},
                "wrong_sectors": wrong, "wrong_sectors_written_?": flagged,
                "confident_tiles": int(sure[0]), "confident_tiles_wrong": int(sure[1]),
                "confident_pieces": int(sure[2]), "confident_pieces_wrong": int(sure[3]),
            }
    stages = sorted({s for t in timings for s in t})
    report["median_seconds"] = {s: statistics.median([t.get(s, 0.0) for t in timings]) for s in stages}
    report["median_seconds"]["total"] = statistics.median(seconds)
    report["photos"] = len(photos)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for key, value in report.items():
            print(f"{key}: {json.dumps(value)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
