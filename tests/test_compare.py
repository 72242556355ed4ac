"""Comparing scans with the truth: alignment, every count, pooling and intervals."""

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fjords.board import Board, Piece, Tile
from fjords.compare import (Comparison, bootstrap_interval, compare, misplaced_tiles, paired_change_interval,
                            piece_error_causes, pieces_by_colour, ratio, sector_outcomes_by_place,
                            sector_outcomes_by_visibility, stones_and_crowding, summarize, wilson_interval)
from fjords.geometry import Hex

# No symmetry: every rotation and translation but the identity moves some letter.
TRUTH = Board.from_tiles(
    [
        Tile(Hex(0, 0), "PPPPMMSSSSPP"),
        Tile(Hex(1, 0), "SSPPPPPPMMMM"),
        Tile(Hex(0, 1), "PPPPPPPPPPPP"),
        Tile(Hex(1, -1), "MMMMMMMMMMMM"),
        Tile(Hex(-1, 1), "PPMMPPPPSSSS"),
        Tile(Hex(-1, 0), "SSSSSSSSSSPM"),
    ],
    [
        Piece(Hex(0, 0), 0, "house", "red"),
        Piece(Hex(0, 1), 3, "settler", "red"),
        Piece(Hex(1, 0), 4, "settler", "blue"),
        Piece(Hex(-1, 1), 6, "house", "blue"),
        Piece(Hex(1, -1), 5, "runestone", rune="thor"),
        Piece(Hex(2, -1), None, "runestone", rune="odin"),
    ],
)
N_TILES, N_PIECES = len(TRUTH.tiles), len(TRUTH.pieces)


def with_terrain(board: Board, h: Hex, terrain: str) -> Board:
    return board.with_tiles(replace(t, terrain=terrain) if t.hex == h else t for t in board.tiles.values())


def mirrored(board: Board) -> Board:
    """Reflected in the image's x axis: ``(q, r) → (q + r, −r)``, sector ``i → (1 − i) % 12``."""
    def flip(i):
        return None if i is None else (1 - i) % 12

    tiles = [Tile(Hex(t.hex.q + t.hex.r, -t.hex.r), "".join(t.terrain[flip(j)] for j in range(12)))
             for t in board.tiles.values()]
    pieces = [replace(p, hex=Hex(p.hex.q + p.hex.r, -p.hex.r), sector=flip(p.sector)) for p in board.pieces]
    return Board.from_tiles(tiles, pieces)


def assert_perfect(c: Comparison) -> None:
    assert (c.matched_tiles, c.correct_sectors, c.matched_pieces) == (N_TILES, 12 * N_TILES, N_PIECES)
    assert c.board_exact and c.score_exact and c.errors == 0
    assert c.silent_sector_errors == c.unread_sectors == 0


def test_truth_against_itself_is_exact():
    c = compare(TRUTH, TRUTH)
    assert_perfect(c)
    assert (c.rotation, c.translation) == (0, (0, 0))
    assert set(c.ratios().values()) == {1.0}


@given(k=st.integers(0, 5), dq=st.integers(-30, 30), dr=st.integers(-30, 30))
def test_turned_and_moved_scan_is_exact_and_alignment_undoes_it(k, dq, dr):
    scanned = TRUTH.rotated(k).translated(dq, dr)
    c = compare(scanned, TRUTH)
    assert_perfect(c)
    assert c.rotation == (-k) % 6
    assert scanned.rotated(c.rotation).translated(*c.translation) == TRUTH


@given(lost_tiles=st.sets(st.sampled_from(sorted(TRUTH.tiles))), lost_pieces=st.sets(st.integers(0, N_PIECES - 1)),
       k=st.integers(0, 5))
def test_each_lost_tile_or_piece_is_one_error(lost_tiles, lost_pieces, k):
    scanned = Board.from_tiles([t for h, t in TRUTH.tiles.items() if h not in lost_tiles],
                               [p for n, p in enumerate(TRUTH.pieces) if n not in lost_pieces])
    c = compare(scanned.rotated(k), TRUTH)
    assert c.errors == len(lost_tiles) + len(lost_pieces)
    assert c.board_exact == (c.errors == 0)
    assert c.correct_sectors == 12 * (N_TILES - len(lost_tiles)) and c.silent_sector_errors == 0


