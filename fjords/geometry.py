"""Geometry of the pointy-top axial hex lattice and of the twelve tile sectors.

Everything here follows ``shared/spec/board-format.md``: directions ``d = 0..5``
point at ``60·d`` degrees counter-clockwise from the image's +x axis, sector
``i`` covers the rim from ``30·i − 30`` to ``30·i`` degrees, and sectors ``2d``
and ``2d + 1`` are the two halves of edge ``d``.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterator, NamedTuple

SECTORS = 12
TERRAINS = "SMP"
UNKNOWN = "?"
LAND = frozenset("MP")


class Hex(NamedTuple):
    """An axial lattice position ``(q, r)``."""

    q: int
    r: int

    def neighbour(self, d: int) -> "Hex":
        dq, dr = DIRECTIONS[d % 6]
        return Hex(self.q + dq, self.r + dr)

    def neighbours(self) -> Iterator["Hex"]:
        for dq, dr in DIRECTIONS:
            yield Hex(self.q + dq, self.r + dr)

    def rotated(self, k: int) -> "Hex":
        """Turn ``k·60°`` counter-clockwise about the origin: ``(q, r) → (q + r, −q)``."""
        q, r = self.q, self.r
        for _ in range(k % 6):
            q, r = q + r, -q
        return Hex(q, r)

    def translated(self, dq: int, dr: int) -> "Hex":
        return Hex(self.q + dq, self.r + dr)

    def distance(self, other: "Hex") -> int:
        dq, dr = self.q - other.q, self.r - other.r
        return (abs(dq) + abs(dr) + abs(dq + dr)) // 2

    def pixel_center(self, size: float = 1.0) -> tuple[float, float]:
        """Top-down pixel centre for a hex of circumradius ``size`` (y grows downwards)."""
        return (size * math.sqrt(3.0) * (self.q + self.r / 2.0), 1.5 * size * self.r)


DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


def direction_between(a: Hex, b: Hex) -> int | None:
    """The direction ``d`` with ``b == a.neighbour(d)``, or None when not adjacent."""
    delta = (b.q - a.q, b.r - a.r)
    try:
        return DIRECTIONS.index(delta)
    except ValueError:
        return None


def edge_of_sector(i: int) -> int:
    """The edge (direction) a sector lies on."""
    return (i % SECTORS) // 2


def facing_sector(i: int) -> int:
    """The sector of the neighbour across edge ``i // 2`` that lies against sector ``i``."""
    d, h = divmod(i % SECTORS, 2)
    return 2 * ((d + 3) % 6) + (1 - h)


# facing_sector as a table, for the engine's hottest loops.
FACING: tuple[int, ...] = tuple(facing_sector(i) for i in range(SECTORS))


def edge_pairs(d: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two ``(own sector, facing sector)`` pairs across edge ``d``."""
    return ((2 * d, facing_sector(2 * d)), (2 * d + 1, facing_sector(2 * d + 1)))


def rotate_sector(i: int, k: int) -> int:
    return (i + 2 * k) % SECTORS


def rotate_terrain(terrain: str, k: int) -> str:
    """Turn a twelve-letter terrain string ``k·60°`` counter-clockwise."""
    shift = (2 * k) % SECTORS
    return terrain[SECTORS - shift:] + terrain[:SECTORS - shift] if shift else terrain


def expand_terrain(terrain: str) -> str:
    """Accept the six-letter shorthand (one letter per edge); return twelve letters."""
    if len(terrain) == 6:
        return "".join(c + c for c in terrain)
    return terrain


@lru_cache(maxsize=4096)  # pure and called for every piece of every Board; few distinct tiles
def cyclic_runs(terrain: str, letters: frozenset[str] | str) -> tuple[tuple[int, ...], ...]:
    """Maximal cyclic runs of sectors whose letter is in ``letters``, in rim order.

    Each run starts at the sector whose predecessor is not in ``letters`` (sector 0
    when the whole rim is), which for plains is the segment's canonical name.
    """
    if all(c in letters for c in terrain):
        return (tuple(range(SECTORS)),)
    runs = []
    for start in range(SECTORS):
        if terrain[start] in letters and terrain[start - 1] not in letters:
            run = []
            i = start
            while terrain[i % SECTORS] in letters:
                run.append(i % SECTORS)
                i += 1
            runs.append(tuple(run))
    return tuple(runs)


def segments(terrain: str) -> tuple[tuple[int, ...], ...]:
    """The plain segments of a tile, each starting at its canonical name."""
    return cyclic_runs(terrain, "P")


def segment_of(terrain: str, sector: int) -> tuple[int, ...] | None:
    """The segment containing ``sector``, or None when that sector is not plain."""
    for run in segments(terrain):
        if sector in run:
            return run
    return None


def canonical_segment(terrain: str, sector: int) -> int | None:
    run = segment_of(terrain, sector)
    return None if run is None else run[0]


def land_groups(terrain: str) -> tuple[tuple[int, ...], ...]:
    """The runs of land (``M``/``P``) sectors of a tile."""
    return cyclic_runs(terrain, LAND)


def sector_mid_angle(i: int) -> float:
    """Angle (degrees, counter-clockwise from +x) of the middle of sector ``i``'s rim."""
    return 30.0 * i - 15.0


def corner_angle(k: int) -> float:
    """Angle of tile corner ``k`` (between edges ``k`` and ``k + 1``)."""
    return 30.0 + 60.0 * k
