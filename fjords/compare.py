"""Comparing a scanned board with the truth, and pooling comparisons over photos.

Implements section "Comparing a scanned board with the truth" of
``shared/spec/board-format.md``; ``docs/eval.md`` says what every number means,
how :attr:`Comparison.errors` is counted, how the intervals are made and what
the reliability table of reported confidences says.

>>> comparison = compare(scanned, truth)          # doctest: +SKIP
>>> summarize([comparison]).to_json()             # doctest: +SKIP
"""

from __future__ import annotations

import math
import random
from bisect import bisect_right
from collections import Counter
from dataclasses import asdict, dataclass, replace
from operator import itemgetter
from types import MappingProxyType
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

from fjords.board import Board, Piece
from fjords.geometry import SECTORS, TERRAINS, Hex, canonical_segment
from fjords.scoring import score

Z95 = 1.959963984540054
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0

# Pooled ratios: name -> (numerator count, denominator count) of a Comparison.
RATIOS: Mapping[str, tuple[str, str]] = MappingProxyType({
    "tile_precision": ("matched_tiles", "scanned_tiles"),
    "tile_recall": ("matched_tiles", "true_tiles"),
    "sector_accuracy": ("correct_sectors", "total_sectors"),
    "piece_precision": ("matched_pieces", "scanned_pieces"),
    "piece_recall": ("matched_pieces", "true_pieces"),
})
COUNTS = ("scanned_tiles", "true_tiles", "matched_tiles", "correct_sectors", "total_sectors",
          "silent_sector_errors", "unread_sectors", "scanned_pieces", "true_pieces", "matched_pieces", "errors")
# Shares of photos: name -> whether one photo counts.
SHARES: Mapping[str, Callable[["Comparison"], bool]] = MappingProxyType({
    "board_exact": lambda c: c.board_exact,
    "score_exact": lambda c: c.score_exact,
    "at_most_one_error": lambda c: c.errors <= 1,
})
# Lower edges of the confidence bins of a reliability table: [0, 0.5), [0.5, 0.9), [0.9, 0.99), [0.99, 1].
CONFIDENCE_EDGES = (0.0, 0.5, 0.9, 0.99)
CONFIDENCE_TOP = 1.0


def ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, and 1 when there is nothing to count (the numerator is then 0 too)."""
    return numerator / denominator if denominator else 1.0


class Outcome(NamedTuple):
    """A scanned tile or piece that reported a confidence: that confidence, and whether it was right."""

    confidence: float
    right: bool


@dataclass(frozen=True)
class Comparison:
    """How one scanned board compares with its truth.

    The scan was aligned by turning it ``rotation·60°`` counter-clockwise and
    then moving it by ``translation``: ``scanned.rotated(rotation).translated(*translation)``.
    ``tile_outcomes`` and ``piece_outcomes`` judge, under that alignment, every
    scanned tile and piece that reports a confidence, in the scan's order.
    """

    rotation: int
    translation: tuple[int, int]
    scanned_tiles: int
    true_tiles: int
    matched_tiles: int
    correct_sectors: int
    total_sectors: int
    silent_sector_errors: int
    unread_sectors: int
    scanned_pieces: int
    true_pieces: int
    matched_pieces: int
    board_exact: bool
    score_exact: bool
    errors: int
    tile_outcomes: tuple[Outcome, ...] = ()
    piece_outcomes: tuple[Outcome, ...] = ()

    def ratios(self) -> dict[str, float]:
        """This photo's precisions, recalls and sector accuracy (see :data:`RATIOS`)."""
        return {name: ratio(getattr(self, num), getattr(self, den)) for name, (num, den) in RATIOS.items()}

    def reliability(self) -> Mapping[str, tuple["ReliabilityBin", ...]]:
        """This photo's reliability tables (see :func:`reliability_tables`)."""
        return reliability_tables([self])

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        del out["tile_outcomes"], out["piece_outcomes"]
        out["translation"] = list(self.translation)
        out.update(self.ratios())
        out["reliability"] = reliability_json(self.reliability())
        return out