def test_mirrored_scan_is_not_exact():
    c = compare(mirrored(TRUTH), TRUTH)
    assert not c.board_exact
    assert c.correct_sectors < c.total_sectors and c.errors > 0


def test_one_wrong_letter_costs_one_sector_and_is_silent():
    scanned = with_terrain(TRUTH, Hex(0, 0), "PPPPMMSMSSPP")  # sector 7: S read as M
    c = compare(scanned.rotated(2).translated(1, 1), TRUTH)
    assert c.correct_sectors == 12 * N_TILES - 1
    assert c.ratios()["sector_accuracy"] == pytest.approx(1 - 1 / (12 * N_TILES))
    assert (c.silent_sector_errors, c.unread_sectors, c.errors) == (1, 0, 1)
    assert not c.board_exact and c.score_exact and c.matched_pieces == N_PIECES


def test_unread_sector_is_wrong_but_not_silent():
    c = compare(with_terrain(TRUTH, Hex(0, 0), "PPPPMMS?SSPP"), TRUTH)
    assert c.correct_sectors == 12 * N_TILES - 1
    assert (c.silent_sector_errors, c.unread_sectors, c.errors) == (0, 1, 1)
    assert not c.board_exact


def test_one_missing_piece_costs_recall_one_nth():
    c = compare(TRUTH.with_pieces(TRUTH.pieces[1:]), TRUTH)
    ratios = c.ratios()
    assert ratios["piece_recall"] == pytest.approx((N_PIECES - 1) / N_PIECES)
    assert ratios["piece_precision"] == 1.0
    assert (c.matched_pieces, c.errors, c.board_exact) == (N_PIECES - 1, 1, False)


def test_one_extra_tile_costs_precision_exactly():
    scanned = TRUTH.with_tiles([*TRUTH.tiles.values(), Tile(Hex(3, 3), "SSSSSSSSSSSS")])
    c = compare(scanned, TRUTH)
    ratios = c.ratios()
    assert ratios["tile_precision"] == pytest.approx(N_TILES / (N_TILES + 1))
    assert ratios["tile_recall"] == ratios["sector_accuracy"] == 1.0
    assert (c.errors, c.board_exact, c.score_exact) == (1, False, True)


def test_missed_tile_costs_twelve_sectors():
    scanned = TRUTH.with_tiles(t for t in TRUTH.tiles.values() if t.hex != Hex(-1, 0))
    c = compare(scanned.rotated(5), TRUTH)
    assert c.correct_sectors == 12 * (N_TILES - 1) and c.total_sectors == 12 * N_TILES
    assert c.ratios()["tile_recall"] == pytest.approx((N_TILES - 1) / N_TILES)
    assert (c.errors, c.silent_sector_errors, c.matched_pieces) == (1, 0, N_PIECES)


def test_piece_matches_anywhere_in_its_segment_but_not_in_another():
    same_segment = [replace(p, sector=11) if p.hex == Hex(0, 0) else p for p in TRUTH.pieces]  # segment 10..3
    assert compare(TRUTH.with_pieces(same_segment), TRUTH).board_exact
    on_mountain = [replace(p, sector=4) if p.hex == Hex(0, 0) else p for p in TRUTH.pieces]
    c = compare(TRUTH.with_pieces(on_mountain), TRUTH)
    assert c.matched_pieces == N_PIECES - 1
    assert c.errors == 1  # one piece misread, not one missed plus one extra


def test_wrong_player_or_kind_does_not_match():
    for change in ({"player": "blue"}, {"kind": "settler"}):
        pieces = [replace(p, **change) if p.hex == Hex(0, 0) else p for p in TRUTH.pieces]
        c = compare(TRUTH.with_pieces(pieces), TRUTH)
        assert c.matched_pieces == N_PIECES - 1 and c.errors == 1


def test_rune_stone_ignores_sector_and_compares_rune_only_when_both_give_it():
    def stones(**change):
        return TRUTH.with_pieces(replace(p, **change) if p.rune == "thor" else p for p in TRUTH.pieces)

    assert compare(stones(sector=9), TRUTH).board_exact
    assert compare(stones(rune=None), TRUTH).board_exact
    assert compare(stones(rune="laguz"), TRUTH).matched_pieces == N_PIECES - 1


