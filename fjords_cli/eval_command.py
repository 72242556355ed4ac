"""``fjords eval DIR``: scan every photo of a folder and compare each scan with its truth.

A photo ``NAME.jpg|.jpeg|.png|.webp`` takes part when its truth ``NAME.json``
lies beside it. Photos are scanned with :mod:`scanner.pipeline` or, with
``--scans SCANDIR``, their scans are read from ``SCANDIR/NAME.json`` (a missing
scan is an empty board). The numbers are those of :mod:`fjords.compare`,
explained in ``docs/eval.md``; the readable output ends with the reliability
table of the confidences the scans report.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from fjords.board import Board
from fjords.boardjson import FormatError, read_board_file
from fjords.compare import Comparison, Summary, compare, summarize
from fjords.errors import FjordsError
from fjords.table import format_table


@dataclass(frozen=True)
class Scan:
    """What scanning one photo gave: the board, the seconds it took, why it failed (if it did)."""

    board: Board
    seconds: float | None = None
    failure: str | None = None


@dataclass(frozen=True)
class PhotoResult:
    name: str
    comparison: Comparison
    scan: Scan

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "seconds": self.scan.seconds}
        if self.scan.failure is not None:
            out["failure"] = self.scan.failure
        out.update(self.comparison.to_json())
        return out


def register(subparsers: argparse._SubParsersAction) -> None:
    description = "Scan the photos of a folder and compare every scan with the truth beside its photo."
    parser = subparsers.add_parser("eval", help=description, description=description)
    parser.add_argument("directory", metavar="DIR",
                        help="photos NAME.jpg|.jpeg|.png|.webp, each with its truth NAME.json beside it")
    parser.add_argument("--scans", metavar="SCANDIR",
                        help="read the scans SCANDIR/NAME.json instead of scanning (a missing one is an empty board)")
    parser.add_argument("--json", action="store_true", help='print {"photos": [...], "summary": {...}} for programs')
    parser.add_argument("--limit", type=_positive_int, metavar="N", help="only the first N photos, by name")
    parser.set_defaults(run=run_eval)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of photos, at least 1, not {text!r}")
    return value


def run_eval(args: argparse.Namespace) -> int:
    photos = find_photos(Path(args.directory))[:args.limit]
    # Every truth is read before any scanning, so that a bad one stops the run at once.
    truths = [_read_board(photo.with_suffix(".json"), "truth") for photo in photos]
    scan = _scan_reader(Path(args.scans)) if args.scans else _photo_scanner()
    results = []
    for photo, truth in _progress(list(zip(photos, truths))):
        scanned = scan(photo)
        results.append(PhotoResult(photo.name, compare(scanned.board, truth), scanned))
    timings = [r.scan.seconds for r in results if r.scan.seconds is not None]
    summary = summarize([r.comparison for r in results], timings if len(timings) == len(results) else None)
    if args.json:
        print(json.dumps({"photos": [r.to_json() for r in results], "summary": summary.to_json()}, indent=2))
    else:
        print(format_results(results))
        print()
        print(format_summary(summary))
        print()
        print(format_reliability(summary))
    return 0


def find_photos(directory: Path) -> list[Path]:
    """The photos of ``directory`` that have a truth ``NAME.json`` beside them, by name."""
    from scanner.load import PHOTO_SUFFIXES

    if not directory.is_dir():
        raise FjordsError(f"{directory} is not a folder of photos")
    photos = sorted(p for p in directory.iterdir()
                    if p.suffix.lower() in PHOTO_SUFFIXES and p.with_suffix(".json").is_file())
    if not photos:
        raise FjordsError(f"no photo in {directory} has its truth NAME.json beside it")
    return photos


def _read_board(path: Path, role: str) -> Board:
    try:
        return read_board_file(str(path))
    except FormatError as exc:
        message = str(exc)  # names the file already (read_board_file); say which of the two it is
        raise FormatError(f"{role} {message}" if message.startswith(str(path)) else message) from None


def _scan_reader(scans: Path) -> Callable[[Path], Scan]:
    if not scans.is_dir():
        raise FjordsError(f"{scans} is not a folder of scans")

    def read_scan(photo: Path) -> Scan:
        path = scans / f"{photo.stem}.json"
        return Scan(_read_board(path, "scan") if path.exists() else Board())

    return read_scan


def _photo_scanner() -> Callable[[Path], Scan]:
    try:
        from scanner.pipeline import Scanner
    except ModuleNotFoundError as exc:
        if exc.name in ("scanner", "scanner.pipeline"):
            raise FjordsError("the scanner is not installed; use --scans") from None
        raise
    scanner = Scanner()

    def scan_photo(photo: Path) -> Scan:
        start = time.perf_counter()
        try:
            board = scanner.scan_path(str(photo)).board
        except FjordsError as exc:  # a photo the scanner gives up on counts as an empty board
            return Scan(Board(), time.perf_counter() - start, str(exc))
        return Scan(board, time.perf_counter() - start)

    return scan_photo


def _progress(items: list[Any]) -> Any:
    from tqdm import tqdm

    return tqdm(items, file=sys.stderr, unit="photo", disable=len(items) <= 1, leave=False)


def format_results(results: list[PhotoResult]) -> str:
    """The per-photo table, followed by one line per photo the scanner gave up on."""
    header = ("photo", "tiles P/R", "sectors", "silent", "pieces P/R", "exact", "score", "errors", "seconds")
    rows = []
    for r in results:
        c, ratios = r.comparison, r.comparison.ratios()
        rows.append((r.name, f"{ratios['tile_precision']:.3f}/{ratios['tile_recall']:.3f}",
                     f"{ratios['sector_accuracy']:.4f}", str(c.silent_sector_errors),
                     f"{ratios['piece_precision']:.3f}/{ratios['piece_recall']:.3f}",
                     _yes_no(c.board_exact), _yes_no(c.score_exact), str(c.errors),
                     "-" if r.scan.seconds is None else f"{r.scan.seconds:.2f}"))
    lines = [format_table(header, rows, right=range(1, len(header)))]
    lines += [f"{r.name}: the scanner gave up: {r.scan.failure}" for r in results if r.scan.failure]
    return "\n".join(lines)


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


# (label, Summary field, digits) of the summary lines, in order.
SUMMARY_LINES = (
    ("tile precision", "tile_precision", 4),
    ("tile recall", "tile_recall", 4),
    ("sector accuracy", "sector_accuracy", 4),
    ("piece precision", "piece_precision", 4),
    ("piece recall", "piece_recall", 4),
    ("board exact", "board_exact", 3),
    ("score exact", "score_exact", 3),
    ("at most one error", "at_most_one_error", 3),
    ("mean errors", "mean_errors", 2),
    ("seconds per photo", "seconds_per_photo", 2),
)


def format_summary(summary: Summary) -> str:
    """The pooled figures, each with its 95 % interval."""
    lines = [f"{summary.photos} photos, {summary.totals['true_tiles']} true tiles, "
             f"{summary.totals['true_pieces']} true pieces, {summary.silent_sector_errors} silent sector errors, "
             f"{summary.totals['unread_sectors']} unread sectors"]
    for label, name, digits in SUMMARY_LINES:
        value = getattr(summary, name)
        if value is None:
            continue
        low, high = summary.intervals[name]
        lines.append(f"{label:<18} {value:>9.{digits}f}  95% [{low:.{digits}f}, {high:.{digits}f}]")
    return "\n".join(lines)


def format_reliability(summary: Summary) -> str:
    """How often the tiles and pieces reported with each confidence were wrong, with 95 % intervals."""
    header = ("reported", "confidence", "count", "wrong", "wrong share", "95% interval")
    rows = [(kind, b.label, b.count, b.wrong, f"{b.wrong_share:.4f}" if b.count else "-",
             f"[{b.interval[0]:.4f}, {b.interval[1]:.4f}]")
            for kind, table in summary.reliability.items() for b in table]
    return "\n".join(["reliability of the reported confidences (a tile is right when all 12 letters are)",
                      format_table(header, rows, right=range(2, len(header)))])
