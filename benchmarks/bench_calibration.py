"""Calibrating from one photo: accuracy on the other photos of the same table, before and after.

    python benchmarks/bench_calibration.py DIR [--calibrate-on NAME.jpg] [--truth-geometry] [--in-view F] [--json]

DIR holds ``NAME.jpg`` + ``NAME.json`` photos of one table, e.g. renders of one
copy in the style and piece colours no model trained on::

    fjords render --count 40 --seed 1200000 --style vintage --colours orange,purple --copy 7 --out DIR

The calibration is made from one photo and its truth (the first by name that
``fjords calibrate`` accepts, or ``--calibrate-on``), exactly as ``fjords calibrate`` makes it, but kept in
memory; every other photo is then scanned without and with it and compared with
its truth (:func:`bench_scan.measure`). ``--truth-geometry`` reads the tiles at
their true corners, isolating the reading stages from the lattice fit. ``--in-view F``
measures only the other photos whose every true tile is at least ``F`` in view (the
calibration is still made from the first photo that calibrates): a tile cut off by the
frame or under a hand cannot be read with or without a calibration.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench_scan import all_in_view, measure

from fjords.boardjson import read_board_file
from fjords.errors import FjordsError
from fjords_cli.eval_command import find_photos
from scanner.calibrate import calibrate
from scanner.calibration import CalibrationError
from scanner.load import load_image
from scanner.pipeline import Scanner


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--calibrate-on", metavar="NAME.jpg", help="the photo to calibrate from (default: first)")
    parser.add_argument("--truth-geometry", action="store_true", help="read tiles at their true corners")
    parser.add_argument("--in-view", type=float, metavar="F",
                        help="measure only photos whose every true tile is at least this share in view")
    parser.add_argument("--models", type=Path, help="folder of the ONNX models (default: models/)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    try:
        photos = find_photos(args.dir)
    except FjordsError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.calibrate_on:
        photos.sort(key=lambda p: p.name != args.calibrate_on)
    scanner = Scanner(args.models)
    source, calibration = None, None
    for candidate in photos[:-1]:  # as a player would: the first photo that calibrates (one is enough)
        loaded = load_image(candidate)
        try:
            calibration = calibrate(scanner, loaded.image_bgr, read_board_file(str(candidate.with_suffix(".json"))),
                                    "bench", scale=loaded.scale, photo=candidate.name)
        except CalibrationError as exc:
            print(f"{candidate.name}: not calibrated from: {exc}", file=sys.stderr)
            continue
        source = candidate
        break
    if source is None:
        print(f"no photo in {args.dir} could be calibrated from (and at least one other needed)", file=sys.stderr)
        return 2
    others = [p for p in photos if p != source and (args.in_view is None or all_in_view(p, args.in_view))]
    report = {"calibrated_on": source.name, "calibration": calibration.to_json(), "photos": len(others)}
    for label, calibrated in (("without", None), ("with", calibration)):
        result = measure(others, Scanner(args.models, calibration=calibrated), args.truth_geometry)
        report[label] = next(v for k, v in result.items() if k.startswith("mismatch="))
        report[label]["median_seconds"] = result["median_seconds"]["total"]
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"calibrated on {source.name}: {json.dumps(calibration.report)}")
        print(f"colours: {json.dumps(calibration.to_json()['colours'])}  naming: {calibration.colour_naming}")
        for label in ("without", "with"):
            print(f"{label} calibration, {len(others)} photos: {json.dumps(report[label]['summary'])}")
            print(f"  wrong sectors {report[label]['wrong_sectors']}, written '?' "
                  f"{report[label]['wrong_sectors_written_?']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
