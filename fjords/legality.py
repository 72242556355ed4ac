"""Which rules of Fjords a board breaks, and which it may break where sectors are unread.

:func:`legal_violations` lists the rules a board certainly breaks;
:func:`undecided` lists the rules whose answer depends on a sector the scanner
could not read (``?``). A ``?`` may stand for any of ``S``, ``M`` and ``P``: a
rule is *broken* when it fails whatever the unread sectors are, *undecided*
when it fails for some reading and holds for another (or when deciding that
exactly would need a search over readings, see ``placement-order``), and
silent otherwise. A legal, fully read position gives ``[]`` from both.

The rule codes, in the order violations are sorted:

``edge-mismatch``
    terrain differs across a shared edge (one violation per edge).
``placement-order``
    no order of the tiles, start tiles first, in which every later tile
    touched two earlier ones and the land was one mass after every placement.
``landmass``
    the land (``M`` and ``P`` sectors) is not one connected mass.
``piece-terrain``
    a house or settler that does not stand on a plain sector.
``two-pieces-on-tile``
    more than one piece, rune stones included, on a tile.
``settler-disconnected``
    a settler not joined to one of its owner's houses by a chain of its
    owner's pieces on adjacent segments.
``piece-count``
    more houses or settlers than :class:`~fjords.rules.Rules` gives a player.
``house-on-forbidden-tile``
    a house on an all-mountain tile or on a start tile.
``start-tiles``
    tiles marked ``start`` that are not three mutually adjacent tiles.

Placement order is decided by search; ``docs/rules.md`` ("Legality") proves
that the fixed-point closure used here is exact.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Sequence

from fjords.board import Board, Piece
from fjords.boardjson import _piece_json  # the document's own form of a piece
from fjords.geometry import DIRECTIONS, SECTORS, Hex, cyclic_runs, facing_sector
from fjords.rules import Rules

RULES = ("edge-mismatch", "placement-order", "landmass", "piece-terrain", "two-pieces-on-tile",
         "settler-disconnected", "piece-count", "house-on-forbidden-tile", "start-tiles")

TERRAIN_NAMES = {"S": "sea", "M": "mountain", "P": "plain", "?": "unread"}

_FACING = tuple(facing_sector(i) for i in range(SECTORS))
_READ_LAND = frozenset("MP")


@dataclass(frozen=True)
class Violation:
    """One broken (or undecided) rule: its code, a sentence for players, and what it concerns."""

    rule: str
    message: str
    tiles: tuple[Hex, ...] = ()
    pieces: tuple[Piece, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "tiles": [[h.q, h.r] for h in self.tiles],
                "pieces": [_piece_json(p) for p in self.pieces]}

    def sort_key(self) -> tuple[Any, ...]:
        return (RULES.index(self.rule), self.tiles, tuple(_piece_key(p) for p in self.pieces), self.message)


def legal_violations(board: Board, rules: Rules | None = None) -> list[Violation]:
    """Every rule ``board`` certainly breaks, whatever its unread sectors are; ``[]`` when none."""
    return _verdicts(board, rules)[0]


def undecided(board: Board, rules: Rules | None = None) -> list[Violation]:
    """Every rule that holds or fails depending on how the unread (``?``) sectors read."""
    return _verdicts(board, rules)[1]


def _verdicts(board: Board, rules: Rules | None) -> tuple[list[Violation], list[Violation]]:
    """Both lists, computed once per board and rules (callers usually ask for both)."""
    rules = rules or Rules.for_edition(board.edition)

    def compute(board: Board) -> tuple[list[Violation], list[Violation]]:
        broken, unsure = _layout_verdicts(board)
        piece_broken, piece_unsure = _piece_verdicts(board, rules)
        return _sorted(broken + piece_broken), _sorted(unsure + piece_unsure)

    broken, unsure = _memo(board, repr(rules), compute)
    return list(broken), list(unsure)


def _sorted(violations: Iterable[Violation]) -> list[Violation]:
    return sorted(violations, key=Violation.sort_key)


def _memo(board: Board, key: str, compute: Callable[[Board], Any]) -> Any:
    """Derived data kept on the board itself: a Board is immutable (``cached_property`` relies on that too)."""
    store = board.__dict__
    name = "_legality " + key
    if name not in store:
        store[name] = compute(board)
    return store[name]


def _piece_key(piece: Piece) -> tuple[Any, ...]:
    return (piece.hex, -1 if piece.sector is None else piece.sector, piece.kind, piece.player or "",
            piece.rune or "")


def _name(h: Hex) -> str:
    return f"({h.q}, {h.r})"


def _names(hexes: Iterable[Hex]) -> str:
    listed = [_name(h) for h in hexes]
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]


def _describe(piece: Piece) -> str:
    owner = f"{piece.player} " if piece.player else ""
    return f"the {owner}{piece.kind} on {_name(piece.hex)}"


# -- the layout: edges, placement order, landmass, start tiles ------------------------------------


def _layout_verdicts(board: Board) -> tuple[list[Violation], list[Violation]]:
    layout = _Layout(board)
    broken, unsure = _edge_verdicts(layout)
    start, start_broken = _start_triple(layout)
    broken += start_broken
    order_broken, order_unsure = _placement_verdicts(layout, start)
    return broken + order_broken, unsure + order_unsure


class _Layout:
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
        self._lands: dict[bool, list[_TileLand]] = {}

    def lands(self, lenient: bool) -> list["_TileLand"]:
        """Every tile's :class:`_TileLand` in the lenient or strict reading."""
        if lenient not in self._lands:
            self._lands[lenient] = [_tile_land(t, lenient) for t in self.terrains]
        return self._lands[lenient]

    def __len__(self) -> int:
        return len(self.hexes)

    def terrains_across(self, t: int, i: int) -> str | None:
        """The letter lying against sector ``i`` of tile ``t``, or None where no tile is."""
        nb = self.neighbours[t][i >> 1]
        return None if nb < 0 else self.terrains[nb][_FACING[i]]

    def triangles(self) -> list[tuple[int, int, int]]:
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


