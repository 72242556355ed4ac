"""Does a real rule break survive the scan? Renders boards that break one rule and counts how often the scan shows it.

    python benchmarks/bench_rule_breaks.py [--count 30] [--seed 1300000] [--width 2016 --height 1512]
                                           [--ways settler-cut-off ...] [--kind-rule 1] [--keep DIR] [--json]

Three ways of breaking a rule, each on ``--count`` held-out boards (seeds from
``--seed``; seeds that allow no such break are skipped):

* ``tile-laid-wrong``: a non-start tile is turned (with its pieces) until the
  engine reports ``edge-mismatch`` at it;
* ``two-pieces``: a settler of the same player joins a piece on another
  segment of its tile, so the engine reports ``two-pieces-on-tile`` there;
* ``settler-cut-off``: a settler is moved to a plain of an empty tile where it
  is joined to no house of its colour, so the engine reports
  ``settler-disconnected`` there (read as a house it would be ``decoded away``:
  what the decoder's kind rule, :func:`scanner.assemble.settle_kinds`, must not do
  to a settler it reads sure).

Each photo is scanned by the full pipeline (``full``: the scan is aligned on
the truth first) and read at the render's true tile corners (``truth``: the
reading stages alone). A break is ``shown`` when the scanned board reports
the same violation (rule and tiles) as the truth; otherwise it was
``decoded away`` (the scanned letters across every broken edge agree, or
one piece is read where two stand), left ``unread`` (a ``?`` at a broken
edge) or ``other`` (tile missing, scan failed, ...).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import cv2

from bench_scan import TruthCell
from fjords.board import Board
from fjords.compare import compare, wilson_interval
from fjords.geometry import Hex, facing_sector, rotate_sector, rotate_terrain
from renderer import render_board
from renderer.boards import crowd_tiles, random_board, random_setup
from scanner.assemble import DecodeSettings
from scanner.pipeline import Scanner

OUTCOMES = ("shown", "decoded away", "unread", "other")
GEOMETRIES = ("full", "truth")
Break = tuple[Board, Hex]  # the broken board and the tile where it breaks the rule


def reported_at(board: Board, rule: str, h: Hex) -> set[tuple[Hex, ...]]:
    """The tiles of every ``rule`` violation ``board`` reports that concern the tile ``h``."""
    return {v.tiles for v in board.legal_violations() if v.rule == rule and h in v.tiles}


def turn_a_tile(board: Board, rng: random.Random) -> Break | None:
    """``board`` with one non-start tile turned, pieces and all, so that an edge of it no longer matches."""
    candidates = [t for t in board.tiles.values() if not t.start and any(board.tile_neighbours(t.hex))]
    rng.shuffle(candidates)
    for tile in candidates:
        for k in rng.sample(range(1, 6), 5):
            pieces = [replace(p, sector=rotate_sector(p.sector, k)) if p.hex == tile.hex and p.sector is not None
                      else p for p in board.pieces]
            turned = replace(tile, terrain=rotate_terrain(tile.terrain, k))
            broken = replace(board, tiles={**board.tiles, tile.hex: turned}, pieces=tuple(pieces))
            if reported_at(broken, "edge-mismatch", tile.hex):
                return broken, tile.hex
    return None


def crowd_a_tile(board: Board, rng: random.Random) -> Break | None:
    """``board`` with a second piece (a settler of the same player) on another plain segment of a piece's tile."""
    broken, crowded = crowd_tiles(board, rng)
    if crowded and reported_at(broken, "two-pieces-on-tile", crowded[0]):
        return broken, crowded[0]
    return None


def cut_off_a_settler(board: Board, rng: random.Random) -> Break | None:
    """``board`` with one settler moved to a plain of an empty tile not joined to a house of its colour."""
    settlers = [p for p in board.pieces if p.kind == "settler"]
    empty = [t for t in board.tiles.values() if "P" in t.terrain and not board.pieces_at(t.hex)]
    rng.shuffle(settlers)
    rng.shuffle(empty)
    for settler in settlers[:5]:
        for tile in empty:
            moved = replace(settler, hex=tile.hex, sector=tile.terrain.index("P"))
            broken = replace(board, pieces=tuple(moved if p is settler else p for p in board.pieces))
            if reported_at(broken, "settler-disconnected", tile.hex):
                return broken, tile.hex
    return None


BREAKS = {"tile-laid-wrong": ("edge-mismatch", turn_a_tile), "two-pieces": ("two-pieces-on-tile", crowd_a_tile),
          "settler-cut-off": ("settler-disconnected", cut_off_a_settler)}


def broken_edges(truth: Board, h: Hex) -> list[tuple[Hex, int, Hex, int]]:
    """``(tile, sector, neighbour, facing sector)`` of every sector pair at ``h`` whose letters differ."""
    own = truth.tiles[h].terrain
    return [(h, i, other.hex, facing_sector(i)) for d, other in truth.tile_neighbours(h) for i in (2 * d, 2 * d + 1)
            if own[i] != other.terrain[facing_sector(i)]]


