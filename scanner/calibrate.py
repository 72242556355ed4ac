"""``fjords calibrate``: learn one table's look from one photo and its correct board.

The board file gives each tile's terrain and each piece's owner; where it also
gives the tiles' ``corners_px`` (a scan's JSON, corrected by hand, keeps them)
those are used as they are, otherwise the photo is scanned and the board is
laid on the scan by the rotation and shift under which they agree best.
A board that does not match the photo, or a photo with no board, is refused
before anything is saved (see :mod:`scanner.calibration` for what is learnt).
"""

from __future__ import annotations

import argparse
from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np

from fjords.board import Board, Piece
from fjords.geometry import SECTORS, TERRAINS, UNKNOWN, Hex, segment_of
from scanner.calibration import NETWORK_NAMING, PALETTE_NAMING, Calibration, CalibrationError, free_calibration_path, \
    save_calibration
from scanner.lattice_model import MIN_LENS_TILES, fit_model, hex_centres
from scanner.patches import Pyramid, hex_patches
from scanner.pieces import COLOUR_SPREAD, PieceReading, palette_probs, rgb_to_lab
from scanner.sectors import sector_visibility

#: Below this share of readable sectors agreeing with the board, the board is not this photo's. Two unrelated
#: boards agree by chance on about the sum of the squared terrain shares, 0.4–0.5 (mostly plains); this photo's
#: own board agrees on 0.94–0.997 on the held-out copies and the sample photos (docs/calibration.md). Was 0.5, which
#: a board of the other sample photo, laid where this one's tiles partly lie, reached (0.504).
MIN_AGREEMENT = 0.75
#: Below this share of the board's tiles in the frame looking like tile tops, the photo shows no board there.
MIN_READABLE_SHARE = 0.3
#: Share of the board's tiles a scan must find (under the best alignment) to calibrate without corners.
MIN_TILES_FOUND = 0.6
#: Two calibrated colours closer than this (CIELAB ΔE) are named alike: the scan's colour naming (spread
#: COLOUR_SPREAD) gives a piece lit a little differently to the other player.
MIN_COLOUR_DISTANCE = 3.0 * COLOUR_SPREAD


@dataclass(frozen=True)
class PlacedTile:
    """A tile of the correct board and where it lies in the photo (scan pixels)."""

    hex: Hex
    terrain: str
    corners_px: np.ndarray


def calibrate(scanner, image_bgr: np.ndarray, board: Board, name: str, *, scale: float = 1.0,
              photo: str = "") -> Calibration:
    """The calibration of the table in ``image_bgr`` whose correct board is ``board``.

    Parameters
    ----------
    scanner : :class:`scanner.pipeline.Scanner` (uncalibrated) whose models are used.
    scale : the photo's size over the original's (board pixels are original pixels).

    Raises
    ------
    CalibrationError
        When the board does not match the photo, the photo shows no board, or no player's piece is on it.
    """
    placed = place_board(scanner, image_bgr, board, scale)
    corners = [t.corners_px for t in placed]
    pyramid = Pyramid(image_bgr)
    patches = hex_patches(pyramid, corners)
    probs, readable = scanner.sectors.predict_patches(patches)
    in_frame = sector_visibility(corners, image_bgr.shape)
    shown = in_frame.mean(axis=1) >= 0.5
    # A hand may hide part of the board: judge on the tiles in the frame, and ask only that some show.
    if not shown.any() or float((readable.mean(axis=1) >= 0.5)[shown].mean()) < MIN_READABLE_SHARE:
        raise CalibrationError("the photo shows no board where the board file puts its tiles: is it this photo's "
                               "board, and is the board in the picture?")
    known = np.array([[letter != UNKNOWN for letter in t.terrain] for t in placed])
    labels = np.array([[TERRAINS.index(letter) if letter != UNKNOWN else 0 for letter in t.terrain] for t in placed])
    covered = np.zeros_like(known)
    index = {t.hex: n for n, t in enumerate(placed)}
    for piece in board.pieces:
        if piece.hex in index and piece.sector is not None:
            covered[index[piece.hex], piece.sector] = True
    usable = known & ~covered & (in_frame >= 0.99) & (readable >= 0.5)
    if usable.sum() < SECTORS:
        raise CalibrationError("too little of the board is visible in the photo to calibrate from it")
    agreement = float((probs.argmax(-1) == labels)[usable].mean())
    if agreement < MIN_AGREEMENT:
        raise CalibrationError(f"the board does not match the photo: only {agreement:.0%} of the sectors read look "
                               f"as the board says (at least {MIN_AGREEMENT:.0%} expected)")
    readings = player_readings(scanner, pyramid, board, placed)
    if not readings:
        raise CalibrationError("the board has no player's piece in the photo: a calibration learns the players' "
                               "colours, so calibrate from a photo with the players' pieces on the board")
    colours, measured = piece_colours(readings)
    naming, named_right = colour_naming(readings, colours)
    report = {"photo": photo, "tiles": len(placed), "sectors_used": int(usable.sum()),
              "sector_agreement": round(agreement, 4),
              "pieces_per_player": {p: sum(q.player == p for q in board.pieces) for p in colours},
              "pieces_measured": measured,
              "colours_alike": [list(pair) for pair in alike_colours(colours)],
              "pieces_named_right": named_right,
              "lens_k1": lens_distortion(placed, image_bgr.shape),
              "models": scanner.model_versions}
    return Calibration(name, colours, report, naming)