def _edge_verdicts(layout: _Layout) -> tuple[list[Violation], list[Violation]]:
    broken, unsure = [], []
    for a, terrain in enumerate(layout.terrains):
        for d in (0, 1, 2):  # every shared edge once: the other three are seen from the other tile
            b = layout.neighbours[a][d]
            if b < 0:
                continue
            other = layout.terrains[b]
            i, j = 2 * d, 2 * d + 1
            if terrain[i] == other[_FACING[i]] != "?" and terrain[j] == other[_FACING[j]] != "?":
                continue  # the common case, decided without building anything
            pairs = [(terrain[i], other[_FACING[i]]), (terrain[j], other[_FACING[j]])]
            tiles = tuple(sorted((layout.hexes[a], layout.hexes[b])))
            clash = [(x, y) for x, y in pairs if x != y and "?" not in (x, y)]
            if clash:
                x, y = clash[0]
                broken.append(Violation(
                    "edge-mismatch", f"Tiles {_name(layout.hexes[a])} and {_name(layout.hexes[b])} do not match "
                    f"along their shared edge: {TERRAIN_NAMES[x]} meets {TERRAIN_NAMES[y]}.", tiles))
            elif any("?" in pair for pair in pairs):
                unsure.append(Violation(
                    "edge-mismatch", f"Cannot tell whether tiles {_names(tiles)} match along their shared edge "
                    "because a sector there is unread.", tiles))
    return broken, unsure


def _start_triple(layout: _Layout) -> tuple[tuple[int, int, int] | None, list[Violation]]:
    """The marked start tiles when they are a valid triple; otherwise None (and why, if any are marked)."""
    marked = layout.starts
    if not marked:
        return None, []
    if len(marked) == 3 and all(b in layout.neighbours[a] for a in marked for b in marked if a != b):
        return (marked[0], marked[1], marked[2]), []
    hexes = tuple(layout.hexes[t] for t in marked)
    if len(marked) == 3:
        message = f"The start tiles {_names(hexes)} are not all next to each other."
    else:
        message = f"{len(marked)} tiles are marked as start tiles ({_names(hexes)}); the start is three tiles."
    return None, [Violation("start-tiles", message, hexes)]


