"""The search behind the ``placement-order`` and ``landmass`` rules: closures of placed tiles.

A :class:`Layout` numbers a board's tiles; a :class:`Growth` is a set of placed
tiles and how their land hangs together; :func:`largest_closures` grows one from
every candidate start triple to a fixed point and keeps the largest. ``docs/rules.md`` ("Legality",
``placement-order``) proves that the fixed-point closure is an exact search.

Unread sectors are read two ways (:func:`tile_land`): *lenient* (a ``?`` may
join land; failing ⇒ failing for every reading) and *strict* (a ``?`` joins
nothing and must touch read land; holding ⇒ holding for every reading).
:mod:`fjords.layout_checks` turns the answers into violations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator, Sequence

from fjords.board import Board
from fjords.geometry import DIRECTIONS, FACING, LAND, SECTORS, Hex, cyclic_runs

__all__ = ["Growth", "Layout", "TileLand", "largest_closures", "tile_land"]

Triple = tuple[int, int, int]  # three mutually adjacent tiles, by index


class Layout:
    """The tiles of a board as small integers: terrain strings and neighbour indices (-1: none)."""

    def __init__(self, board: Board) -> None:
        self.hexes: list[Hex] = sorted(board.tiles)
        index = {(h.q, h.r): n for n, h in enumerate(self.hexes)}
        self.terrains: list[str] = [board.tiles[h].terrain for h in self.hexes]
        self.starts: list[int] = [n for n, h in enumerate(self.hexes) if board.tiles[h].start]
        self.neighbours: list[tuple[int, ...]] = [
            tuple([index.get((q + dq, r + dr), -1) for dq, dr in DIRECTIONS]) for q, r in self.hexes]
        self.degrees: list[int] = [6 - nbs.count(-1) for nbs in self.neighbours]
        self.all_read = not any("?" in t for t in self.terrains)
        self._lands: dict[bool, list[TileLand]] = {}

    def lands(self, lenient: bool) -> list[TileLand]:
        """Every tile's :class:`TileLand` in the lenient or strict reading."""
        if lenient not in self._lands:
            self._lands[lenient] = [tile_land(t, lenient) for t in self.terrains]
        return self._lands[lenient]

    def __len__(self) -> int:
        return len(self.hexes)

    def terrains_across(self, t: int, i: int) -> str | None:
        """The letter lying against sector ``i`` of tile ``t``, or None where no tile is."""
        nb = self.neighbours[t][i >> 1]
        return None if nb < 0 else self.terrains[nb][FACING[i]]

    def triangles(self) -> list[Triple]:
        """Every three mutually adjacent tiles, most surrounded first (they most often start a full closure)."""
        degrees = self.degrees
        found = []
        for a, nbs in enumerate(self.neighbours):
            for d in (0, 1):  # each triangle once: from its tile that sees the others at d and d + 1, d < 2
                b, c = nbs[d], nbs[d + 1]
                if b >= 0 and c >= 0:
                    found.append((-(degrees[a] + degrees[b] + degrees[c]), a, b, c))
        found.sort()
        return [(a, b, c) for _, a, b, c in found]


def largest_closures(layout: Layout, triples: Sequence[Triple], lenient: bool) -> list[Growth]:
    """The largest closures over the candidate start triples, every one of that size (a complete one ends
    the search); empty when no triple's land is one mass to start from.

    Several closures of the same size can leave out different tiles (two islands off a sea start, two
    start triples): all are kept, so what a caller names does not hang on the order of the search.
    A closure ``C`` that is a fixed point holding land contains every tile any valid order can place
    from a start inside it (the monotonicity lemma in ``docs/rules.md``), so a triple already inside a
    failed closure is skipped: its closure lies inside ``C`` and is no larger, or it is ``C``.
    """
    best: list[Growth] = []
    dead_ends: list[set[int]] = []
    for triple in triples:
        has_land = any(any(layout.lands(lenient)[t].required) for t in triple)
        if has_land and any(all(t in placed for t in triple) for placed in dead_ends):
            continue
        for growth in _grow(layout, triple, lenient):
            if len(growth) == len(layout):
                return [growth]
            if growth.main >= 0:
                dead_ends.append(growth.placed)
            best = _keep_largest(best, growth)
    return best


def _keep_largest(best: list[Growth], growth: Growth) -> list[Growth]:
    if best and len(growth) < len(best[0]):
        return best
    if best and len(growth) == len(best[0]):
        return best if any(g.placed == growth.placed for g in best) else best + [growth]
    return [growth]


