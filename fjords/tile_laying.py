"""Where the simulator may lay a tile next: the open positions of a growing layout.

A tile may be laid where it touches at least two laid tiles, every shared edge
matches, and the land stays one mass (``shared/spec/board-format.md``,
"Placement order"); :class:`GrowingLayout` answers that for every rotation of a
tile at once.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping

from fjords.board import Tile
from fjords.geometry import Hex, facing_sector, land_groups, rotate_terrain

__all__ = ["GrowingLayout", "Placement"]

# A possible tile placement: where, the terrain as it would lie, and how many tiles it touches.
Placement = tuple[Hex, str, int]


def _mask(terrain: str, letter: str) -> int:
    return sum(1 << i for i, c in enumerate(terrain) if c == letter)


@lru_cache(maxsize=None)
def _orientations(terrain: str) -> tuple[tuple[str, int, int, tuple[int, ...]], ...]:
    """The distinct rotations of a tile as ``(terrain, sea mask, mountain mask, land run masks)``."""
    found: dict[str, tuple[str, int, int, tuple[int, ...]]] = {}
    for k in range(6):
        turned = rotate_terrain(terrain, k)
        if turned not in found:
            land_runs = tuple(sum(1 << i for i in run) for run in land_groups(turned))
            found[turned] = (turned, _mask(turned, "S"), _mask(turned, "M"), land_runs)
    return tuple(found.values())


class GrowingLayout:
    """The tiles laid so far, answering where a tile may go next.

    A placement is legal when the tile touches at least two laid tiles, every
    shared edge matches, and the land stays one mass. The land before the
    placement is one mass and edges match, so the new tile keeps it one mass
    exactly when each of its runs of land has a sector on an edge it shares
    with a laid tile (that sector then faces land).

    Each open position keeps what it asks of a tile as bit masks over the
    twelve sectors (shared sectors, and which of them must be sea or
    mountain), so that trying a rotation is two comparisons.
    """

    def __init__(self, tiles: Mapping[Hex, Tile]) -> None:
        self.terrain: dict[Hex, str] = {}
        self.open: dict[Hex, tuple[int, int, int, int]] = {}  # position -> (touched, shared, sea, mountain)
        self._placements: dict[str, list[Placement]] = {}
        for tile in tiles.values():
            self.add(tile.hex, tile.terrain)

    def add(self, h: Hex, terrain: str) -> None:
        self.terrain[h] = terrain
        self.open.pop(h, None)
        self._placements.clear()
        for n in h.neighbours():
            if n not in self.terrain:
                self.open[n] = self._demands(n)

    def _demands(self, h: Hex) -> tuple[int, int, int, int]:
        touched = shared = sea = mountain = 0
        for d in range(6):
            other = self.terrain.get(h.neighbour(d))
            if other is None:
                continue
            touched += 1
            for i in (2 * d, 2 * d + 1):
                shared |= 1 << i
                letter = other[facing_sector(i)]
                sea |= (letter == "S") << i
                mountain |= (letter == "M") << i
        return touched, shared, sea, mountain

    def placements(self, terrain: str) -> list[Placement]:
        """Every legal ``(position, turned terrain, tiles touched)``, in a fixed order."""
        found = self._placements.get(terrain)
        if found is None:
            found = []
            for h, (touched, shared, sea, mountain) in sorted(self.open.items()):
                if touched < 2:
                    continue
                for turned, tile_sea, tile_mountain, land_runs in _orientations(terrain):
                    if (tile_sea & shared == sea and tile_mountain & shared == mountain
                            and all(run & shared for run in land_runs)):
                        found.append((h, turned, touched))
            self._placements[terrain] = found
        return found

    def fits(self, terrain: str) -> bool:
        return bool(self.placements(terrain))