def _placement_verdicts(layout: _Layout, start: tuple[int, int, int] | None) -> tuple[list[Violation], list[Violation]]:
    """``placement-order`` and ``landmass``: broken when the lenient reading fails, undecided when the strict one does.

    A complete closure ends with every tile placed and the land one mass in that reading, so the
    landmass rule needs its own look only where a closure stops short.
    """
    if not len(layout):
        return [], []
    lonely = tuple(layout.hexes[t] for t in range(len(layout)) if layout.degrees[t] < 2)
    if lonely:
        # Sound shortcut: a start tile touches the other two, every later tile two earlier ones.
        verb = "touches" if len(lonely) == 1 else "touch"
        order = Violation("placement-order", f"No placement order builds this layout: {_names(lonely)} {verb} "
                          "fewer than two other tiles.", lonely)
        broken, unsure = _landmass_verdicts(layout)
        return [order] + broken, unsure
    triples = [start] if start is not None else layout.triangles()
    # Without unread sectors both readings are the board itself; the strict code is the faster.
    lenient = _build(layout, triples, lenient=not layout.all_read)
    if lenient is None or len(lenient) < len(layout):
        broken, unsure = _landmass_verdicts(layout)
        return [_order_violation(layout, lenient, start)] + broken, unsure
    if layout.all_read:
        return [], []
    # Sound shortcut: an unread sector with no read land beside it that faces no read land can never
    # be joined in the strict reading, so no strict order exists; skip the search over triples.
    hopeless = [t for t, terrain in enumerate(layout.terrains) for i in _tile_land(terrain, False).loose
                if layout.terrains_across(t, i) not in _READ_LAND]
    if hopeless:
        stranded = tuple(layout.hexes[t] for t in sorted(set(hopeless)))
    else:
        strict = _build(layout, triples, lenient=False)
        stranded = _stranded(layout, strict.placed if strict is not None else set())
    if stranded:
        _, unsure = _landmass_verdicts(layout, lenient_holds=True)
        origin = "from the start tiles" if start is not None else "from any three adjacent start tiles"
        unsure.insert(0, Violation("placement-order", f"Cannot tell whether this layout could be built in order "
                                   f"{origin} because sectors are unread (around {_names(stranded)}).", stranded))
        return [], unsure
    return [], []


def _stranded(layout: _Layout, placed: set[int]) -> tuple[Hex, ...]:
    return tuple(layout.hexes[t] for t in range(len(layout)) if t not in placed)


def _order_violation(layout: _Layout, best: "_Growth | None", start: tuple[int, int, int] | None) -> Violation:
    """Why no order builds the layout: no start whose land is one mass, or the tiles the best closure left."""
    if best is None:
        if start is not None:
            tiles = tuple(sorted(layout.hexes[t] for t in start))
            reason = f"the land of the start tiles {_names(tiles)} is not one mass"
        else:
            tiles = tuple(layout.hexes)
            reason = "no three mutually adjacent tiles have their land in one mass to start from"
        return Violation("placement-order", f"No placement order builds this layout: {reason}.", tiles)
    origin = "from the start tiles" if start is not None else "from any three adjacent start tiles"
    stranded = _stranded(layout, best.placed)
    return Violation("placement-order", f"No placement order builds this layout {origin}: {_names(stranded)} "
                     "can never be placed touching two earlier tiles with the land in one mass.", stranded)


def _landmass_verdicts(layout: _Layout, lenient_holds: bool = False) -> tuple[list[Violation], list[Violation]]:
    """Broken: the read land is apart however ``?`` reads. Undecided: some reading of ``?`` leaves it apart."""
    if not lenient_holds:
        whole = _Growth.of_all(layout, lenient=not layout.all_read)  # all read: one reading, strict code faster
        if not whole.connected():
            apart = whole.cut_off()
            return [Violation("landmass", f"The land is not one mass: the land on {_names(apart)} is cut off "
                                          "from the rest.", apart)], []
    if layout.all_read:
        return [], []
    whole = _Growth.of_all(layout, lenient=False)
    if whole.connected():
        return [], []
    where = whole.cut_off() or tuple(layout.hexes[t] for t in range(len(layout)) if "?" in layout.terrains[t])
    return [], [Violation("landmass", "Cannot tell whether the land is one mass because sectors are unread "
                                      f"(around {_names(where)}).", where)]