def _grow(layout: Layout, triple: Triple, lenient: bool) -> list[Growth]:
    """Place ``triple``, then every tile that fits, to a fixed point: the largest such closures (empty
    when the start's land is apart).

    While no land is placed, the first tile with land is the one choice that matters (adding land to
    an empty mass is the only non-monotone step), so every candidate for it is tried.
    """
    growth = Growth(layout, lenient)
    for t in triple:
        growth.add(t)
    if not growth.connected():
        return []
    if growth.main >= 0:
        growth.fill()
        return [growth]
    growth.fill(land_free_only=True)
    best = [growth]
    for t in growth.waiting():
        if growth.lands[t].land_free or not growth.fits(t):
            continue
        branch = growth.copy()
        branch.add(t)
        branch.ready = branch.waiting()
        branch.fill()
        if len(branch) == len(layout):
            return [branch]
        best = _keep_largest(best, branch)
    return best


@dataclass(frozen=True)
class TileLand:
    """How one terrain string takes part in the land, in one reading of ``?``.

    ``runs`` are the tile's land nodes (sectors joined inside the tile), ``run_of[i]`` the run of
    sector ``i`` (-1: none), ``required[j]`` whether run ``j`` must join the mass, ``loose`` the
    unread sectors that must touch read land across an edge (strict reading), ``land_free`` whether
    the tile can never break the one-mass condition.
    """

    runs: tuple[tuple[int, ...], ...]
    run_of: tuple[int, ...]
    required: tuple[bool, ...]
    loose: tuple[int, ...]
    land_free: bool


@lru_cache(maxsize=4096)
def tile_land(terrain: str, lenient: bool) -> TileLand:
    """Lenient reading: ``?`` may join land, only read land must be one mass (fails ⇒ fails for every
    reading). Strict: only read land joins, and every ``?`` must touch read land, so that whatever it
    reads it cannot stand apart (holds ⇒ holds for every reading)."""
    runs = cyclic_runs(terrain, "MP?" if lenient else "MP")
    run_of = [-1] * SECTORS
    for j, run in enumerate(runs):
        for i in run:
            run_of[i] = j
    required = tuple(any(terrain[i] in LAND for i in run) for run in runs)
    loose = () if lenient else tuple(
        i for i in range(SECTORS)
        if terrain[i] == "?" and terrain[i - 1] not in LAND and terrain[(i + 1) % SECTORS] not in LAND)
    return TileLand(runs, tuple(run_of), required, loose, not any(required) and not loose)