def place_board(scanner, image_bgr: np.ndarray, board: Board, scale: float) -> list[PlacedTile]:
    """The board's tiles with their photo corners: from the board file, else from a scan aligned to it."""
    with_corners = [t for t in board.tiles.values() if "corners_px" in t.extra]
    if board.tiles and len(with_corners) == len(board.tiles):
        try:
            return [PlacedTile(t.hex, t.terrain, np.asarray(t.extra["corners_px"], np.float64).reshape(6, 2) * scale)
                    for t in with_corners]
        except (TypeError, ValueError):
            raise CalibrationError("the board's corners_px must be six [x, y] points per tile") from None
    cells = scanner.scan(image_bgr).lattice.cells
    turned, shift, found = best_alignment(board, {h: c for h, c in cells.items()})
    if found < MIN_TILES_FOUND * len(board.tiles):
        raise CalibrationError(f"the board does not match the photo: only {found} of its {len(board.tiles)} tiles "
                               "were found in it")
    placed = []
    for tile in turned.tiles.values():
        cell = cells.get(tile.hex.translated(*shift))
        if cell is not None:
            placed.append(PlacedTile(tile.hex, tile.terrain, np.asarray(cell.corners_px, np.float64)))
    return placed


def best_alignment(board: Board, cells: dict) -> tuple[Board, tuple[int, int], int]:
    """The turn of ``board`` and the shift onto the scanned ``cells`` that cover most of its tiles.

    Returns the turned board, the shift ``(dq, dr)`` taking its hexes to the
    scan's, and how many of its tiles then land on a scanned tile.
    """
    best = (board, (0, 0), -1)
    for k in range(6):
        turned = board.rotated(k)
        # Each (board tile, scanned tile) pair votes for the shift that lays one on the other.
        votes = Counter((c.q - h.q, c.r - h.r) for c in cells for h in turned.tiles)
        if votes:
            shift, found = votes.most_common(1)[0]
            if found > best[2]:
                best = (turned, shift, found)
    return best


def player_readings(scanner, pyramid: Pyramid, board: Board, placed: list[PlacedTile]
                    ) -> dict[str, list[PieceReading]]:
    """Each player's pieces as the (uncalibrated) piece models read them, by lower-case player name."""
    corners = {t.hex: t.corners_px for t in placed}
    owned = [p for p in board.pieces if p.player and p.hex in corners]
    tiles = list(dict.fromkeys(p.hex for p in owned))
    readings = dict(zip(tiles, scanner.pieces.predict(pyramid, [corners[h] for h in tiles])))
    mine: dict[str, list[PieceReading]] = {}
    for piece in owned:
        mine.setdefault(piece.player.lower(), []).append(
            reading_for(piece, board.tiles[piece.hex].terrain, readings[piece.hex]))
    return mine