def _build(layout: _Layout, triples: Sequence[tuple[int, int, int]], lenient: bool) -> "_Growth | None":
    """The largest closure over the candidate start triples (the first complete one ends the search);
    None when no triple's land is one mass to start from.

    A closure ``C`` that is a fixed point holding land contains every tile any valid order can place
    from a start inside it (the monotonicity lemma in ``docs/rules.md``), so a triple already inside a
    failed closure is skipped.
    """
    best: _Growth | None = None
    dead_ends: list[set[int]] = []
    for triple in triples:
        has_land = any(any(layout.lands(lenient)[t].required) for t in triple)
        if has_land and any(all(t in placed for t in triple) for placed in dead_ends):
            continue
        growth = _grow(layout, triple, lenient)
        if growth is None:
            continue
        if len(growth) == len(layout):
            return growth
        if growth.main >= 0:
            dead_ends.append(growth.placed)
        if best is None or len(growth) > len(best):
            best = growth
    return best


def _grow(layout: _Layout, triple: tuple[int, int, int], lenient: bool) -> "_Growth | None":
    """Place ``triple``, then every tile that fits, to a fixed point; None when the start's land is apart.

    While no land is placed, the first tile with land is the one choice that matters (adding land to
    an empty mass is the only non-monotone step), so every candidate for it is tried.
    """
    growth = _Growth(layout, lenient)
    for t in triple:
        growth.add(t)
    if not growth.connected():
        return None
    if growth.main >= 0:
        growth.fill()
        return growth
    growth.fill(land_free_only=True)
    best = growth
    for t in growth.waiting():
        if growth.lands[t].land_free or not growth.fits(t):
            continue
        branch = growth.copy()
        branch.add(t)
        branch.ready = branch.waiting()
        branch.fill()
        if len(branch) == len(layout):
            return branch
        if len(branch) > len(best):
            best = branch
    return best


@dataclass(frozen=True)
class _TileLand:
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
def _tile_land(terrain: str, lenient: bool) -> _TileLand:
    """Lenient reading: ``?`` may join land, only read land must be one mass (fails ⇒ fails for every
    reading). Strict: only read land joins, and every ``?`` must touch read land, so that whatever it
    reads it cannot stand apart (holds ⇒ holds for every reading)."""
    runs = cyclic_runs(terrain, "MP?" if lenient else "MP")
    run_of = [-1] * SECTORS
    for j, run in enumerate(runs):
        for i in run:
            run_of[i] = j
    required = tuple(any(terrain[i] in _READ_LAND for i in run) for run in runs)
    loose = () if lenient else tuple(
        i for i in range(SECTORS)
        if terrain[i] == "?" and terrain[i - 1] not in _READ_LAND and terrain[(i + 1) % SECTORS] not in _READ_LAND)
    return _TileLand(runs, tuple(run_of), required, loose, not any(required) and not loose)


class _Growth:
    """A set of placed tiles and how their land hangs together, grown one tile at a time.

    Land runs are nodes ``12·tile + run`` of a union-find whose roots are absent from ``parent``.
    ``main`` is a required node of the placed land (-1 while there is none); ``ready`` holds unplaced
    tiles that touch two placed ones. Everything is sparse, so that a closure costs what it places,
    not the size of the board (many triples may be tried on a broken board).
    """

    def __init__(self, layout: _Layout, lenient: bool) -> None:
        self.layout = layout
        self.lenient = lenient
        self.lands = layout.lands(lenient)
        self.placed: set[int] = set()
        self.touching: dict[int, int] = {}
        self.parent: dict[int, int] = {}
        self.main = -1
        self.ready: list[int] = []

    @classmethod
    def of_all(cls, layout: _Layout, lenient: bool) -> "_Growth":
        """Every tile placed, whatever the order (for the landmass rule)."""
        whole = cls(layout, lenient)
        for t in range(len(layout)):
            whole.add(t)
        return whole

    def __len__(self) -> int:
        return len(self.placed)

    def copy(self) -> "_Growth":
        twin = _Growth.__new__(_Growth)
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
        k = self.lands[nb].run_of[_FACING[i]]
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
                    k = lands[nb].run_of[_FACING[i]]
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
        return nb >= 0 and nb in self.placed and self.layout.terrains[nb][_FACING[i]] in _READ_LAND

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

    def cut_off(self) -> tuple[Hex, ...]:
        """Tiles with land outside the largest piece of the land (largest by runs, ties by position)."""
        members: dict[int, list[int]] = {}
        for t, root in sorted(self._components()):
            members.setdefault(root, []).append(t)
        if not members:
            return ()
        largest = min(members.values(), key=lambda ts: (-len(ts), min(ts)))
        apart = {t for ts in members.values() if ts is not largest for t in ts}
        return tuple(self.layout.hexes[t] for t in sorted(apart))


