"""Stage 7: decode the board jointly, with the rules as a prior, and say what is unsure.

The classifiers give, per tile, probabilities of S, M, P for each of the twelve
sectors and a reading of the piece on it. Decoding them independently would
throw away what the rules say:

* **Edge agreement.** Two sectors lying against each other across a shared
  edge almost always carry the same terrain. Each sector faces at most one
  other, so the pairs are independent and the joint decoding is exact: for a
  pair with probabilities ``p`` and ``q`` the decoded letters maximise
  ``p(a) · q(b) · ψ(a, b)`` with ``ψ = 1`` when ``a = b`` and ``ψ = ε``
  otherwise. ``ε`` is not zero: when both sides are confident of different
  letters the mismatch wins, so a real rule break is reported, never decoded
  away.
* **Terrain comes in runs around the rim.** A coast or a mountain foot crosses
  the rim of a tile a few times, so the next sector round the rim usually
  carries the same letter: on the tiles of our catalogue a sector's neighbour
  differs in 17.5 % of cases, and a run of one sector is 1 of 84 runs. Each
  tile's twelve sectors are decoded as a ring (exact marginals of a cyclic
  chain whose neighbours differ with probability ``switch``), after each
  sector has taken in the edge agreement with the sector facing it. A lone
  letter the classifier is unsure of follows its neighbours; one it is sure of
  stays.
* **One piece per tile** is the prior, not a constraint: each tile's crop
  gives one reading, unless the spot model sees several clear peaks on it
  (:mod:`scanner.pieces`); then each is reported and the engine reports the
  break, when each of its pieces reads at least ``min_crowded_piece`` sure (and
  the tile and the board's median tile ``min_crowded_confidence``, off by
  default). Beside a piece a printed field may look like another (and on a tile
  read unsure the lattice may have put one cell across two tiles): its likeliest
  piece is read alone and the others are listed in ``doubtful_pieces``, for the
  player to check, never dropped.
* **Houses and settlers stand on plains.** A player piece whose base falls on a
  sector that is not plain is moved to the nearest plain sector within one
  sector of it (the base point is imprecise near boundaries); if there is none
  it stays where it was read, and the engine reports the break.
* **A colour has four houses, and its settlers are joined to them.** Houses and
  settlers are the same wood in two shapes, and the kind model confuses them
  more than anything else it reads. A fifth house of a colour, or a settler not
  joined to a house of its colour through pieces of its colour, is a rule break
  that a single wrong kind explains: the reading of the pieces concerned most
  nearly of the other kind changes kind when it is at least ``kind_rule`` as
  likely to be the other kind (:func:`settle_kinds`). A piece read sure of its
  kind keeps it, and the engine reports the break.
* **A settler is joined to a house, so a piece beside a cut-off one may be missed.** A settler
  read as joined to no house of its colour is mostly a right reading beyond a piece the scan
  missed. A doubtful piece beside it (one the presence model sees but the scan does not count)
  counts in the settler's colour when that joins it and the piece's reading gives that colour
  some chance (:func:`join_cut_off_settlers`); such pieces are marked ``joined_by_rule``. A
  doubtful settler merely standing joined stays doubtful: so counted, it was right less often than
  not on fresh renders (models/README.md, fortieth session). A piece the presence model does not
  see never counts, so a settler really cut off still reads so.
* **Two to four players, each a colour.** A board read in more colours than the
  edition allows (four when the edition is not given, two for the classic
  edition) holds a misreading: while too many colours are read, the colour whose
  pieces are least sure of it against the other colours read is taken out of
  play, and its pieces take their likeliest colour in play (:func:`settle_colours`).
* **White is lighter than grey, and beige yellower than white.** The colour model
  tells these paints apart badly (on renders of white, grey and yellow pieces it read
  84 of 383 grey pieces white; of white and beige, 118 of 307 beige pieces white),
  while within one photo the measured colour of the pieces tells them apart almost
  always, though the lamp makes it useless across photos. When both paints of such a
  pair are read on a board, their pieces are sorted by the measured colour and the
  model's odds together (:func:`sort_alike_colours`, :data:`ALIKE_PAINTS`). For white
  and beige the fit first starts from the split of the pieces' yellowness into two
  groups of three or more, and stands where three or more end beige and those are not
  lighter by more than 10 L* (a warm lamp makes lit white pieces lighter and yellower);
  else it starts from the model's reading. So a beige player whose pieces all read
  white is sought too, the model's odds weighing a quarter as much there, as it reads
  beige as white. Grey is not sought, as shadows part one player's white pieces in
  lightness as far as grey does.
* **A doubtful piece is not counted.** With a piece calibration, a piece less
  likely than ``min_piece_confidence`` to be right (mostly something on the tile
  art read as a piece, or a piece of the wrong kind or colour) is left off the
  board and listed in ``doubtful_pieces``: a guess that misleads the score costs
  the player more than a piece the scan asks them to check. The calibration
  weighs whether another piece read on the board has the piece's colour: a
  player holds more than one piece but for a first house, and a settler joins
  pieces of its colour, while tile art read as a piece mostly stands alone in
  its colour.
* **A paint the models were never taught is not named as one they were.** The
  colour model names every piece by a paint it was taught, so a purple player's
  pieces read red, often sure. Where the network names the pieces, those whose
  measured colour lies where no taught paint does (:data:`UNTAUGHT_HUE_ARCS`) are
  named by the spec's colour for that arc, purple, and keep ``untaught_paint``;
  the advice says so, and to calibrate where that paint has another name
  (:func:`untaught_paints`).
* **Only a rune stone stands beside the tiles.** On an empty lattice position
  next to the board (:class:`EmptyPositionEvidence`) a piece is reported only as
  a rune stone (Odin), and only when the models are at least
  ``min_stone_beside`` sure of one: a house or settler off the tiles is no
  board position, and the table around a board holds dice, cards and hands.

Before the rules, one photo's own look: where the sector network reads part of a
board sure, that part shows what sea, mountain and plain look like in this printing
under this light. A Gaussian per terrain over the colour of those sectors (learnt
from the photo's own sure reading) weighs, weakly, the probabilities of every sector whose
colour it recognises (``photo_look``; :func:`with_photo_look`): a sector read unsure,
or read as a terrain that looks otherwise here, leans to the terrain it looks like.
The pieces are still weighed by how sure the network alone reads their tile.

A sector whose decoded letter has a posterior below ``unsure`` is written
``?``; so is a sector outside the photo.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Container, Mapping

import cv2
import numpy as np
from scipy.special import chdtri

from fjords.board import EDITIONS, Board, Piece, Tile
from fjords.boardjson import piece_to_json
from fjords.geometry import SECTORS, TERRAINS, UNKNOWN, Hex, canonical_segment, facing_sector
from fjords.piece_checks import piece_verdicts
from fjords.rules import Rules
from scanner.calibration import FEATURE_NAMES, photo_terrain_look
from scanner.confidence import PieceCalibration, board_confidence, piece_features, sole_in_colour
from scanner.pieces import PIECE_KINDS, PieceReading, palette_named, photo_light, rgb_to_lab


@dataclass(frozen=True)
class DecodeSettings:
    """The decoder's few constants (chosen on renders of training seeds, see models/README.md).

    mismatch : ψ for two different letters across an edge.
    switch : chance that the next sector round a tile's rim carries another letter; 2/3
        makes every letter equally likely, no prior at all. Weaker than the catalogue's
        0.175, because the windows of neighbouring sectors overlap: their errors go
        together, and the ring would count them as independent evidence. 0.3 was chosen on
        renders of training seeds (fewest wrong sectors while tiles reported at ≥ 0.99 stay
        under 1 % wrong; models/README.md).
    unsure : sectors whose posterior is below this are written ``?``.
    min_sector_visible : sectors with less of their area inside the photo and showing a tile top are ``?``.
        0.4 (0.5 before) was chosen on 180 renders scanned before: reading the sectors 40-50 % in view there
        saved 40 errors for 21 more silent ones (models/README.md, sixty-first session).
    choice_sector_visible : ``min_sector_visible`` as the lattices a photo offers are compared by how sure their
        reading is (:meth:`scanner.pipeline.Scanner.scan`): that comparison was chosen with 0.5, and a reading
        made surer turns it on a few photos, each by a hundred errors (the sixty-first session).
    min_piece : a piece is reported when P(no piece) is below ``1 − min_piece``.
    min_tile_readable : a tile the lattice calls visible (``visible`` ≥ 0.5) whose
        sectors show a tile top on average less than this is no tile at all (the
        lattice saw one on the table or in clutter) and is left out; a tile the
        lattice calls partly hidden is kept unless nothing of it reads (see
        ``max_unread_visible``), so a hand never deletes a tile.
    min_tile_visible : tiles the lattice calls less visible than this (hidden
        under a hand) are not read; they are kept with every sector ``?``.
    max_unread_visible : a tile the lattice calls partly hidden (``visible`` under 0.5)
        whose every sector is written ``?`` is left out when the lattice calls it at
        least this visible: not hidden as under a hand, so a tile look at the frame's
        edge or on the table (on 120 renders of training seeds, 6 such tiles, none
        real; every real tile read wholly ``?`` was under 0.2).
    min_piece_confidence : a tile's one piece whose calibrated confidence (the chance
        that it is right) is below this is left off the board and listed under the
        board's ``doubtful_pieces`` instead, for the player to check; without a piece
        calibration, and on a tile read as holding several pieces (a rule break the
        scan must show), every piece read is on the board.
    min_stone_beside : a rune stone is reported on an empty lattice position beside the
        tiles when the chance that a piece stands there times the chance that it is a
        rune stone reaches this.
    min_crowded_confidence : a tile the piece models read as holding several pieces is
        believed only when its terrain and the board's median tile read at least this
        sure; otherwise the lattice may have put one cell across two tiles, whose pieces
        then look like two on one: the likeliest piece is read alone and the others are
        listed under ``doubtful_pieces``. 0 (off) since the spot model fine-tuned in the
        forty-fifth session, which invents crowding far less often: the check hid more real
        breaks than it caught invented ones (it was 0.95; models/README.md).
    min_crowded_piece : nor is it believed when one of its pieces is less sure than this (its calibrated
        confidence, :func:`decode_piece`'s): a rule break is shown only on pieces read fairly sure. Bold
        prints' fields were read as a second piece on a third of their photos before that fine-tuning
        (0.8 then; 0.4 with it, chosen on renders of training seeds; models/README.md).
    kind_rule : the factor by which the rules weaken a house or settler reading whose
        kind breaks the rules on a colour's pieces (:func:`settle_kinds`); 0.2 was
        chosen on renders of training seeds (models/README.md); 1 turns the rule off.
    infer_hidden : whether a sector the photo does not show (under a hand or a piece, or
        outside the frame) takes the letter the edge rule tells it, when the sector facing
        it across its edge is seen on a neighbouring tile and the posterior (which already
        holds that neighbour's reading) reaches ``unsure``. Such sectors are listed in the
        tile's ``inferred_sectors``; a tile of which the photo itself reads nothing is still
        left out as a tile look (``max_unread_visible``). On 200 renders of new seeds it read
        235 more sectors right and made 23 more silent sector errors (models/README.md).
    alike_split : the pieces of two alike paints on a board (white and grey, white and
        beige) are sorted by their measured colour (:func:`sort_alike_colours`) only when the
        two groups' mean shades lie at least this many of their spreads apart; a board with
        one such player and a misread piece has no such gap. ``inf`` turns the sort off.
    min_unread_paint : where a pair's second paint may be read as the first throughout (beige read
        as white, :data:`ALIKE_PAINTS`), a board whose pieces are all read in the first paint is
        sorted too when its pieces' shades split into two groups of at least this many each and
        at least this many end in the second paint (:func:`alike_odds`). On a board where both
        are read, the fit is first started from such a split too, and where that fit does not
        stand, from the model's reading.
    max_unread_lighter : a fit started from the split stands only when the pieces put in the
        second paint are not lighter on average (CIELAB L*) than those left in the first by more
        than this. Beige paint is darker than white, while under a warm lamp lit white pieces
        are both lighter and yellower than shaded ones: two boards of one white player were split
        so (models/README.md).
    unread_odds_weight : the weight of the model's odds in the fit of a board whose pieces are all
        read in the first paint (in the split's fit where both are read they weigh fully). The
        model reads beige pieces as white by 1–6 nats there (that is how every piece came to read
        white), and at full weight those odds pulled the fit into one group where the paints'
        shades lay well apart (models/README.md).
    min_joining_colour : a doubtful piece beside a settler read as cut off from its colour's houses counts in
        that colour when that joins the settler and the piece's reading gives the colour at least this chance
        (:func:`join_cut_off_settlers`); above 1 turns it off. 0.1 was chosen on 700 renders scanned before
        (0 read one error fewer there; a piece must give the colour some chance). Joining readings the presence
        model calls absent too (a chance of a piece down to 0.05) read more pieces right there but hid real
        cut-off settlers (models/README.md).
    photo_look : the weight of the photo's own terrain look (:func:`with_photo_look`): a Gaussian per
        terrain over the colour of the sectors read at least ``photo_look_sure`` sure, whose
        log-likelihood is added, so weighted, to the log-probabilities of the sectors it recognises
        (``photo_look_within``) before decoding; 0 turns it off. 0.1, with ``photo_look_within`` 0.95 and
        ``photo_look_sure`` 0.999, was chosen on 680 renders scanned before: 2.9 % fewer errors and 4 %
        fewer silent sector errors; weighing every sector made more silent errors than no look at all
        (models/README.md). Pieces are weighed by how sure the network alone reads their tile (decoded
        without the look), as the piece calibration was fitted.
    photo_look_sure : the decoded posterior at and above which a seen sector's reading is taken as
        its terrain for the photo's own look.
    photo_look_within : the look weighs only sectors whose colour lies within this quantile of the
        nearest terrain's Gaussian (chi-square, one degree of freedom per colour statistic); a sector
        it does not recognise (a piece, a shadow, glare) keeps the network's reading. 1 weighs all.
    photo_look_rounds : how often the look is fitted: each round fits it again on the sure sectors of the
        decoding the previous round's look made (the network's evidence weighed afresh each time), so a
        shade of a terrain the first look made sure lends its colour to tiles further off. 3 was chosen
        on 420 renders scanned before (0.4 % fewer errors than one round, fewer silent sector errors) and
        judged on 220 fresh ones (0.5 % fewer); held out it changed nothing measurable (models/README.md).
    min_missed_top : an empty lattice position beside the tiles becomes a tile (:func:`with_missed_tiles`) when
        the sector model reads a tile top on it, averaged over its twelve sectors, at least this sure; above 1
        turns it off. 0.9 was chosen on 420 renders scanned before (0.85 read as many errors; every bare or
        hidden position there read under 0.82) and judged on 220 fresh ones (models/README.md).
    max_table_top : nor where the table reads as tile tops: the median tile-top chance of the other empty positions
        read beside the tiles (:func:`table_top`) is above this (a cloth the colour of sea or plain); above 1
        turns it off. Around every missed tile of 640 renders scanned before it was at most 0.30, on the cloths
        where tiles were invented 0.41 and 0.62; 0.3 was chosen there (fewest errors, 0.4 alike) and judged on 220
        fresh renders (models/README.md).
    min_hidden_run : an empty position beside the tiles that does not become a tile, but where at least this many
        neighbouring sectors round its rim read a tile top ``min_missed_top`` sure, is named as a place where a
        hand or an object may hide a tile (:func:`possibly_hidden_tiles`); 13 turns it off. 4 was chosen on 640
        renders scanned before (such places held a tile 80 % of the time, 3: 74 %; models/README.md).
    min_hand_share : a sector at least this share under a hand (:mod:`scanner.hands`) is named in its tile's
        ``under_hand`` (:func:`hand_extra`); its letter is read as before. 0.5 was chosen on 640 renders scanned
        before: 92 % of the tiles so named were partly hidden by a hand, and 82 % of such tiles were named (0.75: 96 %
        and 63 %; models/README.md). Writing such sectors ``?`` instead failed its rules there (models/README.md).
    min_untaught_chroma : where the network names the pieces, a counted piece whose measured colour is at least
        this chromatic (CIELAB chroma) with a hue where no paint the models were taught lies
        (:data:`UNTAUGHT_HUE_ARCS`) is of a paint they were never taught, and is named by that paint
        (:data:`UNTAUGHT_PAINT_NAMES`, :func:`untaught_paints`; set aside before the sixty-second session). ``inf``
        turns it off.
    min_untaught_group : nor unless at least this many pieces read in its colour are such. 2 was chosen on 640
        renders scanned before (1 set aside 3 right pieces there, 2 none; models/README.md).
    max_untaught_spread : nor where more pieces of its colour lie outside the arcs, the nearest at most this many
        degrees of hue from one inside: one player's shades reaching into an arc. 20 was chosen on 640 renders
        scanned before (every colour set aside there had its pieces in the arcs, or the others 37 degrees or
        more away; models/README.md).
    """

    mismatch: float = 0.02
    switch: float = 0.3
    unsure: float = 0.8
    min_sector_visible: float = 0.4
    choice_sector_visible: float = 0.5
    min_piece: float = 0.5
    min_tile_readable: float = 0.2
    min_tile_visible: float = 0.05
    max_unread_visible: float = 0.2
    min_piece_confidence: float = 0.2
    min_stone_beside: float = 0.7
    min_crowded_confidence: float = 0.0
    min_crowded_piece: float = 0.4
    kind_rule: float = 0.2
    infer_hidden: bool = True
    alike_split: float = 2.0
    min_unread_paint: int = 3
    max_unread_lighter: float = 10.0
    unread_odds_weight: float = 0.25
    min_joining_colour: float = 0.1
    photo_look: float = 0.1
    photo_look_sure: float = 0.999
    photo_look_within: float = 0.95
    photo_look_rounds: int = 3
    min_missed_top: float = 0.9
    max_table_top: float = 0.3
    min_hidden_run: int = 4
    min_hand_share: float = 0.5
    min_untaught_chroma: float = 20.0
    min_untaught_group: int = 2
    max_untaught_spread: float = 20.0


@dataclass(frozen=True)
class TileEvidence:
    """What the classifiers read on one tile, with its place in the photo."""

    hex: Hex
    sector_probs: np.ndarray         # (12, 3) over TERRAINS
    sector_visible: np.ndarray       # (12,) share of each sector inside the photo and showing a tile top
    corners_px: np.ndarray           # (6, 2) in original photo pixels
    visible: float = 1.0
    pieces: tuple[PieceReading, ...] = ()
    sector_features: np.ndarray | None = None  # (12, F) colour statistics (scanner.calibration.sector_features)
    hand_shares: np.ndarray | None = None      # (12,) share of each sector under a hand (scanner.hands)


@dataclass(frozen=True)
class EmptyPositionEvidence:
    """What the piece models read on a lattice position beside the tiles where no tile lies.

    ``as_tile`` is what the sector model read there as if a tile lay there, where the position lies
    wholly in the photo and touches enough tiles to be one (:func:`may_be_missed_tile`), else None.
    """

    hex: Hex
    corners_px: np.ndarray           # (6, 2) in original photo pixels
    pieces: tuple[PieceReading, ...] = ()
    as_tile: TileEvidence | None = None


#: A tile joins the layout touching at least two laid tiles (the rules; the start tiles aside, which
#: touch each other), so a position touching fewer found tiles is taken for no tile the lattice missed.
MIN_TILES_TOUCHED = 2


def may_be_missed_tile(h: Hex, tiles: Container[Hex]) -> bool:
    """Whether a tile at ``h`` would touch enough of ``tiles`` to join the layout (:data:`MIN_TILES_TOUCHED`)."""
    return sum(n in tiles for n in h.neighbours()) >= MIN_TILES_TOUCHED


def with_missed_tiles(evidence: Mapping[Hex, TileEvidence | EmptyPositionEvidence],
                      settings: DecodeSettings) -> dict[Hex, TileEvidence | EmptyPositionEvidence]:
    """The evidence with the tiles the tile-top model missed: empty positions the sector model reads as tile tops.

    The tile-top model misses a few tiles in plain view, mostly of one terrain all over (a flat mountain print
    can look like a wooden table); the sector model, which also answers "no tile top here", still sees their
    tops. A position becomes a tile where its twelve sectors show a tile top at least ``settings.min_missed_top``
    sure on average and it touches at least two tiles found (on 420 renders the bare table and tiles under a hand
    read at most 0.82 so), unless the table itself reads as tile tops: a cloth the colour of sea or plain makes
    the other positions read show a tile top too (:func:`table_top` above ``settings.max_table_top``;
    models/README.md, fifty-first session).
    """
    top = gap_tops(evidence)
    missed = {h: evidence[h].as_tile for h, chance in top.items()
              if chance >= settings.min_missed_top and table_top(top, h) <= settings.max_table_top}
    return {**evidence, **missed}


def gap_tops(evidence: Mapping[Hex, TileEvidence | EmptyPositionEvidence]) -> dict[Hex, float]:
    """The mean tile-top chance of the sectors of each empty position read where a tile may have been missed
    (:func:`may_be_missed_tile` beside the tiles of ``evidence``)."""
    tiles = {h for h, e in evidence.items() if isinstance(e, TileEvidence)}
    return {h: float(np.mean(e.as_tile.sector_visible)) for h, e in evidence.items()
            if isinstance(e, EmptyPositionEvidence) and e.as_tile is not None and may_be_missed_tile(h, tiles)}


def possibly_hidden_tiles(evidence: Mapping[Hex, TileEvidence | EmptyPositionEvidence],
                          settings: DecodeSettings) -> list[EmptyPositionEvidence]:
    """Empty positions beside the tiles where part of a tile top shows, too little to read a tile there.

    A hand or an object over the board hides tiles the lattice then does not see, and the board silently lacks
    them. Listing such a tile with its hidden sectors ``?`` would cost the player more corrections than leaving it
    out, so the place is named instead: a position that :func:`with_missed_tiles` did not make a tile (call this on
    its result) where at least ``settings.min_hidden_run`` neighbouring sectors round the rim read a tile top at
    least ``settings.min_missed_top`` sure, unless the table itself reads as tile tops (:func:`table_top`).
    """
    top = gap_tops(evidence)
    return [evidence[h] for h in sorted(top, key=lambda h: (h.q, h.r))
            if table_top(top, h) <= settings.max_table_top and longest_cyclic_run(
                np.asarray(evidence[h].as_tile.sector_visible) >= settings.min_missed_top) >= settings.min_hidden_run]


def hand_extra(e: TileEvidence, settings: DecodeSettings) -> dict:
    """A tile's ``under_hand`` field: the sectors a hand covers (``min_hand_share``), where there are any.

    The sector model learnt "no tile top" from tiles hidden whole, and reads a hand over part of a tile as
    mountain or plain; the hand model (:mod:`scanner.hands`) sees the hand, so the player is told where to look.
    """
    if e.hand_shares is None:
        return {}
    covered = [i for i in range(SECTORS) if e.hand_shares[i] >= settings.min_hand_share]
    return {"under_hand": covered} if covered else {}


def longest_cyclic_run(flags: np.ndarray) -> int:
    """The most consecutive true values round a ring (all of them where every one is true)."""
    if flags.all():
        return len(flags)
    best = run = 0
    for flag in np.concatenate([flags, flags]):
        run = run + 1 if flag else 0
        best = max(best, run)
    return best


def table_top(top: Mapping[Hex, float], h: Hex) -> float:
    """How much the table beside the tiles looks like a tile top: the median tile-top chance of the empty
    positions read (``top``) other than ``h``; 0 where there is no other."""
    others = [chance for k, chance in top.items() if k != h]
    return float(np.median(others)) if others else 0.0


def decode_sectors(evidence: Mapping[Hex, TileEvidence],
                   settings: DecodeSettings = DecodeSettings()) -> dict[Hex, np.ndarray]:
    """Posterior probabilities (12, 3) of every tile's sectors after edge agreement and the rim's runs.

    Each sector first takes in the sector facing it across the edge (the message
    ``Σ_b ψ(a, b) q(b)`` of the facing sector's own probabilities ``q``), then
    each tile's ring of sectors is decoded exactly (:func:`ring_marginals`).
    """
    uniform = np.full(3, 1.0 / 3.0)
    own = {}
    for h, e in evidence.items():
        probs = np.asarray(e.sector_probs, dtype=np.float64).copy()
        probs[np.asarray(e.sector_visible) < settings.min_sector_visible] = uniform
        own[h] = probs
    if not own:
        return {}
    psi = np.full((3, 3), settings.mismatch)
    np.fill_diagonal(psi, 1.0)
    hexes = list(own)
    unary = np.stack([own[h] for h in hexes])
    for t, h in enumerate(hexes):
        for i in range(SECTORS):
            other = own.get(h.neighbour(i // 2))
            if other is not None:
                unary[t, i] *= psi @ other[facing_sector(i)]
    posterior = ring_marginals(unary, settings.switch)
    return {h: posterior[t] for t, h in enumerate(hexes)}


def ring_marginals(unary: np.ndarray, switch: float) -> np.ndarray:
    """Marginals of the twelve sectors of each tile, decoded as a ring.

    Parameters
    ----------
    unary : (n, 12, L) array
        Per tile and sector, the evidence for each of ``L`` letters (any positive scale).
    switch : float
        Chance that the next sector round the rim carries another letter, spread evenly over
        the other letters.

    Returns
    -------
    (n, 12, L) array
        ``P(sector i = a)`` under the cyclic chain: the diagonal of the product of
        ``diag(unary_j) · T`` once round the ring from ``i``, normalised.
    """
    n, count, letters = unary.shape
    step = np.full((letters, letters), switch / (letters - 1))
    np.fill_diagonal(step, 1.0 - switch)
    factors = unary[:, :, :, None] * step[None, None]  # (n, 12, L, L): diag(unary_j) · T

    def scaled(product: np.ndarray) -> np.ndarray:
        return product / product.max(axis=(1, 2), keepdims=True)  # keep it in floating range

    # Round the ring from i is (F_i … F_11)(F_0 … F_(i-1)): suffix times prefix, each built once.
    identity = np.broadcast_to(np.eye(letters), (n, letters, letters))
    prefix, suffix = [identity], [identity]
    for j in range(count - 1):
        prefix.append(scaled(prefix[-1] @ factors[:, j]))
        suffix.append(scaled(factors[:, count - 1 - j] @ suffix[-1]))
    marginals = np.empty_like(unary, dtype=np.float64)
    for i in range(count):
        diagonal = np.diagonal(factors[:, i] @ suffix[count - 1 - i] @ prefix[i], axis1=1, axis2=2)
        marginals[:, i] = diagonal / diagonal.sum(axis=1, keepdims=True)
    return marginals


def facing_seen(h: Hex, evidence: Mapping[Hex, TileEvidence], settings: DecodeSettings) -> np.ndarray:
    """Per sector of tile ``h``, whether the sector facing it across its edge is seen on a neighbouring tile."""
    seen = np.zeros(SECTORS, bool)
    for i in range(SECTORS):
        other = evidence.get(h.neighbour(i // 2))
        seen[i] = other is not None and other.sector_visible[facing_sector(i)] >= settings.min_sector_visible
    return seen


def inferred_extra(terrain: str, visible: np.ndarray, settings: DecodeSettings) -> dict:
    """The tile's ``inferred_sectors`` field: the sectors given a letter the photo does not show, if any."""
    told = [i for i in range(SECTORS) if terrain[i] != UNKNOWN and visible[i] < settings.min_sector_visible]
    return {"inferred_sectors": told} if told else {}


def terrain_string(posterior: np.ndarray, visible: np.ndarray, settings: DecodeSettings,
                   told: np.ndarray | None = None) -> tuple[str, float]:
    """Twelve letters (``?`` where unsure or unseen) and the tile's confidence, to the 4 digits reported.

    An unseen sector whose facing sector across the edge is seen (``told``, :func:`facing_seen`) takes its
    posterior's letter when sure enough: the edge rule, not the photo, tells it (see
    :class:`DecodeSettings`, ``infer_hidden``).
    The piece confidence uses the reported tile confidences, as it was fitted on them.
    """
    best = posterior.argmax(axis=1)
    confidence = posterior.max(axis=1)
    told = np.zeros(SECTORS, bool) if told is None else np.asarray(told, bool)
    letters = [UNKNOWN if confidence[i] < settings.unsure or (visible[i] < settings.min_sector_visible and not told[i])
               else TERRAINS[best[i]] for i in range(SECTORS)]
    return "".join(letters), round(float(np.prod(confidence)), 4)


def place_piece(reading: PieceReading, terrain: str) -> int:
    """The sector a house or settler is reported on: its own, or the nearest plain one beside it."""
    if terrain[reading.sector] in ("P", UNKNOWN):
        return reading.sector
    for step in (1, -1):
        neighbour = (reading.sector + step) % SECTORS
        if terrain[neighbour] == "P":
            return neighbour
    return reading.sector


def segment_chance(plain_chances: np.ndarray | None, terrain: str, sector: int) -> float:
    """The chance that a piece standing on ``sector`` of a tile read as ``terrain`` is reported on its true plain
    segment: that every sector from the segment's canonical name round to ``sector`` is a plain, by their decoded
    chances of being one ``plain_chances`` (12,) (1 without them).

    A board names a piece's segment by its first sector (the spec's canonical name), so a plain read one sector
    too far reports the piece on a sector that is no plain, however sure its tile is as a whole.
    """
    if plain_chances is None:
        return 1.0
    start = canonical_segment(terrain, sector)
    if start is None:  # an unread sector: the piece is right where it stands if that is a plain
        return float(plain_chances[sector])
    return float(np.prod([plain_chances[(start + k) % SECTORS] for k in range((sector - start) % SECTORS + 1)]))


def decode_piece(h: Hex, reading: PieceReading, terrain: str, settings: DecodeSettings,
                 tile_confidence: float = 1.0, calibration: PieceCalibration | None = None,
                 board_median: float = 1.0, sole_colour: bool = False,
                 plain_chances: np.ndarray | None = None) -> Piece | None:
    """The piece on a tile, or None when the model sees none.

    Its confidence is the calibrated chance that it is right (:mod:`scanner.confidence`) when a
    calibration is given, else the product of the kind and colour probabilities. ``sole_colour``: no
    other piece read on the board has its colour. ``plain_chances``: the tile's sectors' decoded chances of
    being a plain, which give a house or settler its :func:`segment_chance` (``segment_confidence``).
    """
    p_none = float(reading.kind_probs[0])
    if 1.0 - p_none < settings.min_piece:
        return None
    kind_index = int(np.argmax(reading.kind_probs[1:])) + 1
    kind = PIECE_KINDS[kind_index]
    segment = {}
    if kind == "runestone":
        piece = Piece(h, reading.sector, kind, None)
        confidence = float(reading.kind_probs[kind_index])
    else:
        piece = Piece(h, place_piece(reading, terrain), kind, reading.colour)
        confidence = float(reading.kind_probs[kind_index]) * float(np.max(reading.colour_probs))
        segment = {"segment_confidence": round(segment_chance(plain_chances, terrain, piece.sector), 4)}
    if calibration is not None:
        confidence = calibration.confidence(piece_features(reading.kind_probs, reading.colour_probs,
                                                           tile_confidence, board_median, sole_colour,
                                                           reading.close_up_piece,
                                                           segment.get("segment_confidence", 1.0)))
    return replace(piece, extra=piece_extra(reading, confidence, **segment))


def piece_extra(reading: PieceReading, confidence: float, **more) -> MappingProxyType:
    """A decoded piece's extra fields: where the photo shows it, its colour there, and its confidence."""
    return MappingProxyType({"base_px": [round(v, 1) for v in reading.base_px],
                             "center_px": [round(v, 1) for v in reading.top_px], "rgb": list(reading.rgb),
                             "confidence": round(confidence, 4), **more})


def standing_inside(readings: tuple[PieceReading, ...], corners_px: np.ndarray) -> list[PieceReading]:
    """The readings whose base lies inside the hexagon ``corners_px``.

    A base outside belongs to a piece standing beside it, seen leaning into the crop (on 120
    renders of training seeds, the 5 tile pieces read with their base outside their tile were all
    wrong, 3 of them on tiles where nothing stands).
    """
    hexagon = np.asarray(corners_px, np.float32)
    return [r for r in readings if cv2.pointPolygonTest(hexagon, tuple(map(float, r.base_px)), False) >= 0]


def decode_stone_beside(e: EmptyPositionEvidence, settings: DecodeSettings) -> Piece | None:
    """The rune stone standing on an empty lattice position, or None.

    Its confidence is the models' joint chance of a rune stone there: the piece
    calibration is fitted on pieces standing on tiles, so it is not applied.
    """
    stone = PIECE_KINDS.index("runestone")
    best = max(standing_inside(e.pieces, e.corners_px), key=lambda r: float(r.kind_probs[stone]), default=None)
    if best is None or float(best.kind_probs[stone]) < settings.min_stone_beside:
        return None
    return Piece(e.hex, None, "runestone", None, extra=piece_extra(best, float(best.kind_probs[stone])))


@dataclass(frozen=True)
class PlacedReading:
    """A piece reading on a tile, with what decoding it needs; ``alone`` unless read as one of several."""

    hex: Hex
    reading: PieceReading
    terrain: str
    tile_confidence: float
    alone: bool
    plain_chances: np.ndarray | None = None


def read_placed(placed: list[PlacedReading], settings: DecodeSettings, calibration: PieceCalibration | None,
                board_median: float) -> list[tuple[int, Piece, bool]]:
    """Each reading that shows a piece: its index in ``placed``, the piece, and whether it counts (not too
    doubtful)."""
    read = []
    sole = sole_in_colour([piece.player if (piece := decode_piece(p.hex, p.reading, p.terrain, settings)) else None
                           for p in placed])
    for index, (p, sole_colour) in enumerate(zip(placed, sole)):
        piece = decode_piece(p.hex, p.reading, p.terrain, settings, p.tile_confidence, calibration, board_median,
                             sole_colour, p.plain_chances)
        if piece is not None:
            # Pieces believed to share a tile are a rule break: shown, never set aside.
            doubtful = calibration is not None and p.alone and piece.extra["confidence"] < settings.min_piece_confidence
            read.append((index, piece, not doubtful))
    return read


def sole_by_reading(on_tiles: Mapping[Hex, list[PieceReading]], terrains: Mapping[Hex, str],
                    settings: DecodeSettings) -> dict[int, bool]:
    """For each reading on the tiles, whether no other reading's piece has its colour (:func:`sole_in_colour`).

    A crowded tile's pieces are weighed as every piece is (:func:`read_placed`): a piece of a colour no other
    reading on the board has is less often right, so a printed field read as a second piece is shown as a break
    less often. Keyed by the reading's identity (``id``): readings hold arrays, so they cannot be keys themselves.
    """
    readings = [(h, reading) for h, on_tile in on_tiles.items() for reading in on_tile]
    colours = [piece.player if (piece := decode_piece(h, reading, terrains[h], settings)) else None
               for h, reading in readings]
    return dict(zip((id(reading) for _, reading in readings), sole_in_colour(colours)))


def decode_placed(placed: list[PlacedReading], settings: DecodeSettings, calibration: PieceCalibration | None,
                  board_median: float) -> tuple[list[Piece], list[Piece]]:
    """The pieces read on the tiles: those on the board, and those too doubtful to count."""
    read = read_placed(placed, settings, calibration, board_median)
    return [piece for _, piece, counts in read if counts], [piece for _, piece, counts in read if not counts]


def colour_evidence(colour: str, colours: Mapping[int, str], probs: Mapping[int, Mapping[str, float]],
                    in_play: set[str]) -> tuple[float, dict[int, str]]:
    """How sure the pieces of ``colour`` are of it against the other colours in play, and where they would go.

    Returns the sum over the pieces of the log of the odds of ``colour`` against the piece's likeliest
    other colour in play, and that colour per piece; no moves when some piece's reading names no
    other colour in play (a calibrated palette and the standard names on one board).
    """
    total, moves = 0.0, {}
    for index in (i for i, c in colours.items() if c == colour):
        others = [other for other in sorted(in_play - {colour}) if other in probs[index]]
        if not others:
            return float("inf"), {}
        moves[index] = max(others, key=probs[index].get)
        total += float(np.log(max(probs[index][colour], 1e-12) / max(probs[index][moves[index]], 1e-12)))
    return total, moves


def settle_colours(placed: list[PlacedReading], max_colours: int, settings: DecodeSettings,
                   calibration: PieceCalibration | None, board_median: float) -> list[PlacedReading]:
    """The readings with the colours in play weighed as a prior: at most ``max_colours`` colours.

    The colours in play are those of the houses and settlers that count. While more than
    ``max_colours`` are in play, the colour whose pieces are least sure of it
    (:func:`colour_evidence`) is taken out of play. Its pieces take their likeliest colour
    in play: a changed reading's colours out of play are weakened to half its new colour's
    chance, so the new colour is at most two thirds likely and the piece's confidence says
    the rules, not the model, chose it.

    Fewer colours are not forced, since a colour read on a few pieces may be a real player's.
    A softer rule that also took out such colours where their pieces were nearly as likely
    another colour in play set more pieces right than wrong on the choosing renders, and did
    worse on renders of new seeds, where a four-player board of pale paints lost a real
    player (models/README.md).
    """
    probs = {index: dict(zip(placed[index].reading.colour_names, map(float, placed[index].reading.colour_probs)))
             for index, piece, counts in read_placed(placed, settings, calibration, board_median)
             if counts and piece.kind in ("house", "settler")}
    colours = {index: max(q, key=q.get) for index, q in probs.items()}
    while len(in_play := set(colours.values())) > max_colours:
        _, moves = min((colour_evidence(colour, colours, probs, in_play) for colour in sorted(in_play)),
                       key=lambda evidence: evidence[0])
        if not moves:
            break
        colours.update(moves)
    placed = list(placed)
    for index, colour in colours.items():
        reading = placed[index].reading
        if colour != reading.colour:
            q = np.asarray(reading.colour_probs, dtype=np.float64)
            weight = 0.5 * probs[index][colour] / float(q.max())
            q = np.where([name in in_play for name in reading.colour_names], q, q * weight)
            placed[index] = replace(placed[index], reading=replace(reading, colour_probs=q / q.sum()))
    return placed


# Pairs of paints the colour model confuses though one CIELAB direction tells them apart within a photo: the
# first paint lies further along it. White is lighter than grey; beige is yellower (larger b*) than white.
# The last field says whether the shades' split is tried first (:func:`alike_odds`), so that the second
# paint is sought on boards where only the first is read too: beige, which the model reads white most of the
# time, is; grey is not, as shadows part white pieces in lightness as far as grey parts them (models/README.md).
ALIKE_PAINTS: tuple[tuple[str, str, tuple[float, float, float], bool], ...] = (
    ("white", "grey", (1.0, 0.0, 0.0), False),
    ("white", "beige", (0.0, 0.0, -1.0), True),
)


def shade_posterior(shade: np.ndarray, prior_odds: np.ndarray, min_spread: float = 3.0,
                    rounds: int = 20, start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The log-odds that each piece is of the first of two paints, from its measured shade and the model's odds.

    The shade of each paint on the board is taken as normal, with means of its own and one
    spread, and fitted by expectation maximisation weighted by the current odds, which start at
    ``prior_odds`` (the colour model's log-odds of the first paint) unless ``start`` is given. The
    model's reading is the usual starting point, so where it is sure and wrong about many pieces
    the fit finds two mixed groups little apart and the sort leaves them: a start from the shade
    alone read more pieces right on boards of both paints and split boards of one paint in two
    (models/README.md). ``start`` serves the fit started from the shades' split (:func:`alike_odds`).

    Parameters
    ----------
    shade : (N,) the pieces' CIELAB colours along the direction on which the first paint lies further.
    prior_odds : (N,) log-odds of the first paint given by the colour model.
    min_spread : the least spread (CIELAB units) fitted, so that a few pieces of one shade do
        not make every difference decisive.
    rounds : expectation-maximisation rounds.
    start : (N,) bool, optional: the pieces taken as the first paint in the first round, in place of
        the model's odds (which still weigh in every later round).

    Returns
    -------
    odds : (N,) posterior log-odds of the first paint.
    separation : the first paint's mean shade minus the second's, in spreads; not positive when
        the fit finds the first paint's shade short of the second's.
    """
    odds = np.asarray(prior_odds, dtype=np.float64)
    first = 1.0 / (1.0 + np.exp(-odds)) if start is None else np.asarray(start, dtype=np.float64)
    separation = 0.0
    for _ in range(rounds):
        mean_first = (first * shade).sum() / max(first.sum(), 1e-12)
        mean_second = ((1.0 - first) * shade).sum() / max((1.0 - first).sum(), 1e-12)
        variance = max(float((first * (shade - mean_first) ** 2
                              + (1.0 - first) * (shade - mean_second) ** 2).mean()), min_spread ** 2)
        separation = (mean_first - mean_second) / np.sqrt(variance)
        if separation <= 0:
            break
        odds = prior_odds + ((shade - mean_second) ** 2 - (shade - mean_first) ** 2) / (2.0 * variance)
        first = 1.0 / (1.0 + np.exp(-odds))
    return odds, float(separation)


def shade_split(shade: np.ndarray, min_group: int) -> np.ndarray | None:
    """The two groups into which one cut parts the shades best (Otsu's criterion, on the values themselves).

    Returns the (N,) mask of the upper group, each group holding at least ``min_group`` (equal
    shades at the cut are parted in their given order), or None when there are fewer than
    ``2 * min_group`` shades.
    """
    values = np.asarray(shade, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    if min_group < 1 or len(order) < 2 * min_group:
        return None
    sums = np.cumsum(values[order])
    cuts = np.arange(min_group, len(order) - min_group + 1)
    lower_mean = sums[cuts - 1] / cuts
    upper_mean = (sums[-1] - sums[cuts - 1]) / (len(order) - cuts)
    best = cuts[np.argmax(cuts * (len(order) - cuts) * (upper_mean - lower_mean) ** 2)]
    upper = np.zeros(len(order), dtype=bool)
    upper[order[best:]] = True
    return upper


def alike_odds(shade: np.ndarray, lightness: np.ndarray, prior_odds: np.ndarray, both_read: bool,
               seek_unread: bool, settings: DecodeSettings) -> np.ndarray | None:
    """The log-odds that each of a board's pieces of two alike paints is of the first, or None to leave them.

    With ``seek_unread``, the fit (:func:`shade_posterior`) first starts from the split of the
    shades into two groups of at least ``settings.min_unread_paint`` pieces each
    (:func:`shade_split`), not from the model's reading. Where only the first paint is read, the
    model's odds weigh ``settings.unread_odds_weight`` as much in it. That fit stands when at least
    that many pieces end in the second paint and they are not lighter than the rest by more than
    ``settings.max_unread_lighter``. Otherwise, where both paints are read, the fit starts from
    the model's odds. Either fit stands only when its shades lie ``settings.alike_split`` spreads
    apart.

    Parameters
    ----------
    shade : (N,) the pieces' CIELAB colours along the direction on which the first paint lies further.
    lightness : (N,) their CIELAB L*.
    prior_odds : (N,) log-odds of the first paint given by the colour model.
    both_read : whether both paints are read on the board (else only the first is).
    seek_unread : whether the split of the shades is tried (:data:`ALIKE_PAINTS`).
    settings : the decoder's constants.
    """
    start = shade_split(shade, settings.min_unread_paint) if seek_unread else None
    if start is not None:
        weight = 1.0 if both_read else settings.unread_odds_weight
        odds, separation = shade_posterior(shade, weight * prior_odds, start=start)
        sought = odds < 0
        if (separation >= settings.alike_split and settings.min_unread_paint <= sought.sum() < len(sought)
                and lightness[sought].mean() - lightness[~sought].mean() <= settings.max_unread_lighter):
            return odds
    if not both_read:
        return None
    odds, separation = shade_posterior(shade, prior_odds)
    return odds if separation >= settings.alike_split else None


def sort_alike_colours(placed: list[PlacedReading], settings: DecodeSettings, calibration: PieceCalibration | None,
                       board_median: float, first: str, second: str,
                       direction: tuple[float, float, float], seek_unread: bool = False) -> list[PlacedReading]:
    """The readings with the pieces read ``first`` or ``second`` sorted by their measured colour.

    ``direction`` is the CIELAB direction on which ``first`` lies further (:data:`ALIKE_PAINTS`).
    Only the houses and settlers that count, read among names holding both colours, are sorted,
    and only when both colours are read on the board and their shades lie at least
    ``settings.alike_split`` spreads apart (:func:`shade_posterior`). A reading whose colour
    changes keeps the chance the two colours had together, shared by the posterior odds, so its
    confidence says how close it was.

    With ``seek_unread``, a board whose pieces are all read ``first`` is sorted too
    (:func:`alike_odds`), and on a board where both are read the fit is first started from the
    shades' split.
    """
    chosen = [index for index, piece, counts in read_placed(placed, settings, calibration, board_median)
              if counts and piece.kind in ("house", "settler") and piece.player in (first, second)
              and {first, second} <= set(placed[index].reading.colour_names)]  # a calibrated palette may name one
    read = {placed[index].reading.colour for index in chosen}
    if read != {first, second} and not (seek_unread and read == {first}):
        return placed
    readings = [placed[index].reading for index in chosen]
    pairs = np.array([[r.colour_probs[r.colour_names.index(first)], r.colour_probs[r.colour_names.index(second)]]
                      for r in readings], dtype=np.float64)
    prior = np.log(np.maximum(pairs[:, 0], 1e-12) / np.maximum(pairs[:, 1], 1e-12))
    lab = rgb_to_lab(np.array([r.rgb for r in readings], dtype=np.float64))
    odds = alike_odds(lab @ np.asarray(direction), lab[:, 0], prior, read == {first, second}, seek_unread, settings)
    if odds is None:
        return placed
    placed = list(placed)
    for index, reading, pair, posterior in zip(chosen, readings, pairs, odds):
        if (posterior > 0) != (reading.colour == first):
            q = np.asarray(reading.colour_probs, dtype=np.float64).copy()
            share = 1.0 / (1.0 + np.exp(-posterior))
            q[reading.colour_names.index(first)] = pair.sum() * share
            q[reading.colour_names.index(second)] = pair.sum() * (1.0 - share)
            placed[index] = replace(placed[index], reading=replace(reading, colour_probs=q))
    return placed


def piece_breaks(tiles: list[Tile], pieces: list[Piece], rules: Rules) -> list:
    """The piece rules the board of ``tiles`` and ``pieces`` breaks (the engine's verdicts, undecided ones left out)."""
    return piece_verdicts(Board.from_tiles(tiles, pieces, edition=rules.edition), rules)[0]


def settle_kinds(placed: list[PlacedReading], tiles: list[Tile], settings: DecodeSettings,
                 calibration: PieceCalibration | None, board_median: float,
                 rules: Rules = Rules()) -> tuple[list[Piece], list[Piece]]:
    """The pieces read on the tiles (as :func:`decode_placed`), house and settler weighed against the rules
    on the pieces of a colour.

    A colour has ``rules.houses_per_player`` houses, and every settler is joined to a
    house of its colour through pieces of its colour. While the pieces on the board
    break one of these rules, the reading most nearly of the other kind among the
    pieces concerned has the kind that breaks it weakened by the factor ``kind_rule``
    (house and settler together keep their share), and the board is read again.
    A reading less than ``kind_rule`` as likely to be the other kind stays, and the
    engine reports the break. Pieces read as sharing a tile are left as read.
    """
    house, settler = PIECE_KINDS.index("house"), PIECE_KINDS.index("settler")
    placed = list(placed)
    for _ in range(len(placed)):  # each round changes one reading; a bound, never reached in practice
        counted, doubtful = decode_placed(placed, settings, calibration, board_median)
        if settings.kind_rule >= 1.0:  # the rules weigh nothing: every reading keeps its likeliest kind
            return counted, doubtful
        houses = Counter(piece.player for piece in counted if piece.kind == "house")
        suspects = []  # (piece, kind index that breaks the rule)
        for violation in piece_breaks(tiles, counted, rules):
            if violation.rule == "piece-count":
                suspects += [(piece, house) for piece in violation.pieces if piece.kind == "house"]
            elif violation.rule == "settler-disconnected":
                suspects += [(piece, settler) for piece in violation.pieces
                             if houses[piece.player] < rules.houses_per_player]
        best = None  # (odds of the other kind, index in placed, kind to weaken)
        for piece, weak in suspects:
            index = next((i for i, p in enumerate(placed) if p.hex == piece.hex and p.alone), None)
            if index is None:
                continue
            probs = placed[index].reading.kind_probs
            other = settler if weak == house else house
            odds = float(probs[other]) / max(float(probs[weak]), 1e-12)
            if odds >= settings.kind_rule and (best is None or odds > best[0]):
                best = (odds, index, weak)
        if best is None:
            return counted, doubtful
        _odds, index, weak = best
        reading = placed[index].reading
        probs = np.asarray(reading.kind_probs, dtype=np.float64).copy()
        pair = probs[house] + probs[settler]
        probs[weak] *= settings.kind_rule
        probs[[house, settler]] *= pair / (probs[house] + probs[settler])
        placed[index] = replace(placed[index], reading=replace(reading, kind_probs=probs))
    return decode_placed(placed, settings, calibration, board_median)


def join_cut_off_settlers(placed: list[PlacedReading], counted: list[Piece], doubtful: list[Piece], tiles: list[Tile],
                          settings: DecodeSettings, calibration: PieceCalibration | None, board_median: float,
                          rules: Rules = Rules()) -> tuple[list[Piece], list[Piece]]:
    """The pieces read on the tiles (as :func:`settle_kinds`), with the doubtful pieces the connection rule asks for.

    A settler read as joined to no house of its colour is mostly a right reading beyond a piece
    the scan missed. While the pieces on the board leave settlers so cut off, the doubtful piece
    beside one of them that is likeliest to be a piece counts, in that settler's colour, when it
    stands on a plain, its reading gives that colour at least ``min_joining_colour``, and read so
    (a house where the model finds a house likelier than a settler and the colour has a house to
    spare, else a settler) it leaves fewer of that colour's settlers cut off. Its confidence is the
    calibrated one, with that colour's chance in place of the likeliest colour's. Only a piece the
    presence model sees joins (a doubtful piece is one), so a settler really cut off with nothing
    seen beside it still reads cut off, and the engine reports it.
    """
    if settings.min_joining_colour > 1.0 or calibration is None:  # without a calibration no piece is doubtful
        return counted, doubtful
    house, settler = PIECE_KINDS.index("house"), PIECE_KINDS.index("settler")
    readings = {p.hex: p for p in placed if p.alone}
    counted, doubtful = list(counted), list(doubtful)

    def cut_off(pieces: list[Piece]) -> Counter:
        broken = piece_breaks(tiles, pieces, rules)
        return Counter(v.pieces[0].player for v in broken if v.rule == "settler-disconnected")

    while doubtful:
        cut = cut_off(counted)
        beside = {}  # position -> colours of the cut-off settlers beside it
        for piece in counted:
            if piece.kind == "settler" and cut[piece.player]:
                for h in piece.hex.neighbours():
                    beside.setdefault(h, set()).add(piece.player)
        houses = Counter(piece.player for piece in counted if piece.kind == "house")
        joins = []  # (chance of a piece, the piece in the settler's colour, the chance of that colour)
        for h in (piece.hex for piece in doubtful if piece.hex in beside):
            entry = readings[h]
            names, kinds = list(entry.reading.colour_names), entry.reading.kind_probs
            sector = place_piece(entry.reading, entry.terrain)
            for colour in sorted(beside[h] & set(names)):
                chance = float(entry.reading.colour_probs[names.index(colour)])
                spare = houses[colour] < rules.houses_per_player
                kind = "house" if kinds[house] > kinds[settler] and spare else "settler"
                piece = Piece(h, sector, kind, colour)
                if (entry.terrain[sector] == "P" and chance >= settings.min_joining_colour
                        and cut_off(counted + [piece])[colour] < cut[colour]):
                    joins.append((1.0 - float(kinds[0]), piece, chance))
        if not joins:
            break
        _presence, piece, chance = max(joins, key=lambda join: join[0])
        entry = readings[piece.hex]
        segment = round(segment_chance(entry.plain_chances, entry.terrain, piece.sector), 4)
        confidence = calibration.confidence(piece_features(entry.reading.kind_probs, np.array([chance]),
                                                           entry.tile_confidence, board_median,
                                                           close_up_piece=entry.reading.close_up_piece,
                                                           segment=segment))
        counted.append(replace(piece, extra=piece_extra(entry.reading, confidence, segment_confidence=segment,
                                                        joined_by_rule=True)))
        doubtful = [other for other in doubtful if other.hex != piece.hex]
    return counted, doubtful


#: Arcs of the CIELAB hue circle, ``(what such paints look like, start, end)`` in degrees counter-clockwise, where
#: the paints the models were taught never lie: on 640 renders scanned before, of the pieces of a taught paint read
#: right with a chroma of 20 or more, 1 of 6,528 had a hue between -57 and 4 (blue's 99th percentile -62, red's
#: 0.1th 7), and the held-out purple pieces lay there. The stretch between green and blue, as empty there, is not
#: one: under a cool lamp green pieces reached into it (the fifty-fourth session, models/README.md).
UNTAUGHT_HUE_ARCS = (("purple or magenta", -57.0, 4.0),)
#: The spec's colour name for a paint in each arc (``board-format.md``: without calibration a player's colour is
#: named by the nearest of eleven names). Of those, the models were taught all but orange and purple, and orange's
#: hues lie among yellow's and brown's: a paint between blue and red is named purple.
UNTAUGHT_PAINT_NAMES = {"purple or magenta": "purple"}


def paint_hue_chroma(rgb) -> tuple[float, float]:
    """The CIELAB hue angle (degrees) and chroma of a piece measured as sRGB ``rgb``."""
    _, a, b = rgb_to_lab(np.asarray(rgb, dtype=np.float64))[0]
    return float(np.degrees(np.arctan2(b, a))), float(np.hypot(a, b))


def untaught_paints(pieces: list[Piece], settings: DecodeSettings) -> dict[int, tuple[str, float]]:
    """The pieces (by index) of a paint the models were never taught, with what that paint looks like
    (:data:`UNTAUGHT_HUE_ARCS`) and its hue (degrees).

    The colour model names every piece by one of the paints it was taught, so a player of another paint gets
    the nearest one's name, often sure (a purple player read red, beside a red player read red too). A piece
    whose measured colour is chromatic (``settings.min_untaught_chroma``) with a hue in an arc no taught paint
    occupies is of such a paint, when at least ``settings.min_untaught_group`` pieces read in its colour are: a
    calibration that names the player (``fjords calibrate``) reads them. Not where more pieces of its colour lie
    outside the arc, the nearest within ``settings.max_untaught_spread`` degrees of hue: those are one player's
    shades reaching into the arc (a red paint under a cool lamp), not a second paint.
    """
    hues: dict[str, dict[int, float]] = {}
    arcs: dict[int, str] = {}
    for index, piece in enumerate(pieces):
        if piece.player is None or "rgb" not in piece.extra:
            continue
        hue, chroma = paint_hue_chroma(piece.extra["rgb"])
        hues.setdefault(piece.player, {})[index] = hue
        if chroma >= settings.min_untaught_chroma:
            arcs.update((index, looks) for looks, start, end in UNTAUGHT_HUE_ARCS
                        if (hue - start) % 360.0 < (end - start) % 360.0)
    untaught = {}
    for in_colour in hues.values():
        inside = [index for index in in_colour if index in arcs]
        outside = [in_colour[index] for index in in_colour if index not in arcs]
        if len(inside) < settings.min_untaught_group:
            continue
        if len(outside) > len(inside) and min(hue_distance(in_colour[index], hue) for index in inside
                                               for hue in outside) <= settings.max_untaught_spread:
            continue
        untaught.update((index, (arcs[index], in_colour[index])) for index in inside)
    return untaught


def hue_distance(first: float, second: float) -> float:
    """The angle between two hues, in degrees (0 to 180)."""
    return abs((first - second + 180.0) % 360.0 - 180.0)


def inferred_edition(pieces: list[Piece]) -> str:
    """The edition a board read shows: the 2022 edition when it holds a rune stone or more than two colours (the
    classic edition has no rune stones and seats two players), else the classic edition."""
    runestone = any(piece.kind == "runestone" for piece in pieces)
    return "2022" if runestone or len({piece.player for piece in pieces if piece.player}) > 2 else "classic"


def with_palette_names(evidence: Mapping[Hex, TileEvidence | EmptyPositionEvidence],
                       palette: Mapping[str, tuple[int, int, int]]) -> dict[Hex, TileEvidence | EmptyPositionEvidence]:
    """The evidence with its pieces' colours named by a calibrated palette under this photo's light.

    The light (:func:`scanner.pieces.photo_light`) is fitted on the pieces seen on tiles
    (:attr:`~scanner.pieces.PieceReading.seen`, as a calibration measures its players; rune stones aside: they are
    no player's paint), then every reading that fits the palette as measured is named by it at that light; the
    others keep the network's names (:func:`scanner.pieces.palette_named`).
    """
    seen = [r.rgb for e in evidence.values() if isinstance(e, TileEvidence) for r in e.pieces
            if r.seen and r.kind != "runestone"]
    gain = photo_light(np.array(seen), palette)

    def named(e):
        if e is None or not e.pieces:
            return e
        e = replace(e, pieces=tuple(palette_named(r, palette, gain) for r in e.pieces))
        return replace(e, as_tile=named(e.as_tile)) if isinstance(e, EmptyPositionEvidence) else e

    return {h: named(e) for h, e in evidence.items()}


def with_photo_look(evidence: Mapping[Hex, TileEvidence], posterior: Mapping[Hex, np.ndarray],
                    settings: DecodeSettings) -> dict[Hex, TileEvidence]:
    """The evidence with its sectors' probabilities weighed by the photo's own terrain look.

    A terrain the network reads sure in part of a photo shows there what that terrain looks like in
    this printing under this light; a sector the network reads unsure, or as another terrain, whose
    colour matches it is pulled towards it (:func:`scanner.calibration.photo_terrain_look`). The
    sure readings are those of ``posterior``, the evidence decoded (:func:`decode_sectors`: edge
    agreement and the rim's runs taken in). A sector whose colour lies beyond the
    ``photo_look_within`` quantile of every terrain's Gaussian (a piece, a shadow, glare) and tiles
    without ``sector_features`` are left as they are.
    """
    read = [h for h, e in evidence.items() if e.sector_features is not None]
    if not settings.photo_look or not read:
        return dict(evidence)
    probs = np.stack([posterior[h] for h in read])
    features = np.stack([evidence[h].sector_features for h in read])
    seen = np.stack([evidence[h].sector_visible for h in read]) >= settings.min_sector_visible
    look = photo_terrain_look(features, probs.argmax(axis=-1), seen & (probs.max(axis=-1) >= settings.photo_look_sure),
                              settings.photo_look)
    if look is None:
        return dict(evidence)
    farthest = chdtri(len(FEATURE_NAMES), 1.0 - settings.photo_look_within)  # the chi-square quantile
    own = np.stack([evidence[h].sector_probs for h in read])
    weighed = np.where(look.mahalanobis(features).min(axis=-1, keepdims=True) <= farthest,
                       look.adjust(own, features), own)
    return {**evidence, **{h: replace(evidence[h], sector_probs=weighed[n]) for n, h in enumerate(read)}}


def assemble(evidence: Mapping[Hex, TileEvidence | EmptyPositionEvidence], *, edition: str | None = None,
             settings: DecodeSettings = DecodeSettings(), extra: Mapping | None = None,
             piece_calibration: PieceCalibration | None = None) -> Board:
    """The board read from the evidence of every tile, with confidences and image geometry.

    ``edition`` is the edition played where the player says it (its rules then bound the colours
    in play), else inferred from the pieces read (:func:`inferred_edition`): the 2022 edition's rune
    stones score only on a 2022 board.

    Pieces too doubtful to count (see :class:`DecodeSettings`) are listed in the board's
    ``doubtful_pieces`` extra field as ``fjords-board/1`` piece entries, and places where a hand may hide a
    tile (:func:`possibly_hidden_tiles`) in ``possibly_hidden_tiles`` (``q``, ``r``, ``corners_px``).
    """
    evidence = with_missed_tiles(evidence, settings)
    hidden = possibly_hidden_tiles(evidence, settings)
    beside = [e for e in evidence.values() if isinstance(e, EmptyPositionEvidence)]
    evidence = {h: e for h, e in evidence.items() if isinstance(e, TileEvidence)
                and (e.visible < 0.5 or np.mean(e.sector_visible) >= settings.min_tile_readable)}
    # Pieces are weighed by how sure the network alone reads their tile, as the piece calibration was fitted
    # (scanner.confidence): the photo's own look makes tiles read surer, not their pieces more often right.
    network_posterior = decode_sectors(evidence, settings)
    posterior = network_posterior
    for _ in range(settings.photo_look_rounds if settings.photo_look else 0):
        posterior = decode_sectors(with_photo_look(evidence, posterior, settings), settings)
    terrains = {h: terrain_string(posterior[h], e.sector_visible, settings) for h, e in evidence.items()}
    # A partly hidden tile of which nothing reads, yet not hidden as under a hand: a tile look, not a tile.
    evidence = {h: e for h, e in evidence.items()
                if not settings.max_unread_visible <= e.visible < 0.5 or set(terrains[h][0]) != {UNKNOWN}}
    told = {h: facing_seen(h, evidence, settings) if settings.infer_hidden else None for h in evidence}

    def read_terrains(tile_posterior: Mapping[Hex, np.ndarray]) -> dict[Hex, tuple[str, float]]:
        return {h: terrain_string(tile_posterior[h], e.sector_visible, settings, told[h])
                for h, e in evidence.items()}

    terrains = read_terrains(posterior)
    network_sureness = {h: sure for h, (_, sure) in
                        (read_terrains(network_posterior) if settings.photo_look else terrains).items()}
    board_median = board_confidence(network_sureness.values())
    tiles, doubtful, placed = [], [], []
    on_tiles = {h: standing_inside(e.pieces, e.corners_px) for h, e in evidence.items()}
    sole = (sole_by_reading(on_tiles, {h: terrain for h, (terrain, _) in terrains.items()}, settings)
            if any(len(on_tile) > 1 for on_tile in on_tiles.values()) else {})
    for h, e in evidence.items():
        terrain, confidence = terrains[h]
        corners = np.asarray(e.corners_px, dtype=np.float64)
        tile_extra = {
            "confidence": confidence,
            **inferred_extra(terrain, e.sector_visible, settings),
            **hand_extra(e, settings),
            "visible": round(float(e.visible), 3),
            "center_px": [round(float(v), 1) for v in corners.mean(axis=0)],
            "corners_px": [[round(float(x), 1), round(float(y), 1)] for x, y in corners],
        }
        tiles.append(Tile(h, terrain, extra=MappingProxyType(tile_extra)))
        on_tile = on_tiles[h]
        sureness = network_sureness[h]
        plain_chances = network_posterior[h][:, TERRAINS.index("P")]
        if len(on_tile) > 1:
            ranked = sorted(on_tile, key=lambda reading: reading.kind_probs[0])  # least chance of no piece first
            decoded = [decode_piece(h, reading, terrain, settings, sureness, piece_calibration, board_median,
                                    sole[id(reading)], plain_chances)
                       for reading in ranked]
            least_sure = min((piece.extra["confidence"] for piece in decoded if piece is not None), default=1.0)
            if (min(sureness, board_median) < settings.min_crowded_confidence
                    or least_sure < settings.min_crowded_piece):
                doubtful += [piece_to_json(piece) for piece in decoded[1:] if piece is not None]
                on_tile = ranked[:1]
        placed += [PlacedReading(h, reading, terrain, sureness, len(on_tile) == 1, plain_chances)
                   for reading in on_tile]
    rules = Rules.for_edition(edition) if edition else Rules()
    max_colours = rules.max_colours if edition else max(Rules.for_edition(e).max_colours for e in EDITIONS)
    placed = settle_colours(placed, max_colours, settings, piece_calibration, board_median)
    for first, second, direction, seek_unread in ALIKE_PAINTS:
        placed = sort_alike_colours(placed, settings, piece_calibration, board_median, first, second, direction,
                                    seek_unread)
    pieces, unsure = settle_kinds(placed, tiles, settings, piece_calibration, board_median, rules)
    pieces, unsure = join_cut_off_settlers(placed, pieces, unsure, tiles, settings, piece_calibration, board_median,
                                           rules)
    doubtful += [piece_to_json(piece) for piece in unsure]
    if piece_calibration is not None:  # without one, a calibration's palette names the pieces
        for index, (looks, hue) in untaught_paints(pieces, settings).items():
            piece = pieces[index]
            pieces[index] = replace(piece, player=UNTAUGHT_PAINT_NAMES[looks], extra=MappingProxyType(
                {**piece.extra, "untaught_paint": looks, "untaught_paint_hue": round(hue, 1)}))
    pieces += [stone for e in beside if (stone := decode_stone_beside(e, settings)) is not None
               and stone.hex not in evidence]
    board_extra = dict(extra or {})
    if doubtful:
        board_extra["doubtful_pieces"] = doubtful
    if hidden:
        board_extra["possibly_hidden_tiles"] = [
            {"q": e.hex.q, "r": e.hex.r,
             "corners_px": [[round(float(x), 1), round(float(y), 1)] for x, y in e.corners_px]} for e in hidden]
    return Board.from_tiles(tiles, pieces, edition=edition or inferred_edition(pieces),
                            extra=MappingProxyType(board_extra))
