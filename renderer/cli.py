"""``fjords render``: write rendered photos and their truth files."""

from __future__ import annotations

import json
import os
import random
import sys

from fjords.board import EDITIONS
from fjords.errors import FjordsError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "render", help="render synthetic photos of Fjords tables with truth files",
        description="Render COUNT photos NAME.jpg, each beside its truth NAME.json (fjords-board/1 with "
                    "pixel geometry). Photo i uses seed SEED+i, so a run is reproducible.")
    parser.add_argument("--count", type=int, default=1, help="number of photos (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first photo (default 0)")
    parser.add_argument("--out", required=True, help="folder to write into (created if missing)")
    parser.add_argument("--edition", choices=EDITIONS, help="edition (default: drawn per photo)")
    parser.add_argument("--players", type=int, help="players, 2-4 (default: drawn per photo)")
    parser.add_argument("--width", type=int, default=2016)
    parser.add_argument("--height", type=int, default=1512)
    parser.add_argument("--style", help="tile-art style (default: drawn per photo among all but the bold "
                        "prints, e.g. patchwork, which only this option draws)")
    parser.add_argument("--exclude-style", action="append", default=[], metavar="NAME",
                        help="never draw this style (repeatable; for hold-out experiments)")
    parser.add_argument("--colours", help="player colours in order, e.g. red,blue")
    parser.add_argument("--copy", type=int, metavar="SEED", help="photograph one copy of the game: every photo's "
                        "edition, tile printing and piece shapes are drawn from SEED (use with --style)")
    parser.add_argument("--board", help="photograph this fjords-board/1 file instead of random boards")
    parser.add_argument("--prefix", default="render", help="file name prefix (default 'render')")
    parser.add_argument("--quality", type=int, default=95, help="JPEG quality of the written files (default 95)")
    parser.add_argument("--force", action="store_true", help="overwrite existing files")
    parser.set_defaults(run=run)


def _check(args) -> list[str]:
    from renderer.tileart import RANDOM_STYLES, STYLES

    if args.count < 1:
        raise FjordsError("--count must be at least 1")
    if not 16 <= args.width <= 16384 or not 16 <= args.height <= 16384:
        raise FjordsError("--width and --height must be between 16 and 16384 pixels")
    if args.players is not None and not 2 <= args.players <= 4:
        raise FjordsError("--players must be 2, 3 or 4")
    if args.players is not None and args.players > 2 and args.edition == "classic":
        raise FjordsError("the classic edition is for two players")
    if args.board and (args.edition or args.players or args.colours):
        raise FjordsError("--board photographs that board as it is: drop --edition, --players and --colours")
    if not 1 <= args.quality <= 100:
        raise FjordsError("--quality must be 1..100")
    for name in [args.style, *args.exclude_style]:
        if name is not None and name not in STYLES:
            raise FjordsError(f"unknown style {name!r}; choose from {', '.join(STYLES)}")
    styles = [s for s in RANDOM_STYLES if s not in args.exclude_style]
    if args.style is not None:
        if args.style in args.exclude_style:
            raise FjordsError(f"--style {args.style} is also excluded")
        styles = [args.style]
    if not styles:
        raise FjordsError("every style is excluded")
    return styles


def _colours(args) -> list[str] | None:
    """The player colours of ``--colours``, checked against the other options."""
    from renderer.pieces import PAINTS

    if args.colours is None:
        return None
    names = [c.strip().lower() for c in args.colours.split(",") if c.strip()]
    if len(set(names)) != len(names) or not 2 <= len(names) <= 4:
        raise FjordsError("--colours must name 2, 3 or 4 distinct colours, e.g. red,blue")
    unknown = [n for n in names if n not in PAINTS]
    if unknown:
        raise FjordsError(f"unknown colour {unknown[0]!r}; choose from {', '.join(PAINTS)}")
    if args.players is not None and len(names) != args.players:
        raise FjordsError("--colours names a different number of players than --players")
    if len(names) > 2 and args.edition == "classic":
        raise FjordsError("the classic edition is for two players")
    return names


def run(args) -> int:
    import cv2
    from tqdm import tqdm

    from fjords.boardjson import read_board_file
    from renderer import random_board, render_board
    from renderer.boards import random_setup

    styles = _check(args)
    names = _colours(args)
    board = read_board_file(args.board) if args.board else None
    os.makedirs(args.out, exist_ok=True)
    stems = [os.path.join(args.out, f"{args.prefix}_{args.seed + i:06d}") for i in range(args.count)]
    if not args.force:
        taken = [p for stem in stems for p in (stem + ".jpg", stem + ".json") if os.path.exists(p)]
        if taken:
            raise FjordsError(f"{taken[0]} exists (and {len(taken) - 1} more); use --force to overwrite")
    wanted_players = len(names) if names else args.players
    # One copy of the game is one edition: its photos differ in the game on the table, never in the box.
    copy_edition = random_setup(args.copy, args.edition, wanted_players)[0] if args.copy is not None else None
    for i, stem in enumerate(tqdm(stems, desc="render", unit="photo", file=sys.stderr)):
        seed = args.seed + i
        if board is None:
            edition, players = random_setup(seed, copy_edition or args.edition, wanted_players)
            photo_board = random_board(seed, edition, players, **({"colours": names} if names else {}))
        else:
            photo_board = board
        style = random.Random(seed).choice(styles)
        try:
            photo = render_board(photo_board, seed, width=args.width, height=args.height, style=style,
                                 print_seed=args.copy)
        except ValueError as exc:  # a board file naming a colour no paint is known for
            raise FjordsError(str(exc)) from None
        photo.truth["image"]["file"] = os.path.basename(stem) + ".jpg"
        if not cv2.imwrite(stem + ".jpg", photo.image, [cv2.IMWRITE_JPEG_QUALITY, args.quality]):
            raise FjordsError(f"cannot write {stem}.jpg")
        with open(stem + ".json", "w") as f:
            json.dump(photo.truth, f, indent=1)
    return 0