# -- the pieces ------------------------------------------------------------------------------------


def _piece_verdicts(board: Board, rules: Rules) -> tuple[list[Violation], list[Violation]]:
    broken: list[Violation] = []
    unsure: list[Violation] = []
    for check in (_terrain_verdicts, _crowding_verdicts, _connection_verdicts, _count_verdicts,
                  _house_tile_verdicts):
        more_broken, more_unsure = check(board, rules)
        broken += more_broken
        unsure += more_unsure
    return broken, unsure


def _letter(board: Board, piece: Piece) -> str | None:
    """The sector letter a piece stands on, or None when it stands on no sector of a tile."""
    tile = board.tiles.get(piece.hex)
    if tile is None or piece.sector is None:
        return None
    return tile.terrain[piece.sector]


def _terrain_verdicts(board: Board, rules: Rules) -> tuple[list[Violation], list[Violation]]:
    broken, unsure = [], []
    for piece in board.pieces:
        if not piece.is_player_piece:
            continue
        letter = _letter(board, piece)
        if letter == "?":
            unsure.append(Violation("piece-terrain", f"Cannot tell whether {_describe(piece)} stands on a plain "
                                    "because its sector is unread.", (piece.hex,), (piece,)))
        elif letter != "P":
            where = "on no sector of a tile" if letter is None else f"on {TERRAIN_NAMES[letter]}"
            broken.append(Violation("piece-terrain", f"{_describe(piece).capitalize()} stands {where}, "
                                    "not on a plain.", (piece.hex,), (piece,)))
    return broken, unsure


def _crowding_verdicts(board: Board, rules: Rules) -> tuple[list[Violation], list[Violation]]:
    crowded = []
    for h in dict.fromkeys(p.hex for p in board.pieces):
        here = board.pieces_at(h)
        if len(here) > 1:
            here = tuple(sorted(here, key=_piece_key))
            kinds = ", ".join(p.kind for p in here)
            crowded.append(Violation("two-pieces-on-tile", f"Tile {_name(h)} holds {len(here)} pieces "
                                     f"({kinds}); a tile holds one.", (h,), here))
    return crowded, []


def _connection_verdicts(board: Board, rules: Rules) -> tuple[list[Violation], list[Violation]]:
    """A settler is joined when it can be reached from a house through its owner's pieces only.

    Broken: standing on a read plain and not joined even if every ``?`` were a plain (plains only
    ever add joins). Undecided: otherwise not joined when every ``?`` is read as not plain; a settler
    on an unread sector is never broken here, as read as mountain or sea the rule would not apply.
    """
    settlers = [p for p in board.pieces if p.kind == "settler" and _letter(board, p) in ("P", "?")]
    if not settlers:
        return [], []
    joined = _joined_pieces(board, "P?")
    surely = joined if all(t.known for t in board.tiles.values()) else _joined_pieces(board, "P")
    broken, unsure = [], []
    for settler in settlers:
        if id(settler) not in joined and _letter(board, settler) == "P":
            broken.append(Violation("settler-disconnected", f"{_describe(settler).capitalize()} is not joined to "
                                    f"a {settler.player} house through {settler.player} pieces on adjacent plains.",
                                    (settler.hex,), (settler,)))
        elif id(settler) not in surely:
            unsure.append(Violation("settler-disconnected", f"Cannot tell whether {_describe(settler)} is joined "
                                    "to a house of its colour because sectors are unread.", (settler.hex,), (settler,)))
    return broken, unsure