class Growth:
    """A set of placed tiles and how their land hangs together, grown one tile at a time.

    Land runs are nodes ``12·tile + run`` of a union-find whose roots are absent from ``parent``.
    ``main`` is a required node of the placed land (-1 while there is none); ``ready`` holds unplaced
    tiles that touch two placed ones. Everything is sparse, so that a closure costs what it places,
    not the size of the board (many triples may be tried on a broken board).
    """

    def __init__(self, layout: Layout, lenient: bool) -> None:
        self.layout = layout
        self.lenient = lenient
        self.lands = layout.lands(lenient)
        self.placed: set[int] = set()
        self.touching: dict[int, int] = {}
        self.parent: dict[int, int] = {}
        self.main = -1
        self.ready: list[int] = []

    @classmethod
    def of_all(cls, layout: Layout, lenient: bool) -> Growth:
        """Every tile placed, whatever the order (for the landmass rule)."""
        whole = cls(layout, lenient)
        for t in range(len(layout)):
            whole.add(t)
        return whole

    def __len__(self) -> int:
        return len(self.placed)

    def copy(self) -> Growth:
        twin = Growth.__new__(Growth)
        twin.__dict__.update(self.__dict__)
        twin.placed, twin.touching, twin.parent, twin.ready = (
            set(self.placed), dict(self.touching), dict(self.parent), list(self.ready))
        return twin

    def waiting(self) -> list[int]:
        return sorted(t for t, count in self.touching.items() if count >= 2 and t not in self.placed)

    def _find(self, node: int) -> int:
        parent = self.parent
        root = node
        while root in parent:
            root = parent[root]
        while node != root:  # path compression
            parent[node], node = root, parent[node]
        return root

    def _across(self, t: int, i: int) -> int:
        """The placed land node lying against sector ``i`` of tile ``t``, or -1."""
        nb = self.layout.neighbours[t][i >> 1]
        if nb < 0 or nb not in self.placed:
            return -1
        k = self.lands[nb].run_of[FACING[i]]
        return -1 if k < 0 else SECTORS * nb + k

    def add(self, t: int) -> None:
        self.placed.add(t)
        land = self.lands[t]
        neighbours, placed, lands, parent, find = (
            self.layout.neighbours[t], self.placed, self.lands, self.parent, self._find)
        for j, run in enumerate(land.runs):
            root = find(SECTORS * t + j)
            for i in run:  # _across, inlined: this loop is the engine's hottest
                nb = neighbours[i >> 1]
                if nb >= 0 and nb in placed:
                    k = lands[nb].run_of[FACING[i]]
                    if k >= 0:
                        other = find(SECTORS * nb + k)
                        if other != root:
                            parent[other] = root
            if land.required[j] and self.main < 0:
                self.main = SECTORS * t + j
        touching = self.touching
        for nb in neighbours:
            if nb >= 0 and nb not in placed:
                touching[nb] = count = touching.get(nb, 0) + 1
                if count >= 2:
                    self.ready.append(nb)

    def fits(self, t: int) -> bool:
        """Whether placing ``t`` keeps the land one mass (its touching two placed tiles is the caller's)."""
        land = self.lands[t]
        if any(not self._read_land_across(t, i) for i in land.loose):
            return False
        if not land.runs:
            return True
        if self.lenient:
            return self._joins(t)
        if self.main < 0:
            return len(land.runs) == 1
        # Strictly read, every placed node is required, so all of them are the one mass.
        return all(any(self._across(t, i) >= 0 for i in run) for run in land.runs)

    def _read_land_across(self, t: int, i: int) -> bool:
        nb = self.layout.neighbours[t][i >> 1]
        return nb >= 0 and nb in self.placed and self.layout.terrains[nb][FACING[i]] in LAND

    def _joins(self, t: int) -> bool:
        """Lenient test: do the required runs of ``t`` and the placed mass end up in one component?

        Runs of ``t`` touching a common placed component join each other through it; the placed
        components made of unread sectors only may bridge them.
        """
        land = self.lands[t]
        group = list(range(len(land.runs)))  # a tiny union-find over the runs of t

        def top(j: int) -> int:
            while group[j] != j:
                j = group[j]
            return j

        toucher: dict[int, int] = {}
        for j, run in enumerate(land.runs):
            for i in run:
                other = self._across(t, i)
                if other >= 0:
                    earlier = toucher.setdefault(self._find(other), j)
                    group[top(j)] = top(earlier)
        targets = {top(j) for j, needed in enumerate(land.required) if needed}
        if self.main >= 0:
            via = toucher.get(self._find(self.main))
            if via is None:
                return not targets
            targets.add(top(via))
        return len(targets) <= 1

    def fill(self, land_free_only: bool = False) -> None:
        """Place tiles that touch two placed ones and fit, until none does (a fixed point).

        Strictly read, whether a tile fits changes only when a neighbour is placed, which puts it
        back in ``ready``; leniently read, far-away placements can merge components, so the tiles
        that did not fit are tried again after every round that placed something.
        """
        while True:
            placed_any = False
            parked: set[int] = set()
            while self.ready:
                t = self.ready.pop()
                if t in self.placed or (land_free_only and not self.lands[t].land_free):
                    continue
                if self.fits(t):
                    self.add(t)
                    placed_any = True
                else:
                    parked.add(t)
            if not (self.lenient and placed_any and parked):
                return
            self.ready = sorted(parked, reverse=True)

    def _components(self) -> Iterator[tuple[int, int]]:
        """``(tile, root)`` for every required land node of the placed tiles."""
        for t in self.placed:
            for j, needed in enumerate(self.lands[t].required):
                if needed:
                    yield t, self._find(SECTORS * t + j)

    def connected(self) -> bool:
        """The placed land is one mass (and, strictly read, no unread sector can stand apart)."""
        if len({root for _, root in self._components()}) > 1:
            return False
        return all(self._read_land_across(t, i) for t in self.placed for i in self.lands[t].loose)

    def land_pieces(self) -> list[list[int]]:
        """The tiles of every separate piece of the placed land (a tile once per run in the piece)."""
        members: dict[int, list[int]] = {}
        for t, root in self._components():
            members.setdefault(root, []).append(t)
        return list(members.values())

    def cut_off(self) -> tuple[tuple[Hex, ...], bool]:
        """Tiles with land outside the main piece of :meth:`land_pieces`, and whether there is a main piece.

        The main piece is the largest (by runs), among equal sizes the one holding the most start tiles.
        When that still leaves a tie (or no land is placed) no piece is the main one and every tile with land
        is returned: a choice by position would pick a different piece once the board is turned.
        """
        pieces = self.land_pieces()
        starts = set(self.layout.starts)
        ranks = [(len(ts), len(starts.intersection(ts))) for ts in pieces]
        best = max(ranks, default=None)
        main = pieces[ranks.index(best)] if ranks.count(best) == 1 else None
        apart = {t for ts in pieces if ts is not main for t in ts}
        return tuple(self.layout.hexes[t] for t in sorted(apart)), main is not None