def seen_readings(readings: list[PieceReading]) -> list[PieceReading]:
    """The readings where the presence model sees a piece (:attr:`~scanner.pieces.PieceReading.seen`)."""
    return [r for r in readings if r.seen]


def median_rgb(readings: list[PieceReading]) -> tuple[int, int, int]:
    """The median RGB of readings' piece colours, as a calibration saves a player's colour."""
    return tuple(int(v) for v in np.median([r.rgb for r in readings], axis=0))


def piece_colours(readings: dict[str, list[PieceReading]]
                  ) -> tuple[dict[str, tuple[int, int, int]], dict[str, int]]:
    """Median RGB of each player's pieces, measured as a scan measures them, and how many pieces each
    median is taken over.

    Only readings where the presence model sees a piece count (:func:`seen_readings`): elsewhere (a piece of
    an unseen paint it misses, one cut off by the frame) the reading's colour is the terrain's. A player none of
    whose pieces is seen falls back to all its readings (count 0).
    """
    colours, measured = {}, {}
    for player, mine in readings.items():
        seen = seen_readings(mine)
        colours[player] = median_rgb(seen or mine)
        measured[player] = len(seen)
    return colours, measured


def colour_naming(readings: dict[str, list[PieceReading]], colours: dict[str, tuple[int, int, int]]
                  ) -> tuple[str, dict[str, int]]:
    """Whether a scan with this calibration names pieces by its palette or by the piece network, and why.

    Counts, over the seen pieces of the calibration photo, how many each way of naming gets right: the
    network's own colour name, and the palette's as a scan would give it (:func:`scanner.pieces.palette_probs`)
    with the piece's own player measured on its other pieces only (left out, as a later photo's piece is).
    The palette replaces the network's names only when it names more pieces right, or when no seen piece
    tells (none seen, or player names that are no colour, e.g. "anna"): where the network already knows the
    paint, a palette measured on one photo names pieces under another lamp worse (docs/calibration.md).
    """
    network = palette = 0
    for player, mine in readings.items():
        seen = seen_readings(mine)
        for k, reading in enumerate(seen):
            network += reading.colour == player
            others = seen[:k] + seen[k + 1:]
            if others:  # with nothing left to measure the player on, the palette earns nothing
                left_out = {**colours, player: median_rgb(others)}
                fitted = palette_probs(reading.rgb, left_out)
                palette += (fitted[1][int(np.argmax(fitted[0]))] if fitted else reading.colour) == player
    counts = {"network": int(network), "palette": int(palette)}
    return (NETWORK_NAMING if network and network >= palette else PALETTE_NAMING), counts


def alike_colours(colours: dict[str, tuple[int, int, int]], min_distance: float = MIN_COLOUR_DISTANCE
                  ) -> list[tuple[str, str, float]]:
    """Pairs of players whose calibrated colours are under ``min_distance`` apart in CIELAB, with the ΔE."""
    lab = {name: rgb_to_lab(np.array(rgb, dtype=np.float64))[0] for name, rgb in colours.items()}
    distances = ((a, b, float(np.linalg.norm(lab[a] - lab[b]))) for a, b in combinations(colours, 2))
    return [(a, b, round(d, 1)) for a, b, d in distances if d < min_distance]


def reading_for(piece: Piece, terrain: str, readings: tuple[PieceReading, ...]) -> PieceReading:
    """Of the pieces read on a tile (several only where two stand there), the one standing on ``piece``'s
    segment of a tile with this ``terrain``, else the one nearest its sector.

    The board names a piece by its segment's first sector; the reading by where its base stands.
    """
    if piece.sector is None:
        return readings[0]
    run = segment_of(terrain, piece.sector) or (piece.sector,)
    return min(readings, key=lambda r: (r.sector not in run,
                                        min((r.sector - piece.sector) % SECTORS, (piece.sector - r.sector) % SECTORS)))