def _joined_pieces(board: Board, plains: str) -> set[int]:
    """``id`` of every player piece joined to a house of its owner, ``plains`` being the letters read as plain.

    Only the pieces' own segments are visited: a chain of own pieces never crosses an empty segment.
    """
    tiles = board.tiles
    on_node: dict[tuple[str | None, Hex, int], list[Piece]] = {}
    for piece in board.pieces:
        tile = tiles.get(piece.hex)
        if piece.is_player_piece and tile is not None and piece.sector is not None:
            name = _run_names(tile.terrain, plains)[piece.sector]
            if name >= 0:
                on_node.setdefault((piece.player, piece.hex, name), []).append(piece)
    frontier = [key for key, pieces in on_node.items() if any(p.kind == "house" for p in pieces)]
    seen = set(frontier)
    joined: set[int] = set()
    while frontier:
        player, h, name = key = frontier.pop()
        joined.update(id(p) for p in on_node[key])
        for d, facing in _run_contacts(tiles[h].terrain, plains)[name]:
            tile = tiles.get(h.neighbour(d))
            if tile is None:
                continue
            names = _run_names(tile.terrain, plains)
            for f in facing:
                across = (player, tile.hex, names[f])
                if across in on_node and across not in seen:
                    seen.add(across)
                    frontier.append(across)
    return joined


@lru_cache(maxsize=4096)
def _run_names(terrain: str, letters: str) -> tuple[int, ...]:
    """Per sector, the name (first sector) of its run of ``letters``; -1 for a sector outside them."""
    names = [-1] * SECTORS
    for run in cyclic_runs(terrain, letters):
        for i in run:
            names[i] = run[0]
    return tuple(names)


@lru_cache(maxsize=4096)
def _run_contacts(terrain: str, letters: str) -> dict[int, tuple[tuple[int, tuple[int, ...]], ...]]:
    """Per run of ``letters`` (by name), its edges ``d`` and the neighbour's sectors lying against it there."""
    contacts: dict[int, dict[int, list[int]]] = {}
    for i, name in enumerate(_run_names(terrain, letters)):
        if name >= 0:
            contacts.setdefault(name, {}).setdefault(i >> 1, []).append(_FACING[i])
    return {name: tuple((d, tuple(facing)) for d, facing in edges.items()) for name, edges in contacts.items()}


def _count_verdicts(board: Board, rules: Rules) -> tuple[list[Violation], list[Violation]]:
    limits = {"house": rules.houses_per_player, "settler": rules.settlers_per_player}
    counts = Counter((p.player, p.kind) for p in board.pieces if p.is_player_piece)
    broken = []
    for (player, kind), count in counts.items():
        if count > limits[kind]:
            pieces = tuple(sorted((p for p in board.pieces if p.player == player and p.kind == kind), key=_piece_key))
            broken.append(Violation("piece-count", f"{str(player).capitalize()} has {count} {kind}s on the board; the "
                                    f"{rules.edition} rules give {limits[kind]}.",
                                    tuple(sorted({p.hex for p in pieces})), pieces))
    return broken, []


def _house_tile_verdicts(board: Board, rules: Rules) -> tuple[list[Violation], list[Violation]]:
    broken, unsure = [], []
    for house in (p for p in board.pieces if p.kind == "house"):
        tile = board.tiles.get(house.hex)
        if tile is None:
            continue
        letters = set(tile.terrain)
        if tile.start:
            broken.append(Violation("house-on-forbidden-tile", f"{_describe(house).capitalize()} stands on a start "
                                    "tile, where no house may be built.", (house.hex,), (house,)))
        elif letters == {"M"}:
            broken.append(Violation("house-on-forbidden-tile", f"{_describe(house).capitalize()} stands on the "
                                    "all-mountain tile, where no house may be built.", (house.hex,), (house,)))
        elif letters == {"M", "?"}:
            unsure.append(Violation("house-on-forbidden-tile", f"Cannot tell whether {_describe(house)} stands on "
                                    "an all-mountain tile because sectors are unread.", (house.hex,), (house,)))
    return broken, unsure