def judge(scanned: Board, truth: Board, rule: str, h: Hex) -> str:
    """One of :data:`OUTCOMES` for a scan (already in the truth's coordinates) of a board broken at ``h``."""
    if reported_at(scanned, rule, h) & reported_at(truth, rule, h):
        return "shown"
    if rule == "two-pieces-on-tile":
        return "decoded away" if h in scanned.tiles and len(scanned.pieces_at(h)) == 1 else "other"
    if rule == "settler-disconnected":  # read as a house, it would be joined: the kind rule's risk
        return "decoded away" if any(p.kind == "house" for p in scanned.pieces_at(h)) else "other"
    pairs = broken_edges(truth, h)
    if any(a not in scanned.tiles or b not in scanned.tiles for a, _, b, _ in pairs):
        return "other"
    letters = [(scanned.tiles[a].terrain[i], scanned.tiles[b].terrain[j]) for a, i, b, j in pairs]
    if any("?" in pair for pair in letters):
        return "unread"
    return "decoded away" if all(x == y for x, y in letters) else "other"


def aligned(scanned: Board, truth: Board) -> Board:
    """``scanned`` turned and moved onto ``truth`` by the best alignment of :func:`fjords.compare.compare`."""
    best = compare(scanned, truth)
    return scanned.rotated(best.rotation).translated(*best.translation)


def scan_both(scanner: Scanner, image, truth_doc: dict) -> dict[str, Board | None]:
    """The full pipeline's scan (None when it fails) and the reading at the true corners."""
    try:
        full = scanner.scan(image).board
    except Exception as exc:  # noqa: BLE001 - a benchmark counts every failure and goes on
        print(f"scan failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        full = None
    cells = [TruthCell(t, 1.0) for t in truth_doc["tiles"]]
    return {"full": full, "truth": scanner.read(image, cells)}


def measure(way: str, count: int, first_seed: int, size: tuple[int, int], scanner: Scanner,
            keep: Path | None = None) -> dict:
    """Break, render and scan ``count`` boards one ``way``; the outcomes per geometry and the seeds used."""
    rule, make_break = BREAKS[way]
    tally = {g: Counter() for g in GEOMETRIES}
    seeds = []
    for seed in range(first_seed, first_seed + 20 * count):  # a cap: some boards allow no such break
        if len(seeds) == count:
            break
        board = random_board(seed, *random_setup(seed))
        made = make_break(board, random.Random(seed))
        if made is None:
            continue
        truth, h = made
        seeds.append(seed)
        render = render_board(truth, seed, width=size[0], height=size[1])
        if keep is not None:
            cv2.imwrite(str(keep / f"{way}-{seed}.jpg"), render.image)
            (keep / f"{way}-{seed}.json").write_text(json.dumps(render.truth))
        scans = scan_both(scanner, render.image, render.truth)
        for geometry, scanned in scans.items():
            if scanned is not None and geometry == "full":
                scanned = aligned(scanned, truth)
            tally[geometry][judge(scanned, truth, rule, h) if scanned is not None else "other"] += 1
    return {"seeds": seeds, **{g: summary(tally[g], len(seeds)) for g in GEOMETRIES}}


def summary(counts: Counter, photos: int) -> dict:
    """Photos, each outcome's count, and the 95 % Wilson interval of the share shown."""
    return {"photos": photos, **{o: counts[o] for o in OUTCOMES},
            "shown_ci95": [round(v, 3) for v in wilson_interval(counts["shown"], photos)]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=30, help="photos per way of breaking (default 30)")
    parser.add_argument("--seed", type=int, default=1_300_000, help="first seed (>= 1,000,000: held out from training)")
    parser.add_argument("--width", type=int, default=2016)
    parser.add_argument("--height", type=int, default=1512)
    parser.add_argument("--keep", type=Path, metavar="DIR", help="write each photo and its truth here")
    parser.add_argument("--mismatch", type=float, default=DecodeSettings.mismatch,
                        help="the decoder's weight of two different letters across an edge")
    parser.add_argument("--switch", type=float, default=DecodeSettings.switch,
                        help="the decoder's chance that the next sector round a rim differs (2/3: no ring prior)")
    parser.add_argument("--kind-rule", type=float, default=DecodeSettings.kind_rule,
                        help="the decoder's weight of a kind that breaks the rules on a colour's pieces (1: none)")
    parser.add_argument("--ways", nargs="+", choices=list(BREAKS), default=list(BREAKS), help="which breaks")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    scanner = Scanner(settings=DecodeSettings(mismatch=args.mismatch, switch=args.switch, kind_rule=args.kind_rule))
    report = {way: measure(way, args.count, args.seed, (args.width, args.height), scanner, args.keep)
              for way in args.ways}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{'way':16} {'geometry':8} {'photos':>6} " + " ".join(f"{o:>12}" for o in OUTCOMES) + "  shown 95% CI")
    for way, result in report.items():
        for geometry in GEOMETRIES:
            row = result[geometry]
            low, high = row["shown_ci95"]
            print(f"{way:16} {geometry:8} {row['photos']:6d} " + " ".join(f"{row[o]:12d}" for o in OUTCOMES)
                  + f"  [{low:.2f}, {high:.2f}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
