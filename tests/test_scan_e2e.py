"""End to end: rendered photos (fixed seeds, outside the training range) scanned and compared with the truth."""

import math
from dataclasses import replace

import cv2
import numpy as np
import pytest

from fjords.board import Board
from fjords.compare import compare
from shipped_models import scan_models_trained

pytestmark = pytest.mark.skipif(not scan_models_trained(), reason="models not trained")
SEEDS = (900_101, 900_102)


class _Cell:
    def __init__(self, tile):
        from fjords.geometry import Hex

        self.hex = Hex(tile["q"], tile["r"])
        self.corners_px = np.asarray(tile["corners_px"])
        self.visible = tile.get("visible", 1.0)


@pytest.fixture(scope="module")
def scanner():
    from scanner.pipeline import Scanner

    return Scanner()


@pytest.fixture(scope="module", params=SEEDS)
def render(request):
    from renderer import render_random

    return render_random(request.param, width=1008, height=756)


def test_reading_at_true_corners(scanner, render):
    cells = [_Cell(t) for t in render.truth["tiles"] if t.get("visible", 1.0) > 0.95]
    truth = Board.from_json(render.truth)
    truth = truth.with_tiles(t for t in truth.tiles.values() if t.hex in {c.hex for c in cells})
    truth = truth.with_pieces(p for p in truth.pieces if p.hex in truth.tiles)
    board = scanner.read(render.image, cells)
    c = compare(board, truth)
    assert c.matched_tiles == c.true_tiles == len(cells)
    # Measured on renders of new seeds (models/README.md): ~96 % of sectors of fully visible
    # tiles right, under 1 % silently wrong; pieces are found far more reliably than named (kind, colour).
    # A small board swings: seed 900 102's 12 tiles read 132 of 144 sectors right (2 silently wrong) with the
    # fifteenth session's sector model, 129 (3 silently wrong) with the sixteenth's, 130 (3) with the
    # twenty-ninth session's and 128 (5) with the thirtieth's, which reads seeds 900 101-900 110 otherwise
    # exactly as the twenty-ninth's did (2,571 and 2,573 of 2,592 sectors right, 9 and 7 silently wrong).
    assert c.correct_sectors >= 0.88 * c.total_sectors
    assert c.silent_sector_errors <= max(5, 0.02 * c.total_sectors)
    assert 0.6 * c.true_pieces <= c.scanned_pieces <= c.true_pieces + 2
    assert c.matched_pieces >= 1


def test_full_scan_document_is_complete(scanner, render):
    result = scanner.scan(render.image)
    assert set(result.timings) >= {"quality", "lattice", "sectors", "hands", "pieces", "assemble"}
    doc = result.board.to_json()
    assert set(doc["scanner"]["models"]) == {"tile_tops", "sectors", "hands", "pieces", "piece_confidence"}
    # a network's version; the first network's with "@balanced" where the photo's tiles read white-balanced agree better
    assert doc["scanner"]["sector_network"].removesuffix("@balanced") in doc["scanner"]["models"]["sectors"].split("+")
    assert doc["tiles"] and all(0.0 <= t["confidence"] <= 1.0 and len(t["corners_px"]) == 6 for t in doc["tiles"])
    assert all(0.0 <= p["confidence"] <= 1.0 and len(p["base_px"]) == 2 for p in doc["pieces"])
    assert set(result.evidence) >= set(result.board.tiles)
    read = [e for e in result.evidence.values() if getattr(e, "visible", 0) >= scanner.settings.min_tile_visible]
    assert read and all(e.sector_features.shape == (12, 6) for e in read)  # for the photo's own terrain look


def test_full_scan_finds_and_reads_the_board(scanner, render):
    c = compare(scanner.scan(render.image).board, Board.from_json(render.truth))
    # Seed 900 102 finds 16 of its 19 tiles since the thirty-fourth session's view from above (17 before), and
    # reads the board better (18 errors, 24 before).
    assert c.matched_tiles >= 0.8 * c.true_tiles
    assert c.matched_tiles >= 0.95 * c.scanned_tiles
    # Seeds 900 101-900 110 at this size read 2,690 and 2,689 of 3,636 sectors with the fifteenth and the
    # sixteenth session's sector models; seed 900 102 moved 186 -> 180 of 228 (one tile of 19 unfound).
    assert c.correct_sectors >= 0.75 * c.total_sectors


