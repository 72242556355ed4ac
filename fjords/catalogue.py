"""The tile catalogue of each edition: forty terrain strings, three of them the start tiles.

We do not have the publisher's tile list. These tiles are our own, written out
literally so that they never change: runs of sea, mountain and plain around the
rim, with boundaries at corners and in the middle of edges, a few all-sea and
all-plain tiles, and one all-mountain tile. ``docs/simulator.md`` explains the
choice. Rotation does not matter here (the simulator tries all six), so each
tile is written in the rotation that reads best.
"""

from __future__ import annotations

from fjords.board import EDITIONS, Tile
from fjords.geometry import Hex

ALL_MOUNTAIN = "M" * 12

# Where the start tiles lie: three mutually adjacent positions around one corner.
START_POSITIONS: tuple[Hex, Hex, Hex] = (Hex(0, 0), Hex(1, 0), Hex(0, 1))

# The start tiles as they lie at START_POSITIONS: plains meeting a sea inlet
# that reaches the triangle's middle corner, and a mountain range to the west.
_START_TILES: tuple[str, str, str] = ("PPPPMMMMSSPP", "SSSSSPPPSSSS", "MMSSPPPPMMMM")

_COASTS = (
    "SSSSSSSSSSSS", "SSSSSSSSSSSS",
    "PPPPPPPPPPPP", "PPPPPPPPPPPP", "PPPPPPPPPPPP", "PPPPPPPPPPPP",
    "PPSSSSSSSSSS", "PPPPPPSSSSSS", "PPPPPPPSSSSS", "PPPPPPPPSSSS", "PPPPPPPPSSSS",
    "PPPPPPPPPSSS", "PPPPPPPPPSSS", "PPPPPPPPPPSS", "PPPPPPPPPPPS", "SSPPPPSSPPPP",
)
_MOUNTAINS = (
    ALL_MOUNTAIN,
    "PPPPPPPPMMMM", "PPPPPPPPPMMM", "PPPPPPPMMMMM", "PPPPPPPMMMMM", "PPPPMMPPPPPP",
    "PPPPMMPPPPPP", "PPPPPMMMPPPP", "PPPPPPMMMMMM", "MMPPPPMMPPPP", "MMMMMMMMPPPP",
    "PPMMPPPPPPSS", "PPMMMMPPSSSS", "MMMMPPPPSSSS", "MMMPPPPPSSSS", "MMMMMPPPPSSS",
    "MMMMPPSSSSSS", "MMMMMMPPPSSS", "MMMPPPPPPPSS", "MMMPPPPPPPSS", "MMMMPPPPPPSS",
)

_CATALOGUE: dict[str, tuple[str, ...]] = {
    # The 2022 edition keeps the forty-tile count and the all-mountain tile; we
    # know no difference in the terrain of its tiles, so both use one list.
    edition: _START_TILES + _COASTS + _MOUNTAINS
    for edition in EDITIONS
}


def _check_edition(edition: str) -> None:
    if edition not in _CATALOGUE:
        raise ValueError(f"unknown edition {edition!r}; expected one of {', '.join(EDITIONS)}")


def catalogue(edition: str = "classic") -> tuple[str, ...]:
    """Every tile of the edition (forty), the three start tiles first."""
    _check_edition(edition)
    return _CATALOGUE[edition]


def start_tiles(edition: str = "classic") -> tuple[str, str, str]:
    """The start tiles' terrain as they lie at :data:`START_POSITIONS` (already rotated)."""
    _check_edition(edition)
    return _START_TILES


def start_layout(edition: str = "classic") -> tuple[Tile, Tile, Tile]:
    """The three start tiles laid as the start triangle, marked ``start``."""
    a, b, c = (Tile(hex=h, terrain=t, start=True) for h, t in zip(START_POSITIONS, start_tiles(edition)))
    return a, b, c
