"""The Fjords rules engine: board model, legality, scoring, territory and solving.

This package knows nothing of images; the scanner and the renderer build on it.
"""

from fjords.board import Board, Piece, Tile
from fjords.boardjson import FormatError
from fjords.geometry import Hex
from fjords.rules import Rules

__all__ = ["Board", "FormatError", "Hex", "Piece", "Rules", "Tile"]
__version__ = "0.1.0"
