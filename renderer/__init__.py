"""Synthetic photos of Fjords tables with exact truth, for training and measuring the scanner.

>>> from renderer import render_random
>>> photo = render_random(7, width=640, height=480)
>>> photo.image.shape, photo.truth["format"]
((480, 640, 3), 'fjords-board/1')

Every photo draws its own camera, light, table, tile art, paint and sensor from
its seed (see :mod:`renderer.scene`); keyword ``overrides`` pin any of those
parameters, e.g. ``render_board(board, 1, elevation_deg=90, hands=0)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from fjords import Board
from renderer.boards import random_board, random_setup
from renderer.compose import render_scene
from renderer.scene import copy_pieces, sample_scene
from renderer.tileart import STYLES

__all__ = ["Render", "STYLES", "random_board", "render_board", "render_random"]


@dataclass
class Render:
    """A rendered photo: ``image`` (H×W×3 uint8, BGR), its ``truth`` (a ``fjords-board/1`` document) and
    ``hand_mask`` (H×W float32, 0..1: the share of each pixel an arm covers)."""

    image: np.ndarray
    truth: dict
    hand_mask: np.ndarray | None = None


def render_board(board: Board, seed: int, *, width: int = 2016, height: int = 1512, style: str | None = None,
                 colours: Mapping[str, tuple[int, int, int]] | None = None, print_seed: int | None = None,
                 **overrides: Any) -> Render:
    """Photograph ``board`` as seed ``seed`` decides.

    Parameters
    ----------
    style : one of :data:`STYLES`, or None for a random one.
    colours : RGB paint per player name, replacing the named colour's paint.
    print_seed : draw the tile printing (the style's palette and finish) and the pieces' shapes and size
        from this seed instead, so that several photos show one copy of the game.
    overrides : fields of :class:`renderer.scene.Scene` to pin (unknown names raise ``TypeError``).
    """
    if style is not None and style not in STYLES:
        raise ValueError(f"unknown style {style!r}; expected one of {', '.join(STYLES)}")
    if width < 16 or height < 16:
        raise ValueError("width and height must be at least 16 pixels")
    rng = np.random.default_rng(seed)
    scene = sample_scene(rng, style, board.edition)
    pinned = copy_pieces(print_seed, board.edition) if print_seed is not None else {}
    scene = scene.replace(**{**pinned, **overrides})
    image, truth, hand_mask = render_scene(board, scene, rng, width, height, colours, print_seed)
    truth["render"]["seed"] = seed
    return Render(image, truth, hand_mask)


def render_random(seed: int, *, edition: str | None = None, players: int | None = None, width: int = 2016,
                  height: int = 1512, style: str | None = None) -> Render:
    """A random board (edition, players and game phase drawn from ``seed`` unless given), photographed."""
    edition, players = random_setup(seed, edition, players)
    board = random_board(seed, edition, players)
    return render_board(board, seed, width=width, height=height, style=style)
