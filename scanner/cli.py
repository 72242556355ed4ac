"""``fjords scan``: read photos of Fjords tables."""

from __future__ import annotations

import argparse
import glob
import json
import sys
from pathlib import Path
from typing import Any

from fjords.board import EDITIONS, Board
from fjords.errors import FjordsError

DESCRIPTION = """Read photos of Fjords tables: tiles, pieces, legality, scores and contested land.

Prints a summary per photo; --json prints the fjords-board/1 document instead
(with confidences, image geometry, model versions and the engine's analysis:
legality, score, territory). Sectors the scan could not read are written '?'."""

EPILOG = """exit codes: 0 photo read, 2 unreadable input (file, calibration),
3 no board found in the photo, 4 photo must be retaken (blurred, dark, glare).
With several photos, every photo is tried and the first failure's code is returned."""


class OutputExists(FjordsError):
    """An output file exists and --force was not given (exit code 2)."""


def photo_paths(arguments: list[str]) -> list[str]:
    """The photos the command line names: a folder stands for the photos in it, by name, and a pattern no file
    is called (``*.jpg``, which shells on Windows pass on as it is) for the files it matches."""
    from scanner.load import PHOTO_SUFFIXES

    photos = []
    for argument in arguments:
        path = Path(argument)
        if path.is_dir():
            inside = sorted(str(p) for p in path.iterdir() if p.is_file() and p.suffix.lower() in PHOTO_SUFFIXES)
            if not inside:
                raise FjordsError(f"{argument}: no photo in this folder ({', '.join(PHOTO_SUFFIXES)})")
            photos += inside
        elif not path.exists() and any(c in argument for c in "*?["):
            photos += sorted(glob.glob(argument)) or [argument]
        else:
            photos.append(argument)
    return photos