def test_of_lattices_the_edges_cannot_choose_the_one_read_surest_is_kept(scanner, render, monkeypatch):
    """A lattice shifted by half a tile reads patches that are no sector: it must lose whichever comes first."""
    import scanner.looks as looks

    true_fit = scanner.scan(render.image).lattice
    off = true_fit.translated((true_fit.tile_radius_px * 0.87, 0.0))
    for lattices in ([off, true_fit], [true_fit, off]):
        monkeypatch.setattr(looks, "find_lattices", lambda *args, found=lattices, **kwargs: found)
        # The lattice kept may be a view from above taken on either look (forty-sixth session), which lands on
        # the tiles: it must find the true fit's tiles, never the shifted ones.
        kept = scanner.scan(render.image).lattice
        assert kept is not off and kept.same_tiles(true_fit)


def test_lattices_are_compared_with_the_floor_they_were_chosen_with_and_the_board_kept_is_read_with_its_own(
        scanner, render, monkeypatch):
    """A reading made surer must not turn the choice among lattices (sixty-first session): every lattice is read,
    for comparing, with ``choice_sector_visible``; the one kept is decoded again with ``min_sector_visible``."""
    floors = []
    decode = scanner.decode

    def recording(*args, settings=None, **kwargs):
        floors.append((settings or scanner.settings).min_sector_visible)
        return decode(*args, settings=settings, **kwargs)

    monkeypatch.setattr(scanner, "decode", recording)
    scanner.scan(render.image)
    assert scanner.settings.choice_sector_visible != scanner.settings.min_sector_visible
    assert floors[-1] == scanner.settings.min_sector_visible
    assert set(floors[:-1]) == {scanner.settings.choice_sector_visible}


def _recording_reads(scanner, monkeypatch):
    """The lattices the scanner reads, in order, each with how sure its reading is (:meth:`Scanner._read_lattice`)."""
    from scanner.pipeline import mean_tile_confidence

    reads = []
    read_lattice = scanner._read_lattice

    def recording(image_bgr, lattice, **kwargs):
        reading = read_lattice(image_bgr, lattice, **kwargs)
        reads.append((lattice, mean_tile_confidence(reading[3])))
        return reading

    monkeypatch.setattr(scanner, "_read_lattice", recording)
    return reads


def test_views_from_above_are_taken_on_every_look_read_surest_first_and_kept_when_read_surer(scanner, render,
                                                                                             monkeypatch):
    import scanner.looks as looks
    import scanner.rectified as rectified

    true_fit = scanner.scan(render.image).lattice
    off = true_fit.translated((true_fit.tile_radius_px * 0.87, 0.0))
    further = true_fit.translated((0.0, true_fit.tile_radius_px * 0.87))
    anchors = []
    monkeypatch.setattr(rectified, "rectified_look", lambda image, net, anchor: anchors.append(anchor))
    monkeypatch.setattr(looks, "find_lattices", lambda *args, **kwargs: [off, true_fit])
    assert scanner.scan(render.image).lattice is true_fit
    assert sorted(map(id, anchors)) == sorted(map(id, [off, true_fit]))
    # The views are made on the scan's second thread while the looks are read, but weighed the look read surest
    # first: each view found here lies on the tiles (a copy of the true fit), so each is read, in that order.
    views = {id(look): replace(true_fit, refit_move=0.0) for look in (off, true_fit)}
    monkeypatch.setattr(rectified, "rectified_look", lambda image, net, anchor: views[id(anchor)])
    with monkeypatch.context() as recorded:
        reads = _recording_reads(scanner, recorded)
        scanner.scan(render.image)
    assert reads[1][1] > reads[0][1]
    assert [id(lattice) for lattice, _ in reads] == [id(off), id(true_fit), id(views[id(true_fit)]), id(views[id(off)])]
    # Two lattices off the tiles: the view from above, on the tiles, replaces them.
    monkeypatch.setattr(rectified, "rectified_look", lambda image, net, anchor: true_fit)
    monkeypatch.setattr(looks, "find_lattices", lambda *args, **kwargs: [off, further])
    assert set(scanner.scan(render.image).lattice.cells) == set(true_fit.cells)
    # One look only (the first, believed): the view from above is taken on it, but not for a video frame that
    # follows another.
    anchors.clear()
    monkeypatch.setattr(rectified, "rectified_look", lambda image, net, anchor: anchors.append(anchor))
    monkeypatch.setattr(looks, "find_lattices", lambda *args, **kwargs: [off])
    assert scanner.scan(render.image).lattice is off and anchors == [off]
    previous = scanner.scan(render.image)
    anchors.clear()
    assert scanner.scan(render.image, previous=previous).lattice is off and not anchors