class _Alignment(NamedTuple):
    """What one candidate alignment (a rotation and a translation) achieves."""

    matched_tiles: int
    correct_sectors: int
    silent_sector_errors: int
    unread_sectors: int
    matched_pieces: int
    piece_errors: int
    tile_outcomes: tuple[Outcome, ...]
    piece_outcomes: tuple[Outcome, ...]


def compare(scanned: Board, truth: Board) -> Comparison:
    """Align ``scanned`` onto ``truth`` (six rotations, any translation, never mirrored) and count.

    The candidate translations of each rotation are the differences between a
    turned scanned tile and a true tile; only those shared by the most pairs
    are examined further (when no tile can match, the differences between
    pieces are).  Ties are broken by the most correct sectors, the most matched
    pieces, the smallest rotation and finally the smallest translation.
    """
    turned = [scanned.rotated(k) for k in range(6)]
    votes = {k: Counter(Hex(t.q - s.q, t.r - s.r) for s in turned[k].tiles for t in truth.tiles)
             for k in range(6)}
    most = max((n for k in votes for n in votes[k].values()), default=0)
    if most:
        candidates = [(k, shift) for k in range(6) for shift, n in votes[k].items() if n == most]
    else:  # no scanned tile can land on a true one: only the pieces can place the scan
        candidates = list(dict.fromkeys([(0, Hex(0, 0))] + [
            (k, Hex(t.hex.q - s.hex.q, t.hex.r - s.hex.r)) for k in range(6)
            for s in turned[k].pieces for t in truth.pieces]))
    best_k, best_shift, best = max(
        ((k, shift, _evaluate(turned[k], shift, truth)) for k, shift in candidates),
        key=lambda c: (c[2].matched_tiles, c[2].correct_sectors, c[2].matched_pieces, -c[0], -c[1].q, -c[1].r),
    )
    scanned_tiles, true_tiles = len(scanned.tiles), len(truth.tiles)
    scanned_pieces, true_pieces = len(scanned.pieces), len(truth.pieces)
    total_sectors = SECTORS * true_tiles
    board_exact = (best.matched_tiles == scanned_tiles == true_tiles and best.correct_sectors == total_sectors
                   and best.matched_pieces == scanned_pieces == true_pieces)
    errors = (SECTORS * best.matched_tiles - best.correct_sectors
              + scanned_tiles + true_tiles - 2 * best.matched_tiles + best.piece_errors)
    return Comparison(
        rotation=best_k, translation=(best_shift.q, best_shift.r),
        scanned_tiles=scanned_tiles, true_tiles=true_tiles, matched_tiles=best.matched_tiles,
        correct_sectors=best.correct_sectors, total_sectors=total_sectors,
        silent_sector_errors=best.silent_sector_errors, unread_sectors=best.unread_sectors,
        scanned_pieces=scanned_pieces, true_pieces=true_pieces, matched_pieces=best.matched_pieces,
        board_exact=board_exact, score_exact=scores_equal(score(scanned), score(truth)), errors=errors,
        tile_outcomes=best.tile_outcomes, piece_outcomes=best.piece_outcomes,
    )