def _check_distinct_outputs(photos: list[str]) -> None:
    """Refuse photos that would write the same files in ``--out`` (IMG_0001.jpg of two days' folders)."""
    first: dict[str, str] = {}
    for photo in photos:
        stem = Path(photo).stem
        if stem in first:
            raise FjordsError(f"{first[stem]} and {photo} would both be written as {stem}.json in --out: "
                              "scan them into different folders")
        first[stem] = photo


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("scan", help="read photos of Fjords tables", description=DESCRIPTION,
                                   epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photos", nargs="+", metavar="PHOTO", help="JPEG, PNG, WebP, TIFF, BMP (HEIC with "
                        "pillow-heif), or a folder: the photos in it, by name")
    parser.add_argument("--json", action="store_true", help="print the fjords-board/1 document (one per line "
                        "with several photos) instead of the summary")
    parser.add_argument("--overlay", metavar="OUT.jpg", help="write the annotated photo (one photo only)")
    parser.add_argument("--out", metavar="DIR", type=Path, help="write NAME.json and NAME.overlay.jpg per photo")
    parser.add_argument("--calibration", metavar="NAME", help="read with your table's calibration: a NAME saved by "
                        "fjords calibrate, a shipped example in calibration/, or a JSON file")
    parser.add_argument("--edition", choices=EDITIONS, help="the edition played (default: read from the pieces: "
                        "a rune stone or more than two colours make it 2022); the classic edition's two players "
                        "bound the colours read")
    parser.add_argument("--models", metavar="DIR", type=Path, help="folder of the ONNX models (default: models/)")
    parser.add_argument("--force", action="store_true", help="overwrite existing output files")
    parser.set_defaults(run=run)


def analysis(board: Board) -> dict[str, Any]:
    """The engine's verdict on a scanned board: legality, score, territory."""
    parts = {"legality": lambda: [v.to_json() for v in board.legal_violations()],
             "score": board.score, "territory": lambda: board.territory().to_json()}
    out: dict[str, Any] = {}
    for key, compute in parts.items():
        try:
            out[key] = compute()
        except ModuleNotFoundError:  # an engine without that analysis installed
            continue
    return out


def document(board: Board, advice: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The scan's fjords-board/1 document with the engine's analysis and the scan's advice added."""
    doc = board.to_json()
    if advice:
        doc.setdefault("scanner", {})["advice"] = list(advice)
    doc.update(analysis(board))
    return doc


def summary(name: str, result, doc: dict[str, Any]) -> str:
    """A few lines a player reads: tiles, pieces, scores, rule breaks, contested land, unread cells."""
    board = result.board
    lines = [f"{name}: {len(board.tiles)} tiles, {len(board.pieces)} pieces, {board.edition} edition "
             f"({result.seconds:.2f} s)"]
    for player in board.players:
        mine = [p for p in board.pieces if p.player == player]
        houses = sum(p.kind == "house" for p in mine)
        lines.append(f"  {player}: {houses} houses, {len(mine) - houses} settlers, "
                     f"score {doc.get('score', {}).get(player, 0)}")
    runes = sum(p.kind == "runestone" for p in board.pieces)
    if runes:
        lines.append(f"  rune stones: {runes}")
    from scanner.pipeline import tiles_past_edge

    violations = doc.get("legality", [])
    unseen = bool(board.extra.get("possibly_hidden_tiles")) or bool(tiles_past_edge(board))
    lines.append("  legal" if not violations else f"  {len(violations)} rule violation(s)"
                 + (" (tiles the photo hides or leaves out may cause some: see the notes):" if unseen else ":"))
    lines += [f"    - {v['message']}" for v in violations]
    territory = doc.get("territory") or {}
    contested = territory.get("contested") or []
    if contested:
        cells = ", ".join(f"({c['q']},{c['r']}) {'/'.join(c['players'])}" for c in contested[:8])
        lines.append(f"  contested tiles: {len(contested)}: {cells}{' …' if len(contested) > 8 else ''}")
    lines += [f"  note: {a}" for a in result.advice]
    return "\n".join(lines)


def _check_free(paths: list[Path], force: bool) -> None:
    for path in paths:
        if path.exists() and not force:
            raise OutputExists(f"{path} exists; use --force to overwrite it")


def _write_overlay(path: Path, result, doc: dict[str, Any]) -> None:
    import cv2

    from scanner.overlay import draw_overlay

    image = draw_overlay(result.image_bgr, result.board, doc)
    if not cv2.imwrite(str(path), image):
        raise OutputExists(f"cannot write {path}")


def run(args: argparse.Namespace) -> int:
    from scanner.pipeline import Scanner

    args.photos = photo_paths(args.photos)
    if args.overlay and len(args.photos) > 1:
        raise FjordsError("--overlay takes one photo; use --out DIR for several")
    if args.overlay:
        _check_free([Path(args.overlay)], args.force)
    if args.out:
        _check_distinct_outputs(args.photos)
        args.out.mkdir(parents=True, exist_ok=True)
        _check_free([p for photo in args.photos for p in _out_paths(args.out, photo)], args.force)
    scanner = Scanner(args.models, calibration=args.calibration, edition=args.edition)
    photos = args.photos
    if len(photos) > 1:
        from tqdm import tqdm

        photos = tqdm(photos, desc="scanning", unit="photo", file=sys.stderr)
    first_failure = 0
    for photo in photos:
        try:
            result = scanner.scan_path(photo)
        except FjordsError as exc:
            if len(args.photos) == 1:
                raise
            print(f"fjords: error: {photo}: {exc}", file=sys.stderr)
            first_failure = first_failure or exc.exit_code
            continue
        doc = document(result.board, result.advice)
        if args.json:
            print(json.dumps(doc, indent=None if len(args.photos) > 1 else 2))
        else:
            print(summary(photo, result, doc))
        if args.overlay:
            _write_overlay(Path(args.overlay), result, doc)
        if args.out:
            json_path, overlay_path = _out_paths(args.out, photo)
            json_path.write_text(json.dumps(doc, indent=2) + "\n")
            _write_overlay(overlay_path, result, doc)
    return first_failure


def _out_paths(out: Path, photo: str) -> tuple[Path, Path]:
    stem = Path(photo).stem
    return out / f"{stem}.json", out / f"{stem}.overlay.jpg"