def _fit_and_looks_off_it(scanner, render):
    """The photo's lattice (converge() leaves it as it is) and two looks half a tile off it, on as many edges."""
    true_fit = replace(scanner.scan(render.image).lattice, refit_move=0.0)
    supported = max(1, true_fit.supported_tiles)
    shift = true_fit.tile_radius_px * 0.87
    off, further = (replace(true_fit.translated(offset), supported_tiles=supported)
                    for offset in ((shift, 0.0), (0.0, shift)))
    return true_fit, supported, off, further


def _view_supports(true_fit, supported):
    """Supported tiles of a view on ``true_fit``'s cells: as many as the lattice kept, one fewer (within
    VIEW_SUPPORT_TOLERANCE of its share), and the most that fall beyond the tolerance; with whether each is kept."""
    from scanner.pipeline import VIEW_SUPPORT_TOLERANCE

    beyond = math.ceil(supported - VIEW_SUPPORT_TOLERANCE * len(true_fit.cells)) - 1
    assert 0 <= beyond < supported - 1
    return ((supported, true_fit), (supported - 1, true_fit), (beyond, None))


def test_the_view_on_a_believed_first_look_is_kept_only_where_its_tiles_sit_on_the_edges_about_as_well(
        scanner, render, monkeypatch):
    """A believed first look can miss the far tiles of a low photo, which the view from above finds."""
    import scanner.looks as looks
    import scanner.rectified as rectified

    true_fit, _, off, _ = _fit_and_looks_off_it(scanner, render)
    supported = len(true_fit.cells)  # the look kept finds every tile's edges: a view may find a fifth fewer
    off = replace(off, supported_tiles=supported)
    monkeypatch.setattr(looks, "find_lattices", lambda *args, **kwargs: [off])
    for view_support, kept in _view_supports(true_fit, supported):
        view = replace(true_fit, supported_tiles=view_support)
        monkeypatch.setattr(rectified, "rectified_look", lambda image, net, anchor, view=view: view)
        lattice = scanner.scan(render.image).lattice
        if kept is None:
            assert lattice is off
        else:
            assert set(lattice.cells) == set(kept.cells) and lattice.supported_tiles == view_support


def test_a_view_on_a_look_not_read_surest_is_kept_only_where_its_tiles_sit_on_the_edges_about_as_well(
        scanner, render, monkeypatch):
    """Among looks that all miss the tiles the reader's sureness is noise: a view on the second look must also find
    the tiles' edges about as well as the lattice kept (forty-sixth and sixtieth sessions)."""
    import scanner.looks as looks
    import scanner.rectified as rectified

    true_fit, _, off, further = _fit_and_looks_off_it(scanner, render)
    supported = len(true_fit.cells)  # the looks find every tile's edges: a view may find a fifth fewer
    off, further = (replace(look, supported_tiles=supported) for look in (off, further))
    monkeypatch.setattr(looks, "find_lattices", lambda *args, **kwargs: [off, further])
    monkeypatch.setattr(rectified, "rectified_look", lambda image, net, anchor: None)
    with monkeypatch.context() as recorded:
        reads = _recording_reads(scanner, recorded)
        scanner.scan(render.image)
    # The views are weighed the look read surest first (the first of equals), whichever view is made first.
    less_sure = further if reads[0][1] >= reads[1][1] else off
    for view_support, kept in _view_supports(true_fit, supported):
        anchors = []
        view = replace(true_fit, supported_tiles=view_support)

        def view_on_the_look_less_sure(image, net, anchor, anchors=anchors, view=view):
            anchors.append(anchor)
            return view if anchor is less_sure else None

        monkeypatch.setattr(rectified, "rectified_look", view_on_the_look_less_sure)
        lattice = scanner.scan(render.image).lattice
        assert len(anchors) == 2 and {id(a) for a in anchors} == {id(off), id(further)}
        if kept is None:
            assert lattice is off or lattice is further
        else:
            assert set(lattice.cells) == set(kept.cells) and lattice.supported_tiles == view_support


