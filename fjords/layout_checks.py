"""The rules about the layout: ``edge-mismatch``, ``start-tiles``, ``placement-order`` and ``landmass``.

Each check returns ``(broken, undecided)`` lists of :class:`~fjords.violation.Violation`;
the placement order and the landmass are decided by the search of :mod:`fjords.placement_order`.
"""

from __future__ import annotations

from fjords.board import Board
from fjords.geometry import FACING, LAND, Hex
from fjords.placement_order import Growth, Layout, Triple, largest_closures, tile_land
from fjords.violation import TERRAIN_NAMES, Violation, tile_name, tile_names

__all__ = ["layout_verdicts"]

Verdicts = tuple[list[Violation], list[Violation]]  # (broken, undecided)


def layout_verdicts(board: Board) -> Verdicts:
    """Every layout rule ``board`` breaks, and those its unread sectors leave undecided."""
    layout = Layout(board)
    broken, unsure = _edge_verdicts(layout)
    start, start_broken = _start_triple(layout)
    broken += start_broken
    order_broken, order_unsure = _placement_verdicts(layout, start)
    return broken + order_broken, unsure + order_unsure


def _edge_verdicts(layout: Layout) -> Verdicts:
    broken, unsure = [], []
    for a, terrain in enumerate(layout.terrains):
        for d in (0, 1, 2):  # every shared edge once: the other three are seen from the other tile
            b = layout.neighbours[a][d]
            if b < 0:
                continue
            other = layout.terrains[b]
            i, j = 2 * d, 2 * d + 1
            if terrain[i] == other[FACING[i]] != "?" and terrain[j] == other[FACING[j]] != "?":
                continue  # the common case, decided without building anything
            pairs = [(terrain[i], other[FACING[i]]), (terrain[j], other[FACING[j]])]
            tiles = tuple(sorted((layout.hexes[a], layout.hexes[b])))
            clash = [(x, y) for x, y in pairs if x != y and "?" not in (x, y)]
            if clash:
                x, y = clash[0]
                broken.append(Violation(
                    "edge-mismatch", f"Tiles {tile_name(layout.hexes[a])} and {tile_name(layout.hexes[b])} do not "
                    f"match along their shared edge: {TERRAIN_NAMES[x]} meets {TERRAIN_NAMES[y]}.", tiles))
            elif any("?" in pair for pair in pairs):
                unsure.append(Violation(
                    "edge-mismatch", f"Cannot tell whether tiles {tile_names(tiles)} match along their shared edge "
                    "because a sector there is unread.", tiles))
    return broken, unsure


def _start_triple(layout: Layout) -> tuple[Triple | None, list[Violation]]:
    """The marked start tiles when they are a valid triple; otherwise None (and why, if any are marked)."""
    marked = layout.starts
    if not marked:
        return None, []
    if len(marked) == 3 and all(b in layout.neighbours[a] for a in marked for b in marked if a != b):
        return (marked[0], marked[1], marked[2]), []
    hexes = tuple(layout.hexes[t] for t in marked)
    if len(marked) == 3:
        message = f"The start tiles {tile_names(hexes)} are not all next to each other."
    else:
        message = f"{len(marked)} tiles are marked as start tiles ({tile_names(hexes)}); the start is three tiles."
    return None, [Violation("start-tiles", message, hexes)]