def scores_equal(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    """Same points for every player; a player missing from one side has 0 there."""
    return all(a.get(player, 0) == b.get(player, 0) for player in set(a) | set(b))


def reported_confidence(extra: Mapping[str, Any]) -> float | None:
    """The ``confidence`` a scanner wrote on a tile or piece; None when there is no number there."""
    value = extra.get("confidence")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _evaluate(turned: Board, shift: Hex, truth: Board) -> _Alignment:
    matched = correct = silent = unread = 0
    tile_outcomes = []
    for tile in turned.tiles.values():
        true_tile = truth.tiles.get(tile.hex.translated(*shift))
        confidence = reported_confidence(tile.extra)
        if confidence is not None:
            right = true_tile is not None and tile.known and tile.terrain == true_tile.terrain
            tile_outcomes.append(Outcome(confidence, right))
        if true_tile is None:
            continue
        matched += 1
        for seen, real in zip(tile.terrain, true_tile.terrain):
            if seen not in TERRAINS:
                unread += 1
            elif seen == real:
                correct += 1
            else:
                silent += 1
    moved = [replace(p, hex=p.hex.translated(*shift)) for p in turned.pieces]
    right_pieces, piece_errors = _match_pieces(moved, truth)
    piece_outcomes = [Outcome(confidence, n in right_pieces) for n, p in enumerate(moved)
                      if (confidence := reported_confidence(p.extra)) is not None]
    return _Alignment(matched, correct, silent, unread, len(right_pieces), piece_errors,
                      tuple(tile_outcomes), tuple(piece_outcomes))


def piece_error_causes(scanned: Board, truth: Board, comparison: Comparison | None = None) -> Counter[str]:
    """Why each piece is wrong, as counts: a diagnosis of :func:`compare`'s piece figures.

    Pieces are aligned as ``comparison`` (by default ``compare(scanned, truth)``)
    aligned them and matched per position as it matched them. Each true piece
    counts once: ``right``, ``off tile`` (a rune stone beside the tiles),
    ``tile not found``, ``not read`` (its tile was found, no piece there), or,
    paired with a wrong piece read on its tile, ``kind K->K2``, ``colour`` or
    ``segment``. Each scanned piece left over counts once more: ``no tile
    there``, ``nothing there`` or ``one too many`` (its tile's pieces were all
    read already).
    """
    comparison = comparison or compare(scanned, truth)
    aligned = _aligned(scanned, comparison)
    found, moved = set(aligned.tiles), aligned.pieces
    causes: Counter[str] = Counter()
    for h, seen, real, pairs in _positions(moved, truth):
        causes["right"] += len(pairs)
        spare = [moved[n] for i, n in enumerate(seen) if i not in pairs.values()]
        for t in (t for j, t in enumerate(real) if j not in pairs):
            if h not in truth.tiles:
                causes["off tile"] += 1
            elif h not in found:
                causes["tile not found"] += 1
            elif not spare:
                causes["not read"] += 1
            else:
                s = spare.pop(0)
                causes[f"kind {t.kind}->{s.kind}" if s.kind != t.kind
                       else "colour" if s.player != t.player else "segment"] += 1
        for _ in spare:
            causes["no tile there" if h not in truth.tiles else "one too many" if real else "nothing there"] += 1
    return causes


def pieces_by_colour(scanned: Board, truth: Board, comparison: Comparison | None = None) -> Counter[str]:
    """How many true pieces of each colour there are and how many the scan matched, as counts: ``NAME`` and
    ``NAME right`` per player colour, ``runestone`` for the rune stones. Matched as :func:`piece_error_causes`
    matches them; a diagnosis of piece recall, since models miss some paints far more often than others.
    """
    comparison = comparison or compare(scanned, truth)
    counts: Counter[str] = Counter()
    for _, _, real, pairs in _positions(_aligned(scanned, comparison).pieces, truth):
        for j, piece in enumerate(real):
            name = piece.player or piece.kind
            counts[name] += 1
            counts[f"{name} right"] += j in pairs
    return counts


def _aligned(scanned: Board, comparison: Comparison) -> Board:
    """The scanned board turned and moved onto the truth's positions as ``comparison`` aligned the boards."""
    return scanned.rotated(comparison.rotation).translated(*comparison.translation)


def stones_and_crowding(scanned: Board, truth: Board, comparison: Comparison | None = None) -> Counter[str]:
    """Two rule-related diagnoses of a scan, as counts, under ``comparison``'s alignment.

    ``stones beside``: rune stones standing beside the true tiles (Odin); ``stones found``: those the
    scan reads there as rune stones; ``stones invented``: rune stones the scan reads beside the true
    tiles where none stands. ``legal board`` is 1 when no true tile holds two pieces, and then
    ``read with two on a tile`` is 1 when some scanned tile does (a rule break the scan invents).
    """
    comparison = comparison or compare(scanned, truth)
    aligned = _aligned(scanned, comparison)
    stones = {p.hex for p in aligned.pieces if p.kind == "runestone"}
    seen = stones - set(truth.tiles)
    beside = {p.hex for p in truth.pieces if p.kind == "runestone" and p.hex not in truth.tiles}
    counts = Counter({"stones beside": len(beside), "stones found": len(beside & seen),
                      "stones invented": len(seen - beside)})
    if max(Counter(p.hex for p in truth.pieces).values(), default=0) <= 1:
        counts["legal board"] += 1
        counts["read with two on a tile"] += max(Counter(p.hex for p in aligned.pieces).values(), default=0) >= 2
    return counts


#: Shares of a sector the photo shows (truth ``sector_visible``) at and above which it counts as seen, and at and
#: below which it counts as hidden (under a hand or outside the frame); between the two, partly seen.
SEEN_SECTOR = 0.9
HIDDEN_SECTOR = 0.1


def sector_outcomes_by_visibility(scanned: Board, truth: Board, comparison: Comparison | None = None
                                  ) -> Counter[str]:
    """What the scan wrote on each true sector, by how much of that sector the photo shows: a diagnosis of the
    spec's rule that a sector the scanner could not see is written ``?``, never guessed.

    Needs the truth tiles' ``sector_visible`` (twelve shares, written by the renderer: ``docs/renderer.md``);
    tiles without it are left out. Sectors are aligned as ``comparison`` (by default ``compare(scanned,
    truth)``) aligned them. Keys are ``"seen …"``, ``"partly …"`` and ``"hidden …"`` (see :data:`SEEN_SECTOR`,
    :data:`HIDDEN_SECTOR`) followed by the outcome: ``right`` (the true letter; on a hidden sector, a lucky
    guess), ``wrong`` (another letter: a silent error), ``?`` or ``tile missed`` (its tile is not on the scan).
    """
    found = _terrains_read(scanned, truth, comparison)
    outcomes: Counter[str] = Counter()
    for h, tile in truth.tiles.items():
        shares = tile.extra.get("sector_visible")
        if not isinstance(shares, (list, tuple)) or len(shares) != SECTORS:
            continue
        read = found.get(h)
        for i, share in enumerate(shares):
            seen = "seen" if share >= SEEN_SECTOR else "hidden" if share <= HIDDEN_SECTOR else "partly"
            outcome = "tile missed" if read is None else _letter_outcome(read[i], tile.terrain[i])
            outcomes[f"{seen} {outcome}"] += 1
    return outcomes


def sector_outcomes_by_place(scanned: Board, truth: Board, comparison: Comparison | None = None) -> Counter[str]:
    """What the scan wrote on the true sectors of the tiles it found, by where each sector lies: a diagnosis of
    what the rules can and cannot mend.

    A sector on the board's **rim** faces no true tile across its edge, so the edge rule has nothing to check it
    against; one **inside** faces a tile. Its tile **holds a piece** (any true piece, rune stones too) or **holds
    none**. Keys are ``"rim …"`` or ``"inside …"``, then ``"piece"`` or ``"no piece"``, then the outcome:
    ``right``, ``wrong`` (a silent error) or ``?``. Sectors of true tiles the scan missed are left out (see
    :func:`sector_outcomes_by_visibility`). Aligned as ``comparison`` (by default ``compare(scanned, truth)``).
    """
    found = _terrains_read(scanned, truth, comparison)
    holding = {piece.hex for piece in truth.pieces}
    outcomes: Counter[str] = Counter()
    for h, tile in truth.tiles.items():
        read = found.get(h)
        if read is None:
            continue
        held = "piece" if h in holding else "no piece"
        for i in range(SECTORS):
            place = "inside" if h.neighbour(i // 2) in truth.tiles else "rim"
            outcomes[f"{place} {held} {_letter_outcome(read[i], tile.terrain[i])}"] += 1
    return outcomes


def _terrains_read(scanned: Board, truth: Board, comparison: Comparison | None) -> dict[Hex, str]:
    """The scanned tiles' terrain strings by true position, aligned as ``comparison`` (by default
    ``compare(scanned, truth)``) aligned them."""
    aligned = _aligned(scanned, comparison or compare(scanned, truth))
    return {h: t.terrain for h, t in aligned.tiles.items()}


def _letter_outcome(read: str, true: str) -> str:
    """What a scan wrote on a sector: ``right``, ``?`` (unread) or ``wrong`` (another letter: a silent error)."""
    return "right" if read == true else "?" if read not in TERRAINS else "wrong"


#: A scanned tile whose centre lies farther than this many true circumradii from the nearest true tile's centre
#: is misplaced (:func:`misplaced_tiles`): a good part of its hexagon covers a neighbour or the table.
MISPLACED_REACH = 0.3


def misplaced_tiles(scanned: Board, truth: Board) -> tuple[int, int]:
    """How many scanned tiles sit off every true tile in the photo, and how many were judged: a diagnosis of
    the lattice fit, in the photo's pixels, that needs no alignment.

    A scanned tile is judged when it gives its ``center_px``; it is misplaced when the nearest true tile centre
    lies farther than :data:`MISPLACED_REACH` times that tile's circumradius (the mean distance of its
    ``corners_px`` from its ``center_px``) from it. True tiles without both are left out; when none has them,
    nothing is judged, ``(0, 0)``.
    """
    true_tiles = [(t.extra["center_px"], t.extra["corners_px"]) for t in truth.tiles.values()
                  if "center_px" in t.extra and "corners_px" in t.extra]
    if not true_tiles:
        return 0, 0
    placed = [(centre, sum(math.dist(centre, corner) for corner in corners) / len(corners))
              for centre, corners in true_tiles]
    misplaced = judged = 0
    for tile in scanned.tiles.values():
        centre = tile.extra.get("center_px")
        if centre is None:
            continue
        judged += 1
        nearest, radius = min(placed, key=lambda p: math.dist(p[0], centre))
        misplaced += math.dist(nearest, centre) > MISPLACED_REACH * radius
    return misplaced, judged


def _match_pieces(scanned: Sequence[Piece], truth: Board) -> tuple[set[int], int]:
    """Indices of the matched scanned pieces (one-to-one) and the piece errors.

    The piece errors of a position are its larger unmatched side.
    """
    matched: set[int] = set()
    errors = 0
    for _, seen, real, pairs in _positions(scanned, truth):
        matched.update(seen[i] for i in pairs.values())
        errors += max(len(seen), len(real)) - len(pairs)
    return matched, errors


def _positions(scanned: Sequence[Piece], truth: Board) -> Iterator[tuple[Hex, list[int], list[Piece], dict[int, int]]]:
    """Per position holding pieces: the indices of the scanned pieces there, the true pieces there, and a
    maximum one-to-one matching of them (true index -> index into the scanned ones).

    Where several scanned pieces could take the same true one, the most confident is matched.
    """
    by_hex: dict[Hex, tuple[list[int], list[Piece]]] = {}
    for n in sorted(range(len(scanned)), key=lambda n: -(reported_confidence(scanned[n].extra) or 0.0)):
        by_hex.setdefault(scanned[n].hex, ([], []))[0].append(n)
    for p in truth.pieces:
        by_hex.setdefault(p.hex, ([], []))[1].append(p)
    for h, (seen, real) in by_hex.items():
        terrain = truth.tiles[h].terrain if h in truth.tiles else None
        yield h, seen, real, _max_pairs([scanned[n] for n in seen], real, lambda s, t: _pieces_match(s, t, terrain))


def _pieces_match(seen: Piece, real: Piece, terrain: str | None) -> bool:
    """Whether a scanned piece, already aligned and on the same position, is the true one."""
    if seen.kind != real.kind:
        return False
    if seen.kind == "runestone":
        return seen.rune is None or real.rune is None or seen.rune == real.rune
    if seen.player != real.player or terrain is None or seen.sector is None or real.sector is None:
        return False
    segment = canonical_segment(terrain, seen.sector)
    return segment is not None and segment == canonical_segment(terrain, real.sector)


def _max_pairs(left: Sequence[Piece], right: Sequence[Piece],
               fits: Callable[[Piece, Piece], bool]) -> dict[int, int]:
    """A maximum one-to-one matching as right index -> left index (augmenting paths; the lists are tiny).

    A left item, once matched, stays matched, so earlier items are preferred.
    """
    partner: dict[int, int] = {}

    def augment(i: int, visited: set[int]) -> bool:
        for j, candidate in enumerate(right):
            if j not in visited and fits(left[i], candidate):
                visited.add(j)
                if j not in partner or augment(partner[j], visited):
                    partner[j] = i
                    return True
        return False

    for i in range(len(left)):
        augment(i, set())
    return partner


@dataclass(frozen=True)
class ReliabilityBin:
    """The outcomes whose confidence lies in ``[low, high)`` (the last bin: ``[low, 1]``).

    ``count`` outcomes, ``wrong`` of them not right, and ``interval`` the 95 %
    Wilson interval of the wrong share.
    """

    low: float
    high: float
    count: int
    wrong: int
    interval: tuple[float, float]

    @property
    def wrong_share(self) -> float:
        """``wrong / count``; 0 for an empty bin (whose interval is [0, 1])."""
        return self.wrong / self.count if self.count else 0.0

    @property
    def label(self) -> str:
        return f"[{self.low:g}, {self.high:g}{']' if self.high == CONFIDENCE_TOP else ')'}"

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "count": self.count, "wrong": self.wrong,
                "wrong_share": self.wrong_share, "ci95": list(self.interval)}


def reliability_table(outcomes: Iterable[Outcome]) -> tuple[ReliabilityBin, ...]:
    """Outcomes binned by confidence at :data:`CONFIDENCE_EDGES`.

    A confidence below 0 counts in the first bin, one above 1 in the last.
    """
    counts = [[0, 0] for _ in CONFIDENCE_EDGES]  # per bin: outcomes, wrong ones
    for confidence, right in outcomes:
        cell = counts[max(0, bisect_right(CONFIDENCE_EDGES, confidence) - 1)]
        cell[0] += 1
        cell[1] += not right
    highs = CONFIDENCE_EDGES[1:] + (CONFIDENCE_TOP,)
    return tuple(ReliabilityBin(low, high, n, wrong, wilson_interval(wrong, n))
                 for low, high, (n, wrong) in zip(CONFIDENCE_EDGES, highs, counts))


def reliability_tables(comparisons: Sequence[Comparison]) -> Mapping[str, tuple[ReliabilityBin, ...]]:
    """The reliability tables of tiles and of pieces, pooled over ``comparisons``."""
    return MappingProxyType({
        "tiles": reliability_table(o for c in comparisons for o in c.tile_outcomes),
        "pieces": reliability_table(o for c in comparisons for o in c.piece_outcomes),
    })


def reliability_json(tables: Mapping[str, tuple[ReliabilityBin, ...]]) -> dict[str, list[dict[str, Any]]]:
    return {kind: [b.to_json() for b in table] for kind, table in tables.items()}


@dataclass(frozen=True)
class Summary:
    """Comparisons pooled over a set of photos, with 95 % intervals (``intervals[name] = (low, high)``).

    Ratios pool the counts of all photos; ``board_exact``, ``score_exact`` and
    ``at_most_one_error`` are shares of photos; ``silent_sector_errors`` is a
    total; ``mean_errors`` and ``seconds_per_photo`` are means per photo;
    ``reliability`` pools the reported confidences (see :func:`reliability_tables`).
    """

    photos: int
    tile_precision: float
    tile_recall: float
    sector_accuracy: float
    silent_sector_errors: int
    piece_precision: float
    piece_recall: float
    board_exact: float
    score_exact: float
    mean_errors: float
    at_most_one_error: float
    seconds_per_photo: float | None
    intervals: Mapping[str, tuple[float, float]]
    totals: Mapping[str, int]
    reliability: Mapping[str, tuple[ReliabilityBin, ...]]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in self.__dataclass_fields__
                               if name not in ("intervals", "totals", "seconds_per_photo", "reliability")}
        if self.seconds_per_photo is not None:
            out["seconds_per_photo"] = self.seconds_per_photo
        out["ci95"] = {name: list(bounds) for name, bounds in self.intervals.items()}
        out["totals"] = dict(self.totals)
        out["reliability"] = reliability_json(self.reliability)
        return out