def test_pieces_match_one_to_one():
    doubled = TRUTH.with_pieces([*TRUTH.pieces, TRUTH.pieces[0]])
    c = compare(doubled, TRUTH)
    assert (c.scanned_pieces, c.matched_pieces, c.errors) == (N_PIECES + 1, N_PIECES, 1)
    assert c.ratios()["piece_precision"] == pytest.approx(N_PIECES / (N_PIECES + 1))


def test_score_exact_follows_settlers():
    pieces = [replace(p, player="red") if p.kind == "settler" else p for p in TRUTH.pieces]
    c = compare(TRUTH.with_pieces(pieces), TRUTH)
    assert not c.score_exact and c.errors == 1


def test_alignment_prefers_correct_sectors_then_smallest_rotation():
    lone = Board.from_tiles([Tile(Hex(0, 0), "PPPPMMSSSSPP")])
    c = compare(lone.rotated(2), lone)
    assert c.rotation == 4 and c.board_exact
    uniform = Board.from_tiles([Tile(Hex(0, 0), "M" * 12)])
    assert compare(uniform.translated(5, -2), uniform).rotation == 0


def test_empty_boards():
    c = compare(Board(), Board())
    assert c.board_exact and c.errors == 0 and set(c.ratios().values()) == {1.0}
    missed = compare(Board(), TRUTH)
    assert missed.ratios()["tile_recall"] == 0.0 and missed.ratios()["tile_precision"] == 1.0
    assert missed.errors == N_TILES + N_PIECES and not missed.board_exact


def test_summary_pools_counts_and_shares_photos():
    exact = compare(TRUTH, TRUTH)
    extra_tile = compare(TRUTH.with_tiles([*TRUTH.tiles.values(), Tile(Hex(3, 3), "S" * 12)]), TRUTH)
    half = compare(Board.from_tiles(list(TRUTH.tiles.values())[:3]), TRUTH)
    s = summarize([exact, extra_tile, half], seconds=[1.0, 2.0, 6.0])
    assert s.photos == 3
    assert s.tile_precision == pytest.approx((6 + 6 + 3) / (6 + 7 + 3))  # pooled, not a mean of ratios
    assert s.tile_recall == pytest.approx((6 + 6 + 3) / 18)
    assert s.sector_accuracy == pytest.approx(12 * 15 / (12 * 18))
    assert s.piece_recall == pytest.approx(12 / 18)
    assert s.board_exact == pytest.approx(1 / 3) and s.at_most_one_error == pytest.approx(2 / 3)
    assert s.mean_errors == pytest.approx((0 + 1 + 3 + 6) / 3)
    assert s.seconds_per_photo == pytest.approx(3.0)
    for name, (low, high) in s.intervals.items():
        assert low <= getattr(s, name) <= high, name
    assert s.intervals["board_exact"] == pytest.approx(wilson_interval(1, 3))
    doc = s.to_json()
    assert doc["totals"]["scanned_tiles"] == 16 and doc["ci95"]["tile_recall"] == list(s.intervals["tile_recall"])


def test_summary_of_nothing_counts_as_perfect():
    empty = compare(Board(), Board())
    s = summarize([empty, empty])
    assert (s.tile_precision, s.tile_recall, s.sector_accuracy, s.piece_precision, s.piece_recall) == (1,) * 5
    assert s.seconds_per_photo is None and "seconds_per_photo" not in s.to_json()
    assert summarize([]).photos == 0 and summarize([]).board_exact == 1.0
    assert ratio(0, 0) == 1.0


def test_summary_rejects_mismatched_timings():
    with pytest.raises(ValueError):
        summarize([compare(TRUTH, TRUTH)], seconds=[1.0, 2.0])


def test_wilson_interval_known_values():
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.2775), abs=1e-4)
    assert wilson_interval(10, 10) == pytest.approx((0.7225, 1.0), abs=1e-4)
    assert wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_bootstrap_interval_is_deterministic_and_brackets_the_ratio():
    numerators, denominators = [1, 4, 9, 0, 7], [10, 10, 12, 8, 9]
    low, high = bootstrap_interval(numerators, denominators)
    assert (low, high) == bootstrap_interval(numerators, denominators)
    assert low < sum(numerators) / sum(denominators) < high
    assert bootstrap_interval([3], [4]) == (0.75, 0.75)