def _placement_verdicts(layout: Layout, start: Triple | None) -> Verdicts:
    """``placement-order`` and ``landmass``: broken when the lenient reading fails, undecided when the
    strict one does.

    A complete closure ends with every tile placed and the land one mass in that reading, so the
    landmass rule needs its own look only where a closure stops short.
    """
    if not len(layout):
        return [], []
    lonely = tuple(layout.hexes[t] for t in range(len(layout)) if layout.degrees[t] < 2)
    if lonely:
        # Sound shortcut: a start tile touches the other two, every later tile two earlier ones.
        verb = "touches" if len(lonely) == 1 else "touch"
        order = Violation("placement-order", f"No placement order builds this layout: {tile_names(lonely)} {verb} "
                          "fewer than two other tiles.", lonely)
        broken, unsure = _landmass_verdicts(layout)
        return [order] + broken, unsure
    triples = [start] if start is not None else layout.triangles()
    # Without unread sectors both readings are the board itself; the strict code is the faster.
    lenient = largest_closures(layout, triples, lenient=not layout.all_read)
    if not lenient or len(lenient[0]) < len(layout):
        broken, unsure = _landmass_verdicts(layout)
        return [_order_violation(layout, lenient, start)] + broken, unsure
    if layout.all_read:
        return [], []
    # Sound shortcut: an unread sector with no read land beside it that faces no read land can never
    # be joined in the strict reading, so no strict order exists; skip the search over triples.
    hopeless = [t for t, terrain in enumerate(layout.terrains) for i in tile_land(terrain, False).loose
                if layout.terrains_across(t, i) not in LAND]
    if hopeless:
        stranded = tuple(layout.hexes[t] for t in sorted(set(hopeless)))
    else:
        stranded = _stranded(layout, largest_closures(layout, triples, lenient=False))
    if stranded:
        _, unsure = _landmass_verdicts(layout, lenient_holds=True)
        unsure.insert(0, Violation("placement-order", f"Cannot tell whether this layout could be built in order "
                                   f"{_origin(start)} because sectors are unread (around {tile_names(stranded)}).",
                                   stranded))
        return [], unsure
    return [], []


def _stranded(layout: Layout, closures: list[Growth]) -> tuple[Hex, ...]:
    """Tiles some largest closure leaves out (every tile when there is none)."""
    return tuple(layout.hexes[t] for t in range(len(layout)) if not closures or any(t not in c.placed for c in closures))


def _order_violation(layout: Layout, largest: list[Growth], start: Triple | None) -> Violation:
    """Why no order builds the layout: no start whose land is one mass, or the tiles the largest closures left."""
    if not largest:
        if start is not None:
            tiles = tuple(sorted(layout.hexes[t] for t in start))
            reason = f"the land of the start tiles {tile_names(tiles)} is not one mass"
        else:
            tiles = tuple(layout.hexes)
            reason = "no three mutually adjacent tiles have their land in one mass to start from"
        return Violation("placement-order", f"No placement order builds this layout: {reason}.", tiles)
    stranded = _stranded(layout, largest)
    # Largest closures that leave out different tiles: each of those tiles can be placed, not all of them.
    never = "can never be placed" if len(largest) == 1 else "can never all be placed"
    return Violation("placement-order", f"No placement order builds this layout {_origin(start)}: "
                     f"{tile_names(stranded)} {never} touching two earlier tiles with the land in one mass.", stranded)


def _origin(start: Triple | None) -> str:
    return "from the start tiles" if start is not None else "from any three adjacent start tiles"


def _landmass_verdicts(layout: Layout, lenient_holds: bool = False) -> Verdicts:
    """Broken: the read land is apart however ``?`` reads. Undecided: some reading of ``?`` leaves it apart."""
    if not lenient_holds:
        whole = Growth.of_all(layout, lenient=not layout.all_read)  # all read: one reading, strict code faster
        if not whole.connected():
            apart, has_main = whole.cut_off()
            where = (f"the land on {tile_names(apart)} is cut off from the rest" if has_main
                     else f"the land on {tile_names(apart)} lies in separate pieces of the same size")
            return [Violation("landmass", f"The land is not one mass: {where}.", apart)], []
    if layout.all_read:
        return [], []
    whole = Growth.of_all(layout, lenient=False)
    if whole.connected():
        return [], []
    where = whole.cut_off()[0] or tuple(layout.hexes[t] for t in range(len(layout)) if "?" in layout.terrains[t])
    return [], [Violation("landmass", "Cannot tell whether the land is one mass because sectors are unread "
                                      f"(around {tile_names(where)}).", where)]
