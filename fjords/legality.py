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

The layout rules live in :mod:`fjords.layout_checks` (placement order and
landmass decided by the search of :mod:`fjords.placement_order`, which
``docs/rules.md`` ("Legality") proves exact), the piece rules in
:mod:`fjords.piece_checks`.
"""

from __future__ import annotations

from typing import Iterable

from fjords.board import Board
from fjords.layout_checks import layout_verdicts
from fjords.piece_checks import piece_verdicts
from fjords.rules import Rules
from fjords.violation import RULES, Violation

__all__ = ["RULES", "Violation", "legal_violations", "undecided"]


def legal_violations(board: Board, rules: Rules | None = None) -> list[Violation]:
    """Every rule ``board`` certainly breaks, whatever its unread sectors are; ``[]`` when none."""
    return _verdicts(board, rules)[0]


def undecided(board: Board, rules: Rules | None = None) -> list[Violation]:
    """Every rule that holds or fails depending on how the unread (``?``) sectors read."""
    return _verdicts(board, rules)[1]


def _verdicts(board: Board, rules: Rules | None) -> tuple[list[Violation], list[Violation]]:
    """Both lists, computed once per board and rules (callers usually ask for both).

    They are kept on the board itself: a Board is immutable (``cached_property`` relies on that too).
    """
    rules = rules or Rules.for_edition(board.edition)
    key = "_legality " + repr(rules)
    store = board.__dict__
    if key not in store:
        broken, unsure = layout_verdicts(board)
        piece_broken, piece_unsure = piece_verdicts(board, rules)
        store[key] = (_sorted(broken + piece_broken), _sorted(unsure + piece_unsure))
    broken, unsure = store[key]
    return list(broken), list(unsure)


def _sorted(violations: Iterable[Violation]) -> list[Violation]:
    return sorted(violations, key=Violation.sort_key)