def test_paired_change_interval_tells_a_change_of_every_photo_from_one_photos_luck():
    before = [3, 0, 7, 2, 5, 1, 4, 6, 2, 0] * 2
    assert paired_change_interval(before, before) == (0.0, 0.0)
    assert paired_change_interval(before, [n - 1 for n in before]) == (-20.0, -20.0)  # every photo one error better
    one_photo_worse = before[:-1] + [before[-1] + 5]
    low, high = paired_change_interval(before, one_photo_worse)
    assert low == 0.0 and high >= 5.0  # the photos drawn without it read no change: luck cannot be ruled out
    with pytest.raises(ValueError):
        paired_change_interval([1, 2], [1])


def test_piece_error_causes_name_every_wrong_piece_once():
    scanned = TRUTH.with_tiles(t for t in TRUTH.tiles.values() if t.hex != Hex(-1, 1)).with_pieces([
        Piece(Hex(0, 0), 0, "settler", "red"),      # a house read as a settler
        Piece(Hex(0, 1), 3, "settler", "blue"),     # the wrong player
        Piece(Hex(0, 1), 9, "house", "blue"),       # and a second piece there
        Piece(Hex(1, 0), 4, "settler", "blue"),     # right
        Piece(Hex(1, -1), 5, "runestone"),          # right (the rune is inferred)
        Piece(Hex(-1, 0), 10, "settler", "red"),    # on a tile that holds nothing
    ])
    causes = piece_error_causes(scanned.rotated(2), TRUTH)
    assert causes == {"right": 2, "kind house->settler": 1, "colour": 1, "one too many": 1,
                      "tile not found": 1, "off tile": 1, "nothing there": 1}
    true_side = sum(n for cause, n in causes.items() if cause not in ("one too many", "nothing there", "no tile there"))
    assert true_side == N_PIECES
    assert piece_error_causes(TRUTH, TRUTH) == {"right": N_PIECES}


def test_pieces_by_colour_count_each_colours_true_pieces_and_those_matched():
    assert pieces_by_colour(TRUTH, TRUTH) == {"red": 2, "red right": 2, "blue": 2, "blue right": 2,
                                              "runestone": 2, "runestone right": 2}
    scanned = TRUTH.with_pieces([
        Piece(Hex(0, 0), 0, "house", "red"),        # right
        Piece(Hex(0, 1), 3, "settler", "blue"),     # a red settler read blue
        Piece(Hex(-1, 1), 6, "house", "blue"),      # right
        Piece(Hex(-1, 0), 10, "settler", "blue"),   # where nothing stands: no true piece, counts nowhere
    ])
    assert pieces_by_colour(scanned.rotated(3), TRUTH) == {"red": 2, "red right": 1, "blue": 2, "blue right": 1,
                                                           "runestone": 2, "runestone right": 0}


def test_stones_and_crowding_count_odin_stones_and_invented_rule_breaks():
    assert stones_and_crowding(TRUTH, TRUTH) == {"stones beside": 1, "stones found": 1, "stones invented": 0,
                                                 "legal board": 1, "read with two on a tile": 0}
    pieces = [p for p in TRUTH.pieces if p.hex != Hex(2, -1)]
    scanned = TRUTH.with_pieces(pieces + [Piece(Hex(-1, -1), None, "runestone"),   # beside, where none stands
                                          Piece(Hex(0, 0), 6, "settler", "blue")])  # a second piece on a tile
    counts = stones_and_crowding(scanned.rotated(4), TRUTH)
    assert counts == {"stones beside": 1, "stones found": 0, "stones invented": 1,
                      "legal board": 1, "read with two on a tile": 1}
    crowded_truth = TRUTH.with_pieces(list(TRUTH.pieces) + [Piece(Hex(0, 1), 9, "house", "blue")])
    assert stones_and_crowding(crowded_truth, crowded_truth)["legal board"] == 0


