"""How far a scan moves when the photo moves by less than the eye can see.

    python benchmarks/bench_stability.py DIR [--limit N] [--noise 1.0] [--list 10] [--models DIR] [--json]

Every photo of DIR (``NAME.jpg`` beside its truth ``NAME.json``) is scanned as it is and as two copies that
differ from it by less than anyone could see: with sensor noise of ``--noise`` grey levels (standard deviation,
drawn afresh for each photo from a seed of its name) and encoded once more as a JPEG of quality 95. Two frames
of a still table from an overhead camera differ by about that much, and two phone photos of it by far more, so
a reading that changes here is one a stream shows flickering and a player sees change when they take the photo
again.

For each copy it prints the total errors and silent sector errors against the truth
(:func:`fjords.compare.compare`) beside the photo's own, the photos whose errors moved (at all, by 5 or more, by
20 or more), the sum of those moves, and the photos whose scanned board changed at all (terrain, pieces or
edition), then the photos that moved most.
The moves are also the noise floor of a decision judged on these photos: a change to the scanner that moves
the total errors by less than an invisible copy of the photos does cannot be told from luck; ``--models`` scans
with a candidate's models, so that it can be judged on the copies too.
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from collections import Counter
from pathlib import Path

import cv2
import numpy as np

from fjords.board import Board
from fjords.boardjson import read_board_file
from fjords.compare import compare
from fjords.errors import FjordsError
from fjords_cli.eval_command import find_photos
from scanner.load import load_image
from scanner.pipeline import Scanner

#: JPEG quality of the re-encoded copy (what a phone or ``fjords render`` writes).
REENCODE_QUALITY = 95
#: Error moves counted apart: a photo that moves this much read a different lattice or many tiles otherwise.
LARGE_MOVES = (5, 20)


def with_noise(image: np.ndarray, sigma: float, seed: int) -> np.ndarray:
    """The image with Gaussian sensor noise of ``sigma`` grey levels, rounded back to 8 bits.

    Parameters
    ----------
    image : ndarray (H, W, 3) of uint8
    sigma : float
        Standard deviation of the noise, in grey levels.
    seed : int
        Seed of the noise (the same seed gives the same copy).
    """
    noise = np.random.default_rng(seed).normal(0.0, sigma, image.shape)
    return np.clip(np.rint(image + noise), 0, 255).astype(np.uint8)


def reencoded(image: np.ndarray, quality: int = REENCODE_QUALITY) -> np.ndarray:
    """The image encoded as a JPEG of ``quality`` and decoded again."""
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("the image could not be encoded as a JPEG")
    return cv2.imdecode(data, cv2.IMREAD_COLOR)


def same_reading(a: Board, b: Board) -> bool:
    """True when two scans read the same tiles, terrain and pieces (confidences aside)."""
    return a.edition == b.edition and dict(a.tiles) == dict(b.tiles) and Counter(a.pieces) == Counter(b.pieces)


def copies(image: np.ndarray, name: str, sigma: float) -> dict[str, np.ndarray]:
    """The invisible copies of one photo, by name; the noise is seeded by the photo's name."""
    return {f"noise {sigma:g}": with_noise(image, sigma, zlib.crc32(name.encode())),
            f"jpeg {REENCODE_QUALITY}": reencoded(image)}


def measure(photos: list[Path], scanner: Scanner, sigma: float) -> dict:
    """Errors of every photo and of its copies, and the moves between them.

    Returns
    -------
    dict
        ``photos``: per photo its ``errors`` and, per copy, the copy's errors and whether its reading changed;
        ``copies``: per copy the totals (see the module's description).
    """
    rows = []
    for photo in photos:
        truth = read_board_file(str(photo.with_suffix(".json")))
        loaded = load_image(photo)
        scans = {}
        for label, image in {"photo": loaded.image_bgr, **copies(loaded.image_bgr, photo.name, sigma)}.items():
            try:
                scans[label] = scanner.scan(image, scale=loaded.scale, original_size=loaded.original_size).board
            except FjordsError:  # no board found: counted as an empty scan, as `fjords eval` does
                scans[label] = Board()
        found = {label: compare(board, truth) for label, board in scans.items()}
        rows.append({"name": photo.name, "errors": found["photo"].errors,
                     "silent": found["photo"].silent_sector_errors,
                     "copies": {label: {"errors": found[label].errors, "silent": found[label].silent_sector_errors,
                                        "changed": not same_reading(scans["photo"], board)}
                                for label, board in scans.items() if label != "photo"}})
    return {"photos": rows, "copies": {label: totals(rows, label) for label in rows[0]["copies"]} if rows else {}}


def totals(rows: list[dict], label: str) -> dict:
    """Totals of one copy over the photos: errors beside the photos' own, and how many photos moved."""
    moves = [row["copies"][label]["errors"] - row["errors"] for row in rows]
    summary = {"photos": len(rows), "errors_photo": sum(row["errors"] for row in rows),
               "errors_copy": sum(row["copies"][label]["errors"] for row in rows),
               "silent_photo": sum(row["silent"] for row in rows),
               "silent_copy": sum(row["copies"][label]["silent"] for row in rows),
               "photos_moved": sum(move != 0 for move in moves),
               "sum_of_moves": sum(abs(move) for move in moves),
               "boards_changed": sum(row["copies"][label]["changed"] for row in rows)}
    for size in LARGE_MOVES:
        summary[f"photos_moved_{size}_or_more"] = sum(abs(move) >= size for move in moves)
    return summary


def report(result: dict, most: int) -> str:
    """The plain-text report: one block per copy, then the photos that moved most."""
    lines = []
    for label, t in result["copies"].items():
        lines.append(f"{label}: {t['photos']} photos, errors {t['errors_photo']} -> {t['errors_copy']} "
                     f"({t['errors_copy'] - t['errors_photo']:+d}), silent sector errors {t['silent_photo']} -> "
                     f"{t['silent_copy']}; boards read otherwise {t['boards_changed']}; "
                     f"errors moved on {t['photos_moved']} (by >= {LARGE_MOVES[0]}: "
                     f"{t[f'photos_moved_{LARGE_MOVES[0]}_or_more']}, by >= {LARGE_MOVES[1]}: "
                     f"{t[f'photos_moved_{LARGE_MOVES[1]}_or_more']}), moves summed {t['sum_of_moves']}")
    moved = sorted(result["photos"], key=lambda row: -max((abs(c["errors"] - row["errors"])
                                                           for c in row["copies"].values()), default=0))
    for row in moved[:most]:
        spread = ", ".join(f"{label} {c['errors']}" for label, c in row["copies"].items())
        lines.append(f"  {row['name']}: {row['errors']} errors; {spread}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--noise", type=float, default=1.0, help="grey levels of sensor noise (default 1)")
    parser.add_argument("--list", type=int, default=10, metavar="N", help="name the N photos that moved most")
    parser.add_argument("--models", type=Path, help="folder of the ONNX models (default: models/)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        photos = find_photos(args.dir)[: args.limit]
    except FjordsError as exc:
        print(exc, file=sys.stderr)
        return 2
    result = measure(photos, Scanner(args.models), args.noise)
    print(json.dumps(result, indent=1) if args.json else report(result, args.list))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