def naming_text(calibration: Calibration) -> str:
    """One line on how scans with ``calibration`` name the pieces' colours, and why."""
    right = calibration.report.get("pieces_named_right", {})
    why = (f" ({right['network']} seen pieces of this photo named right by the network, {right['palette']} by "
           "your colours measured on the others)") if right else ""
    if calibration.colour_naming == NETWORK_NAMING:
        return f"piece colours: named by the piece network, which knows your paints{why}"
    return (f"piece colours: named after your players' colours{why}; when other players join or the colours "
            "change, calibrate again from a photo that shows all of them")


def lens_distortion(placed: list[PlacedTile], image_shape: tuple[int, ...]) -> float | None:
    """Barrel distortion ``k1`` of the lattice model through the tiles' centres, if enough tiles show it."""
    if len(placed) < MIN_LENS_TILES:
        return None
    size = (image_shape[1], image_shape[0])
    centres = np.array([t.corners_px.mean(axis=0) for t in placed])
    model = fit_model(hex_centres([t.hex for t in placed]), centres, size, fit_distortion=True)
    return float(model.k1) if model.fits_a_view else None


# -- the command ------------------------------------------------------------------------------

DESCRIPTION = """Calibrate the scanner to your own copy of Fjords from one photo and its correct board.

Learns your pieces' colours (named after the board's players) and saves them as
NAME in your configuration folder. Then scan with
fjords scan PHOTO --calibration NAME. (Your camera's lens is measured and
shown, not kept: every scan measures its own photo's lens and the look of its
printing under its light.)"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("calibrate", help="learn your table's look from one photo and its board",
                                   description=DESCRIPTION, epilog="exit codes: 0 saved, 2 bad input or refused "
                                   "(nothing saved), 3 no board found in the photo",
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("photo", metavar="PHOTO", help="a photo of your table (JPEG, PNG, WebP)")
    parser.add_argument("--board", required=True, metavar="BOARD.json",
                        help="the correct fjords-board/1 board of that photo (e.g. its scan, corrected)")
    parser.add_argument("--name", required=True, help="name to save the calibration under")
    parser.add_argument("--models", metavar="DIR", type=Path, help="folder of the ONNX models (default: models/)")
    parser.add_argument("--force", action="store_true", help="replace an existing calibration of that name")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from fjords.boardjson import read_board_file
    from scanner.load import load_image
    from scanner.pipeline import Scanner

    free_calibration_path(args.name, args.force)  # refuse before the work, not after it
    board = read_board_file(args.board)
    loaded = load_image(args.photo)
    calibration = calibrate(Scanner(args.models), loaded.image_bgr, board, args.name, scale=loaded.scale,
                            photo=Path(args.photo).name)
    saved = save_calibration(calibration, force=args.force)
    report = calibration.report
    lens = report.get("lens_k1")
    measured = report.get("pieces_measured", {})
    colours = ", ".join(f"{n} {tuple(rgb)} ({measured[n]} pieces seen)" if measured.get(n)
                        else f"{n} {tuple(rgb)} (no piece seen, measured on the tiles: check it)"
                        for n, rgb in calibration.colours.items())
    print(f"saved calibration {args.name} to {saved}\n"
          f"  sectors the network reads as the board says on this photo: {report['sector_agreement']:.1%}\n"
          f"  player colours: {colours}\n"
          f"  {naming_text(calibration)}\n"
          f"  lens k1 of this photo: {'not measured (too few tiles)' if lens is None else f'{lens:.4f}'} "
          "(not kept: every scan measures its own)")
    for a, b, distance in report.get("colours_alike", []):
        print(f"  warning: {a} and {b} look alike in this photo (ΔE {distance}): their pieces may be confused; "
              "calibrate from a photo where both show in good light")
    return 0
