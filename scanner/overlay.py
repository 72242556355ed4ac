"""The photo annotated with what the scan read, for a player to check at a glance.

Readable without telling colours apart: sectors carry their letter (S, M, P),
unread sectors a ``?`` and their tile a dashed outline; players are labelled
A, B, C… (the legend names their colour and score), kinds by shape (square
house, circle settler, triangle rune stone); a piece too doubtful to count is a
hollow circle with a ``?``, and one the connection rule counted is outlined in the
colour of ``?``; territory is tinted and hatched with the owning
player's letter. A place where a hand may hide a tile the board leaves out is a
dashed outline round a large ``?``. The legend stands in the corner of the photo
that hides the least of the board.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import cv2
import numpy as np

from fjords.board import Board
from fjords.geometry import Hex
from scanner.patches import sector_triangles

TERRAIN_BGR = {"S": (200, 120, 30), "M": (110, 110, 120), "P": (60, 190, 90), "?": (200, 0, 200)}
PLAYER_BGR = {"red": (40, 40, 220), "yellow": (0, 215, 255), "blue": (220, 90, 20), "black": (30, 30, 30),
              "white": (245, 245, 245), "green": (40, 160, 40), "grey": (140, 140, 140),
              "beige": (160, 200, 225), "brown": (30, 70, 120), "orange": (0, 140, 255), "purple": (150, 40, 140)}
FONT = cv2.FONT_HERSHEY_SIMPLEX


def player_letters(board: Board) -> dict[str, str]:
    """A letter per player, in order of appearance: A, B, C…"""
    return {p: chr(ord("A") + n) for n, p in enumerate(board.players)}


def _text(image: np.ndarray, text: str, at, scale: float, colour=(255, 255, 255), thickness: int = 1) -> None:
    """Text centred on ``at`` with a dark outline so it reads on any background."""
    (w, h), _ = cv2.getTextSize(text, FONT, scale, thickness)
    org = (int(at[0] - w / 2), int(at[1] + h / 2))
    cv2.putText(image, text, org, FONT, scale, (0, 0, 0), thickness + 2, cv2.LINE_AA)
    cv2.putText(image, text, org, FONT, scale, colour, thickness, cv2.LINE_AA)


def _boxed_text(image: np.ndarray, text: str, at, scale: float, colour) -> None:
    """Text as :func:`_text` does it, in ``colour`` and inside a box of that colour: a mark that is not colour alone."""
    (w, h), _ = cv2.getTextSize(text, FONT, scale, 1)
    _text(image, text, at, scale, colour)
    corner = np.array([w / 2 + 2, h / 2 + 2])
    cv2.rectangle(image, tuple(np.round(at - corner).astype(int)), tuple(np.round(at + corner).astype(int)), colour, 1)


def _dashed_polygon(image: np.ndarray, pts: np.ndarray, colour, thickness: int, dash: float) -> None:
    for a, b in zip(pts, np.roll(pts, -1, axis=0)):
        length = float(np.linalg.norm(b - a))
        steps = max(1, int(length / dash))
        for k in range(0, steps, 2):
            p = a + (b - a) * k / steps
            q = a + (b - a) * min(k + 1, steps) / steps
            cv2.line(image, tuple(int(v) for v in p), tuple(int(v) for v in q), colour, thickness, cv2.LINE_AA)


def draw_overlay(image_bgr: np.ndarray, board: Board, analysis: Mapping[str, Any] | None = None) -> np.ndarray:
    """The photo with the board drawn over it (geometry from the board's ``corners_px``/``base_px``).

    ``analysis`` may hold ``score`` (player → points) and ``territory`` (a
    ``Territory.to_json()`` document with ``secured`` player → tiles).
    """
    out = image_bgr.copy()
    scale = float(board.extra.get("image", {}).get("width", out.shape[1])) / out.shape[1]
    letters = player_letters(board)
    tint = out.copy()
    analysis = analysis or {}
    owner = _secured_tiles(analysis.get("territory"))
    for tile in board.tiles.values():
        corners = np.asarray(tile.extra.get("corners_px", ()), dtype=np.float64) / scale
        if corners.shape != (6, 2):
            continue
        for i, triangle in enumerate(sector_triangles(corners)[0]):
            tri = np.round(triangle * 16).astype(np.int32)
            cv2.fillPoly(tint, [tri], TERRAIN_BGR.get(tile.terrain[i], TERRAIN_BGR["?"]), cv2.LINE_AA, shift=4)
        player = owner.get((tile.hex.q, tile.hex.r))
        if player is not None:
            cv2.fillPoly(tint, [np.round(corners).astype(np.int32)], PLAYER_BGR.get(player, (255, 255, 255)))
    out = cv2.addWeighted(tint, 0.35, out, 0.65, 0)
    for q, r in _contested_tiles(analysis.get("territory")):
        tile = board.tiles.get(Hex(q, r))
        if tile is not None and len(tile.extra.get("corners_px", ())) == 6:
            _hatch(out, np.asarray(tile.extra["corners_px"], dtype=np.float64) / scale)
    for tile in board.tiles.values():
        corners = np.asarray(tile.extra.get("corners_px", ()), dtype=np.float64) / scale
        if corners.shape != (6, 2):
            continue
        radius = float(np.max(np.linalg.norm(corners - corners.mean(axis=0), axis=1)))
        font = max(0.3, radius / 90.0)
        pts = np.round(corners).astype(np.int32)
        if tile.known:
            cv2.polylines(out, [pts], True, (255, 255, 255), 1, cv2.LINE_AA)
        else:
            _dashed_polygon(out, corners, TERRAIN_BGR["?"], max(2, int(radius / 25)), max(4.0, radius / 8))
        told = set(tile.extra.get("inferred_sectors", ()))
        covered = set(tile.extra.get("under_hand", ()))
        for i, triangle in enumerate(sector_triangles(corners)[0]):
            at = triangle.mean(axis=0) * 0.4 + triangle[1:].mean(axis=0) * 0.6
            # Lower case: a letter the edge rule gave a sector the photo does not show.
            letter = tile.terrain[i].lower() if i in told else tile.terrain[i]
            if i in covered:  # boxed, in the unread colour: a hand lies over the sector, its letter may be wrong
                _boxed_text(out, letter, at, font * 0.8, TERRAIN_BGR["?"])
            else:
                _text(out, letter, at, font * 0.8)
        player = owner.get((tile.hex.q, tile.hex.r))
        if player is not None:
            _text(out, letters.get(player, "?").lower(), corners.mean(axis=0), font * 1.2, (255, 255, 255), 2)
    for place in board.extra.get("possibly_hidden_tiles") or ():  # a hand may hide a tile there: not on the board
        corners = np.asarray(place["corners_px"], dtype=np.float64) / scale
        radius = float(np.max(np.linalg.norm(corners - corners.mean(axis=0), axis=1)))
        _dashed_polygon(out, corners, TERRAIN_BGR["?"], max(2, int(radius / 25)), max(4.0, radius / 8))
        _text(out, "?", corners.mean(axis=0), max(0.3, radius / 90.0) * 2.0, TERRAIN_BGR["?"], 3)
    for piece in board.pieces:
        base = piece.extra.get("base_px")
        if base is None:
            continue
        x, y, size = _marker(base, scale, out.shape[1])
        colour = PLAYER_BGR.get(piece.player or "", (255, 255, 255))
        # Outlined as unsure: a doubtful piece the connection rule counted (scanner.assemble.join_cut_off_settlers).
        outline = TERRAIN_BGR["?"] if piece.extra.get("joined_by_rule") else (0, 0, 0)
        if piece.kind == "house":
            cv2.rectangle(out, (int(x - size), int(y - size)), (int(x + size), int(y + size)), colour, -1)
            cv2.rectangle(out, (int(x - size), int(y - size)), (int(x + size), int(y + size)), outline, 2)
        elif piece.kind == "settler":
            cv2.circle(out, (int(x), int(y)), size, colour, -1, cv2.LINE_AA)
            cv2.circle(out, (int(x), int(y)), size, outline, 2, cv2.LINE_AA)
        else:
            tri = np.array([[x, y - size * 1.2], [x - size, y + size * 0.8], [x + size, y + size * 0.8]])
            cv2.fillPoly(out, [tri.astype(np.int32)], (200, 200, 200))
            cv2.polylines(out, [tri.astype(np.int32)], True, (0, 0, 0), 2)
        label = letters.get(piece.player, "R") if piece.player else "R"
        _text(out, label, (x, y), size / 12.0, (255, 255, 255), 2)
    for doubtful in board.extra.get("doubtful_pieces") or ():
        base = doubtful.get("base_px")
        if base is None:
            continue
        x, y, size = _marker(base, scale, out.shape[1])
        cv2.circle(out, (int(x), int(y)), size, (0, 0, 0), 4, cv2.LINE_AA)
        cv2.circle(out, (int(x), int(y)), size, TERRAIN_BGR["?"], 2, cv2.LINE_AA)
        _text(out, "?", (x, y), size / 12.0, (255, 255, 255), 2)
    _legend(out, board, letters, analysis.get("score") or {}, scale)
    return out


def _marker(base_px, scale: float, width: int) -> tuple[float, float, int]:
    """Where a piece's marker goes in the drawn image, and its size."""
    x, y = (float(v) / scale for v in base_px)
    return x, y, max(6, int(width / 150))


def _secured_tiles(territory: Mapping[str, Any] | None) -> dict[tuple[int, int], str]:
    """Tile → player for the tiles a player has secured, from ``Territory.to_json()``."""
    owner: dict[tuple[int, int], str] = {}
    secured = (territory or {}).get("secured") or {}
    for player, tiles in secured.items():
        for t in tiles:
            q, r = (t["q"], t["r"]) if isinstance(t, Mapping) else t[:2]
            owner[(int(q), int(r))] = player
    return owner


def _contested_tiles(territory: Mapping[str, Any] | None) -> list[tuple[int, int]]:
    return [(int(t["q"]), int(t["r"])) for t in (territory or {}).get("contested") or ()]


def _hatch(image: np.ndarray, corners: np.ndarray) -> None:
    """White diagonal hatching inside a tile: contested land, readable without colour."""
    x0, y0 = np.floor(corners.min(axis=0)).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, image.shape[1]), min(y1, image.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillPoly(mask, [np.round(corners - [x0, y0]).astype(np.int32)], 1)
    yy, xx = np.mgrid[y0:y1, x0:x1]
    step = max(6, (x1 - x0) // 8)
    lines = ((xx + yy) % step) < max(1, step // 4)
    image[y0:y1, x0:x1][(mask > 0) & lines] = (255, 255, 255)


def _legend(image: np.ndarray, board: Board, letters: Mapping[str, str], score: Mapping[str, int],
            scale: float) -> None:
    """The players' letters and scores and what the marks mean, in the corner hiding the least of the board."""
    lines = [f"{letters[p]} = {p}: {score.get(p, 0)} pt" for p in letters]
    lines.append("S sea  M mountain  P plain  ? unread  s m p: hidden, told by the edge beside it")
    lines.append("square house  circle settler  triangle rune  hatched: contested")
    lines.append("boxed letter: a hand lies over it, may be misread")
    text_scale = max(0.5, image.shape[1] / 1600)
    thickness = max(1, int(math.ceil(text_scale)))
    height = int(32 * text_scale)
    size = (int(max(cv2.getTextSize(t, FONT, text_scale, thickness)[0][0] for t in lines) + 20),
            height * len(lines) + 10)
    tiles = [np.asarray(t.extra["corners_px"], dtype=np.float32) / scale for t in board.tiles.values()
             if len(t.extra.get("corners_px", ())) == 6]
    x0, y0 = freest_corner(image.shape[:2], size, tiles)
    cv2.rectangle(image, (x0, y0), (x0 + size[0], y0 + size[1]), (0, 0, 0), -1)
    for n, text in enumerate(lines):
        cv2.putText(image, text, (x0 + 10, y0 + int(height * (n + 0.8)) + 5), FONT, text_scale, (255, 255, 255),
                    thickness, cv2.LINE_AA)


def freest_corner(shape: tuple[int, int], size: tuple[int, int], polygons: list[np.ndarray]) -> tuple[int, int]:
    """The top-left point of a ``size`` (width, height) box in the corner of an image of ``shape`` (height,
    width) that covers the least area of the convex ``polygons``; the top left wins ties."""
    height, width = shape
    corners = [(0, 0), (max(width - size[0], 0), 0), (0, max(height - size[1], 0)),
               (max(width - size[0], 0), max(height - size[1], 0))]

    def covered(corner: tuple[int, int]) -> float:
        x, y = corner
        box = np.array([[x, y], [x + size[0], y], [x + size[0], y + size[1]], [x, y + size[1]]], np.float32)
        return sum(cv2.intersectConvexConvex(polygon, box)[0] for polygon in polygons)

    return min(corners, key=covered)