def test_sector_outcomes_split_seen_partly_and_hidden_sectors():
    # The truth as a render writes it: tile (0, 0) half under a hand, tile (1, 0) seen whole, the others without
    # sector shares (left out).
    shares = {Hex(0, 0): [0.0] * 5 + [0.5] + [1.0] * 6, Hex(1, 0): [1.0] * 12}
    truth = TRUTH.with_tiles(replace(t, extra={"sector_visible": shares[t.hex]}) if t.hex in shares else t
                             for t in TRUTH.tiles.values())
    assert sector_outcomes_by_visibility(TRUTH, truth) == {"hidden right": 5, "partly right": 1, "seen right": 18}
    # Under the hand: two guesses (one lucky, one wrong) and three `?`; the half-seen sector guessed wrong; on
    # the tile seen whole, one `?` and one wrong letter. The scan is turned, as a scan may be.
    scanned = with_terrain(with_terrain(TRUTH, Hex(0, 0), "PS???SSSSSPP"), Hex(1, 0), "?MPPPPPPMMMM")
    assert sector_outcomes_by_visibility(scanned.rotated(3), truth) == {
        "hidden right": 1, "hidden wrong": 1, "hidden ?": 3, "partly wrong": 1,
        "seen right": 16, "seen ?": 1, "seen wrong": 1}
    lost = TRUTH.with_tiles(t for t in TRUTH.tiles.values() if t.hex != Hex(0, 0))
    assert sector_outcomes_by_visibility(lost, truth) == {"hidden tile missed": 5, "partly tile missed": 1,
                                                          "seen tile missed": 6, "seen right": 12}


def test_sector_outcomes_split_the_rim_from_inside_and_tiles_with_a_piece_from_the_others():
    # Every true tile but (-1, 0) holds a piece (the Odin stone beside the tiles holds none of them); (1, -1) and
    # (-1, 0) face a tile across two edges, (0, 0) across five, the others across three.
    assert sector_outcomes_by_place(TRUTH, TRUTH) == {"inside piece right": 32, "rim piece right": 28,
                                                     "inside no piece right": 4, "rim no piece right": 8}
    # On (-1, 0): sector 0 faces (0, 0) and is read `?`; sector 2 faces nothing and is read wrong. Tile (0, 1),
    # missed, is left out. The scan is turned, as a scan may be.
    scanned = with_terrain(TRUTH, Hex(-1, 0), "?SMSSSSSSSPM")
    scanned = scanned.with_tiles(t for t in scanned.tiles.values() if t.hex != Hex(0, 1))
    assert sector_outcomes_by_place(scanned.rotated(2), TRUTH) == {
        "inside piece right": 26, "rim piece right": 22, "inside no piece right": 3, "inside no piece ?": 1,
        "rim no piece right": 7, "rim no piece wrong": 1}


def test_misplaced_tiles_judge_scanned_centres_against_the_true_tiles_in_the_photo():
    # The true tiles drawn 100 px apart with a circumradius of 10 px: a scanned centre more than 3 px from the
    # nearest true centre is misplaced; one 3 px off is not.
    tiles = list(TRUTH.tiles.values())
    centres = {t.hex: (100.0 * n, 50.0) for n, t in enumerate(tiles)}
    hexagon = [(10.0 * math.cos(math.radians(30 + 60 * k)), 10.0 * math.sin(math.radians(30 + 60 * k)))
               for k in range(6)]
    truth = TRUTH.with_tiles(replace(t, extra={"center_px": centres[t.hex],
                                               "corners_px": [(centres[t.hex][0] + x, 50.0 + y) for x, y in hexagon]})
                             for t in tiles)
    shifts = {tiles[0].hex: (3.0, 0.0), tiles[1].hex: (0.0, 3.5), tiles[2].hex: (-60.0, 0.0)}
    seen = {h: tuple(c + d for c, d in zip(centres[h], shifts.get(h, (0.0, 0.0)))) for h in centres}
    scanned = TRUTH.with_tiles(replace(t, extra={} if t.hex == tiles[3].hex else {"center_px": seen[t.hex]})
                               for t in tiles)
    # Misplaced: the tile 3.5 px off, and the one moved 60 px (40 px from its neighbour); the tile without a
    # centre is not judged. The scan's axial positions play no part: it may be turned and moved.
    assert misplaced_tiles(scanned.rotated(2), truth) == (2, N_TILES - 1)
    assert misplaced_tiles(truth, truth) == (0, N_TILES)
    assert misplaced_tiles(scanned, TRUTH) == (0, 0)