def test_a_scan_ends_its_second_thread_and_refuses_a_dark_photo_for_the_dark(scanner, render, monkeypatch):
    """The photo's quality is measured on the scan's second thread while the lattice is searched: a photo too dark
    to read is still refused for that, not as a photo without a board, and no scan leaves a thread behind (a video
    overlay scans for hours)."""
    import threading

    from scanner.locate import NoBoardFound
    from scanner.quality import RetakePhoto

    before = threading.active_count()
    scanner.scan(render.image)
    with pytest.raises(RetakePhoto, match="too dark"):
        scanner.scan((render.image // 12).astype(np.uint8))
    table = cv2.GaussianBlur(np.random.default_rng(5).integers(60, 200, (756, 1008, 3), dtype=np.uint8), (0, 0), 2)
    with pytest.raises(NoBoardFound):
        scanner.scan(table)

    def failing(*args, **kwargs):
        raise RuntimeError("a view that fails")

    monkeypatch.setattr(scanner, "_view", failing)
    with pytest.raises(RuntimeError, match="a view that fails"):
        scanner.scan(render.image)
    assert threading.active_count() == before


def test_a_frame_read_on_the_previous_one_reads_the_board_no_worse(scanner, render):
    """The same photo again, as the next video frame: its tiles are found again and it is read as well or better.

    Not always the same board: where no look sits on the tiles' edges, the next frame's first look starts from the
    previous lattice (tracked candidates), so its looks, and the one read surest, may differ from the first frame's.
    """
    truth = Board.from_json(render.truth)
    first = scanner.scan(render.image)
    second = scanner.scan(render.image, previous=first)
    before, after = compare(first.board, truth), compare(second.board, truth)
    assert after.matched_tiles >= before.matched_tiles - 1 and after.errors <= before.errors


def test_a_huge_frame_is_shrunk_and_reported_in_its_own_pixels(scanner, render):
    big = cv2.resize(render.image, None, fx=4, fy=4, interpolation=cv2.INTER_LINEAR)
    result = scanner.scan(big)
    assert max(result.image_bgr.shape[:2]) <= 2048
    doc = result.board.to_json()
    assert (doc["image"]["width"], doc["image"]["height"]) == (big.shape[1], big.shape[0])
    xs = [x for t in doc["tiles"] for x, _ in t["corners_px"]]
    assert max(xs) > 2048  # corners in the 4032-pixel frame's coordinates, not the shrunk image's


def test_a_board_on_a_white_table_is_read_not_refused_for_glare(scanner, render):
    """Glare is judged on the tiles: a table clipped to white around a readable board is no reason to retake it."""
    from scanner.quality import GLARE_ADVICE, assess_quality

    height, width = render.image.shape[:2]
    on_white = cv2.copyMakeBorder(render.image, height // 2, height // 2, width // 2, width // 2, cv2.BORDER_CONSTANT,
                                  value=(255, 255, 255))
    assert assess_quality(on_white).glare_fraction > 0.4
    result = scanner.scan(on_white)
    c = compare(result.board, Board.from_json(render.truth))
    assert c.matched_tiles >= 0.8 * c.true_tiles
    assert GLARE_ADVICE not in result.advice


def test_two_pieces_on_a_tile_are_shown_not_decoded_away(scanner):
    """A rule break must survive the scan: two tiles each given a second piece are reported, and no other."""
    import random

    from renderer import random_board, render_board
    from renderer.boards import crowd_tiles

    board, crowded = crowd_tiles(random_board(900_410, stop_fraction=1.0), random.Random(900_410), 2)
    render = render_board(board, 900_410, width=1008, height=756, hands=0)
    scanned = scanner.read(render.image, [_Cell(t) for t in render.truth["tiles"] if t.get("visible", 1.0) > 0.95])
    reported = {v.tiles for v in scanned.legal_violations() if v.rule == "two-pieces-on-tile"}
    assert reported == {(h,) for h in crowded}


def test_a_rune_stone_beside_the_tiles_is_read(scanner):
    """Odin on an empty lattice position next to the board (seed outside the training range).

    Found on about one in five such boards (models/README.md); this seed is one where it is.
    """
    from fjords.compare import piece_error_causes
    from renderer import random_board, render_board

    board = random_board(900_151, "2022", players=3, stop_fraction=1.0, runestones=True)
    render = render_board(board, 900_151, width=1008, height=756, hands=0)
    truth = Board.from_json(render.truth)
    assert [p.rune for p in truth.pieces if p.hex not in truth.tiles] == ["odin"]
    scanned = scanner.scan(render.image).board
    beside = [p for p in scanned.pieces if p.hex not in scanned.tiles]
    assert [(p.kind, p.sector, p.player) for p in beside] == [("runestone", None, None)]
    causes = piece_error_causes(scanned, truth)
    assert causes["off tile"] == 0 and causes["no tile there"] == 0


def test_a_tile_the_lattice_missed_is_read_from_its_sectors(scanner, render):
    """A tile the tile-top model misses in plain view is still seen by the sector model
    (:func:`scanner.assemble.with_missed_tiles`)."""
    from scanner.assemble import EmptyPositionEvidence

    first = scanner.scan(render.image)
    lattice = first.lattice
    inner = [h for h, cell in sorted(lattice.cells.items()) if cell.visible >= 0.99 and h in first.board.tiles
             and sum(n in lattice.cells for n in h.neighbours()) >= 3]
    missed = inner[len(inner) // 2]
    cells = [cell for h, cell in lattice.cells.items() if h != missed]
    height, width = render.image.shape[:2]
    beside = replace(lattice, cells={cell.hex: cell for cell in cells}).empty_positions((width, height))
    evidence = scanner.evidence(render.image, cells, beside=beside)
    assert isinstance(evidence[missed], EmptyPositionEvidence) and evidence[missed].as_tile is not None
    board = scanner.decode(evidence, render.image.shape)
    assert board.tiles[missed].terrain == first.board.tiles[missed].terrain
    off = scanner.decode(evidence, render.image.shape, settings=replace(scanner.settings, min_missed_top=1.1))
    assert missed not in off.tiles


def test_a_purple_player_read_as_red_is_named_purple_beside_the_red_player_and_in_the_advice(scanner):
    from renderer import random_board, render_board
    from renderer.boards import random_setup

    # A held-out seed whose purple and red players are both read red by the piece network (the fifty-fourth session).
    seed = 993_132
    render = render_board(random_board(seed, *random_setup(seed, None, 2), colours=["purple", "red"]), seed,
                          width=1008, height=756)
    result = scanner.scan(render.image)
    true_bases = {colour: np.array([p["base_px"] for p in render.truth["pieces"] if p.get("player") == colour])
                  for colour in ("purple", "red")}

    def nearest(base) -> str:
        return min(true_bases, key=lambda colour: np.min(np.linalg.norm(true_bases[colour] - base, axis=1)))

    named = [p for p in result.board.pieces if p.player == "purple"]
    assert len(named) >= 0.8 * len(true_bases["purple"])
    assert all(nearest(np.asarray(p.extra["base_px"])) == "purple" and "untaught_paint" in p.extra for p in named)
    assert all(nearest(np.asarray(p.extra["base_px"])) == "red" for p in result.board.pieces if p.player == "red")
    assert any("look purple or magenta" in note and "named purple" in note for note in result.advice)


def test_tiles_partly_under_a_hand_are_named_and_read_as_without_the_hand_model(scanner):
    from renderer import random_board, render_board
    from renderer.boards import random_setup

    seed = 993_000  # among the sessions' judge seeds: no model trained on it
    render = render_board(random_board(seed, *random_setup(seed, "classic", 2)), seed, width=1008, height=756,
                          hands=2, fill=0.8)
    result = scanner.scan(render.image)
    named = {t.hex: t for t in result.board.tiles.values() if t.extra.get("under_hand")}
    assert named and any("partly under a hand" in note for note in result.advice)
    truth = Board.from_json(render.truth)
    comparison = compare(result.board, truth)
    hidden = 0
    for h in named:  # a named tile is one the truth shows partly hidden
        true_tile = truth.tiles.get(h.rotated(comparison.rotation).translated(*comparison.translation))
        hidden += true_tile is not None and min(true_tile.extra["sector_visible"]) < 0.5
    assert hidden >= 0.8 * len(named)
    # Naming them reads nothing differently: the same board as a decode that names no sector.
    unnamed = scanner.decode(result.evidence, result.image_bgr.shape, settings=replace(scanner.settings,
                                                                                        min_hand_share=2.0))
    assert {h: t.terrain for h, t in unnamed.tiles.items()} == {h: t.terrain for h, t in result.board.tiles.items()}
    assert unnamed.pieces == result.board.pieces
    assert not any(t.extra.get("under_hand") for t in unnamed.tiles.values())


def test_tiles_take_the_sector_network_chosen_for_the_photo_and_the_board_names_it(scanner, render, monkeypatch):
    import scanner.pipeline as pipeline

    cells = [_Cell(t) for t in render.truth["tiles"] if t.get("visible", 1.0) > 0.95]
    readings = scanner.classify(render.image, cells)
    assert all(len(readings.looks[c.hex].sectors) == len(scanner.sectors.readings) == 3 for c in cells)
    for network in (0, 1, 2):  # the first network, the second, the first on the balanced patches
        monkeypatch.setattr(pipeline, "chosen_network", lambda each, network=network: network)
        evidence, taken = scanner.evidence_and_network(render.image, cells)
        assert taken == network
        for c in cells:
            np.testing.assert_allclose(evidence[c.hex].sector_probs, readings.looks[c.hex].sectors[network][0],
                                       atol=1e-5)
        board = scanner.read(render.image, cells)
        assert board.extra["scanner"]["sector_network"] == scanner.sectors.readings[network]


def test_a_small_board_is_read_from_the_crop_size_that_finds_its_tiles(scanner, monkeypatch):
    """A board filling under half the photo, seen from above (a spent judge seed of the sixty-third session).

    The board's box cropped and shrunk to 512 px gives the tile-top network several centres a tile and a lattice
    off the tiles; at 384 px it gives one a tile (scanner.looks.CROP_SIDES). The code before read 298 errors here
    (the same board unsaved, 9: the failure is as fragile as it is large). Every look's lattice is read to choose
    among them, by its tiles alone: the pieces are read once, on the lattice kept.
    """
    from renderer import render_random

    lattices_read, pieces_read = [], []
    read_lattice, predict = type(scanner)._read_lattice, scanner.pieces.predict
    monkeypatch.setattr(type(scanner), "_read_lattice",
                        lambda self, *args, **kw: lattices_read.append(1) or read_lattice(self, *args, **kw))
    monkeypatch.setattr(scanner.pieces, "predict", lambda *args, **kw: pieces_read.append(1) or predict(*args, **kw))
    render = render_random(996_915, style="muted")  # as `fjords render --seed 996915` drew and saved it
    _, jpeg = cv2.imencode(".jpg", render.image, [cv2.IMWRITE_JPEG_QUALITY, 95])
    result = scanner.scan(cv2.imdecode(jpeg, cv2.IMREAD_COLOR))
    comparison = compare(result.board, Board.from_json(render.truth))
    assert comparison.scanned_tiles == comparison.matched_tiles >= 0.95 * comparison.true_tiles
    assert comparison.errors <= 20  # 8
    assert len(lattices_read) >= 3 and len(pieces_read) == 1