def summarize(comparisons: Sequence[Comparison], seconds: Sequence[float] | None = None) -> Summary:
    """Pool per-photo comparisons (and optionally the seconds each photo took to scan)."""
    n = len(comparisons)
    totals = {name: sum(getattr(c, name) for c in comparisons) for name in COUNTS}
    values: dict[str, Any] = {"photos": n, "silent_sector_errors": totals["silent_sector_errors"]}
    intervals: dict[str, tuple[float, float]] = {}
    for name, (num, den) in RATIOS.items():
        values[name] = ratio(totals[num], totals[den])
        intervals[name] = _envelope(wilson_interval(totals[num], totals[den]),
                                    bootstrap_interval([getattr(c, num) for c in comparisons],
                                                       [getattr(c, den) for c in comparisons]))
    for name, counts in SHARES.items():
        hits = sum(counts(c) for c in comparisons)
        values[name] = ratio(hits, n)
        intervals[name] = wilson_interval(hits, n)
    values["mean_errors"] = ratio(totals["errors"], n) if n else 0.0
    intervals["mean_errors"] = bootstrap_interval([c.errors for c in comparisons], [1] * n) if n else (0.0, 0.0)
    values["seconds_per_photo"] = None
    if seconds is not None:
        if len(seconds) != n:
            raise ValueError(f"{len(seconds)} timings for {n} comparisons")
        if n:
            values["seconds_per_photo"] = math.fsum(seconds) / n
            intervals["seconds_per_photo"] = bootstrap_interval(list(seconds), [1] * n)
    return Summary(intervals=MappingProxyType(intervals), totals=MappingProxyType(totals),
                   reliability=reliability_tables(comparisons), **values)


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion; ``(0, 1)`` when there are no trials."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # At p = 0 or 1 the bound is exactly 0 or 1; the subtraction would leave rounding noise.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def bootstrap_interval(numerators: Sequence[float], denominators: Sequence[float],
                       resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap over photos of ``Σ numerators / Σ denominators`` (deterministic by ``seed``)."""
    n = len(numerators)
    if n == 0:
        return (0.0, 1.0)
    rng = random.Random(seed)
    estimates = []
    for _ in range(resamples):
        take = itemgetter(*rng.choices(range(n), k=n))
        picked_numerators, picked_denominators = (take(numerators), take(denominators)) if n > 1 else (
            (take(numerators),), (take(denominators),))
        estimates.append(ratio(math.fsum(picked_numerators), math.fsum(picked_denominators)))
    estimates.sort()
    return (estimates[int(0.025 * (resamples - 1))], estimates[math.ceil(0.975 * (resamples - 1))])


def paired_change_interval(before: Sequence[float], after: Sequence[float],
                           resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """95 % interval of the change of a total, ``Σ after − Σ before``, counted on the same photos twice (by two
    versions of the scanner, say): a percentile bootstrap over photos of their paired changes.

    A change whose interval holds 0 cannot be told from the luck of which photos were drawn; copies of the photos
    that differ by less than the eye can see (``benchmarks/bench_stability.py``) bound it from the other side.
    """
    if len(before) != len(after):
        raise ValueError(f"paired counts differ in length: {len(before)} and {len(after)}")
    changes = [new - old for old, new in zip(before, after)]
    # The bootstrap gives the mean change per photo; no photos give (0, 1) there and (0, 0) here.
    low, high = bootstrap_interval(changes, [1] * len(changes), resamples, seed)
    return (low * len(changes), high * len(changes))


def _envelope(*intervals: tuple[float, float]) -> tuple[float, float]:
    return (min(lo for lo, _ in intervals), max(hi for _, hi in intervals))
