"""Training samples of crowded tiles and the spot model's targets (numpy only: no torch needed)."""

import random

import cv2
import numpy as np
import pytest

from renderer import random_board, render_board
from renderer.boards import crowd_tiles
from scanner.pieces import SPOT_GRID
from scanner.train_piece_spots import spot_labels, spot_targets
from fjords.geometry import TERRAINS
from scanner.patches import canonical_corners
from scanner.training import NOT_TERRAIN, UNLABELLED, ReadingSamples, load_fields, samples_from_render, sector_cover
from shipped_models import scan_models_trained


@pytest.fixture(scope="module")
def crowded_samples():
    board, crowded = crowd_tiles(random_board(3, stop_fraction=1.0), random.Random(3), 3)
    render = render_board(board, 3, width=800, height=600, hands=0, elevation_deg=90)
    return samples_from_render(render.image, render.truth, np.random.default_rng(0)), len(crowded)


def test_crowded_tiles_carry_their_second_piece(crowded_samples):
    samples, crowded = crowded_samples
    has_second = samples.second_points[:, 0] >= 0
    assert has_second.sum() == crowded
    assert (samples.piece_kind[has_second] > 0).all()
    labels = spot_labels(samples)
    assert sorted({len(p) for p in labels}) == [0, 1, 2]
    assert all(np.linalg.norm(p[0, :2] - p[1, :2]) > 0.05 for p in labels if len(p) == 2)


def test_older_sample_files_load_without_second_pieces(crowded_samples, tmp_path):
    samples, _ = crowded_samples
    path = tmp_path / "old.npz"
    np.savez(path, **{f: getattr(samples, f) for f in ReadingSamples.__dataclass_fields__ if f != "second_points"})
    assert (ReadingSamples.load(path).second_points == -1).all()


def test_tiles_partly_under_a_hand_teach_the_sector_model_alone(tmp_path):
    render = render_board(random_board(5, "classic", 2), 5, width=640, height=480, style="flat", elevation_deg=90.0,
                          fill=0.7, hands=2)
    usual = samples_from_render(render.image, render.truth, np.random.default_rng(0))
    samples = samples_from_render(render.image, render.truth, np.random.default_rng(0), partly_hidden=True)
    assert not usual.sector_only.any() and samples.sector_only.any()
    partly = [t for t in render.truth["tiles"] if 0.02 < t["visible"] < 0.95]
    labels = samples.sector_labels[samples.sector_only]
    assert len(labels) == len(partly)  # this seed's hands stay inside the frame
    for tile, row in zip(partly, labels):
        for letter, share, label in zip(tile["terrain"], tile["sector_visible"], row):
            assert label == (TERRAINS.index(letter) if share >= 0.9 else NOT_TERRAIN if share <= 0.1 else UNLABELLED)
    assert {UNLABELLED, NOT_TERRAIN} <= set(labels.ravel().tolist())
    path = tmp_path / "partly.npz"
    samples.save(path)
    assert len(load_fields([path], "hex_patches", "sector_labels")["sector_labels"]) == len(samples.sector_labels)
    # Whatever reads a piece field (or everything) gets the usual samples only.
    assert len(load_fields([path], "piece_kind", "sector_labels")["sector_labels"]) == len(usual.sector_labels)
    assert np.array_equal(ReadingSamples.load(path).sector_labels, usual.sector_labels)


def test_spot_targets_peak_at_each_base_and_mirror_with_the_crop():
    points = np.array([[0.30, 0.60, 0.32, 0.40], [0.70, 0.55, 0.66, 0.35]], np.float32)
    heat, peak, regress = spot_targets([points, points[:0]], np.array([False, False]))
    assert peak[0].sum() == 2 and peak[1].sum() == 0 and heat[1].max() == 0
    y, x = 9, 4  # the first base's cell: 0.60 · 16 − 0.5 = 9.1, 0.30 · 16 − 0.5 = 4.3
    assert peak[0, 0, y, x] == 1
    assert (x + 0.5 + regress[0, 0, y, x]) / SPOT_GRID == pytest.approx(0.30)
    assert (y + 0.5 + regress[0, 1, y, x]) / SPOT_GRID == pytest.approx(0.60)
    assert regress[0, 2:, y, x] == pytest.approx([0.02, -0.20])
    flipped = spot_targets([points], np.array([True]))
    assert np.array_equal(flipped[1][0, 0], peak[0, 0, :, ::-1])


def test_load_fields_reads_only_what_is_asked_and_fills_in_older_files(crowded_samples, tmp_path):
    samples, _ = crowded_samples
    path = tmp_path / "old.npz"
    np.savez(path, **{f: getattr(samples, f) for f in ReadingSamples.__dataclass_fields__ if f != "piece_close"})
    fields = load_fields([path, path], "piece_kind", "piece_close")
    assert set(fields) == {"piece_kind", "piece_close"}
    assert (fields["piece_kind"] == np.concatenate([samples.piece_kind] * 2)).all()
    assert fields["piece_close"].shape == (2 * len(samples.piece_kind), *samples.piece_close.shape[1:])
    assert not fields["piece_close"].any()


def test_a_rune_stone_beside_the_tiles_is_a_labelled_sample():
    """Odin stands on an empty lattice position: its sample shows no tile top but does show the stone."""
    from scanner.pieces import PIECE_KINDS
    from scanner.training import NOT_TERRAIN

    board = random_board(7, "2022", players=3, stop_fraction=0.8, runestones=True)
    render = render_board(board, 7, width=1008, height=756)
    present = {(t["q"], t["r"]) for t in render.truth["tiles"]}
    odin = [p for p in render.truth["pieces"] if (p["q"], p["r"]) not in present]
    assert len(odin) == 1
    samples = samples_from_render(render.image, render.truth, np.random.default_rng(0), negatives=0)
    no_top = (samples.sector_labels == NOT_TERRAIN).all(axis=1)
    stones = no_top & (samples.piece_kind == PIECE_KINDS.index("runestone"))
    assert stones.sum() == 1
    base = samples.piece_points[stones][0, :2]
    assert (0.2 < base).all() and (base < 0.8).all()  # in the crop around the position, not at its rim
    assert samples.piece_close[stones].any()


def test_keeping_answers_without_a_model_to_keep_them_from_is_refused(capsys):
    from scanner.train_sectors import main

    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--data", "any.npz", "--keep", "1"])
    assert exit_info.value.code == 2
    assert "--keep needs --resume" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--data", "any.npz", "--keep-only", "other.npz"])
    assert exit_info.value.code == 2
    assert "--keep-only needs --keep" in capsys.readouterr().err


def test_a_stages_own_training_options_reach_its_train_function(tmp_path):
    from scanner.training import stage_main

    calls = []
    options = {"--shift": {"type": float, "default": 0.0}}
    stage_main("scanner.any", "Any stage.", "any.onnx", lambda *a, **kw: calls.append(kw), None, steps=1, batch=1,
               train_options=options, argv=["train", "--data", "x.npz", "--shift", "1.5"])
    assert calls and calls[0]["shift"] == 1.5


def test_empty_windows_get_close_ups_labelled_none_clear_of_every_piece():
    """The close-up model learns "none" from empty windows: each gets a close-up (on a tile, over a plain sector),
    never centred near a piece, and placed where the presence model would put one when it is given."""
    from scanner.patches import sector_at
    from scanner.training import EMPTY_CLOSE_UP_CLEARANCE, empty_close_centre, shipped_presence_model

    board = random_board(11, "classic", 2, stop_fraction=0.5)
    render = render_board(board, 11, width=1008, height=756, style="farmland")
    truth = render.truth
    for presence in (None, shipped_presence_model()):
        samples = samples_from_render(render.image, truth, np.random.default_rng(0), presence=presence)
        empty = samples.piece_kind == 0
        has_close = samples.piece_close.reshape(len(empty), -1).max(axis=1) > 0
        assert has_close[~empty].all() and has_close[empty].mean() > 0.8
    ends = np.array([end for p in truth["pieces"] for end in (p["base_px"], p["center_px"])], np.float64)
    rng = np.random.default_rng(1)
    plain = TERRAINS.index("P")
    for tile in (t for t in truth["tiles"] if "P" in t["terrain"]):
        corners = np.asarray(tile["corners_px"], np.float64)
        labels = [TERRAINS.index(letter) for letter in tile["terrain"]]
        point = empty_close_centre(corners, labels, ends, rng)
        radius = np.linalg.norm(corners - corners.mean(axis=0), axis=1).max()
        if point is None:
            assert np.linalg.norm(ends - corners.mean(axis=0), axis=1).min() < 2 * radius
            continue
        assert labels[sector_at(corners, point)] == plain
        assert np.linalg.norm(ends - point, axis=1).min() >= EMPTY_CLOSE_UP_CLEARANCE * radius * 0.999


def test_a_farmland_print_draws_lone_fields_on_one_green_plain():
    """The cartoon print's plains are one colour but for a few compact fields (what dev photos' invented yellow
    pieces stand on); every other family paints its plains as before."""
    from renderer.tileart import paint_tile, sample_style

    rng = np.random.default_rng(4)
    style = sample_style("farmland", rng)
    assert style.field_patches and style.crops and not style.relief
    colour, alpha = paint_tile("P" * 12, style, 60.0, rng)
    inside = alpha > 0.99
    pixels = colour[inside].reshape(-1, 3)
    crop = np.all(np.isclose(pixels[:, None, :], np.array(style.crops, np.float32)[None], atol=0.12), axis=2).any(1)
    assert crop.mean() < 0.5  # fields, not a patchwork of them
    assert not any(sample_style(n, np.random.default_rng(4)).field_patches for n in ("patchwork", "map", "painted"))


def test_rune_stone_games_play_the_variant_and_never_show_what_is_held_out():
    """Every game of the rune-stone data is the 2022 edition with rune stones; a seed whose board or scene would
    show a held-out colour or style is skipped, though its random render (another board) may be a training one."""
    from scanner.holdout import HELD_OUT_COLOURS, HELD_OUT_STYLE, planned_scene, training_seeds
    from scanner.training import is_rune_stone_training_seed, rune_stone_game

    seeds = training_seeds(89200, 40, is_rune_stone_training_seed)
    games = [rune_stone_game(s) for s in seeds]
    assert all(g.edition == "2022" for g in games)
    assert sum(p.kind == "runestone" for g in games for p in g.pieces) >= 40
    assert not any(set(g.players) & set(HELD_OUT_COLOURS) for g in games)
    assert all(planned_scene(s, "2022").style != HELD_OUT_STYLE for s in seeds)
    # 89 244 is a training seed of random renders, but its rune-stone game is painted beige and purple.
    assert 89244 in training_seeds(89200, 40) and 89244 not in seeds
    assert "purple" in rune_stone_game(89244).players


def test_rune_stone_games_refuse_colours_named_for_them(capsys):
    from scanner.training import dataset_main

    with pytest.raises(SystemExit) as exit_info:
        dataset_main(["--runestones", "--colours", "red", "blue", "black", "white", "--count", "1"])
    assert exit_info.value.code == 2
    assert "rune-stone games are painted as drawn" in capsys.readouterr().err


def test_sector_cover_is_the_share_of_each_sector_inside_a_piece_box():
    corners = canonical_corners(48) * 3.0 + 50.0  # a tile as a photo shows it: larger, elsewhere
    centre = corners.mean(axis=0)
    radius = float(np.linalg.norm(corners - centre, axis=1).max())
    assert not sector_cover(corners, np.zeros((0, 4))).any()
    right_half = np.array([[centre[0], centre[1] - 2 * radius, centre[0] + 2 * radius, centre[1] + 2 * radius]])
    cover = sector_cover(corners, right_half)
    # Edges 0, 1 and 5 (sectors 0-3, 10, 11) lie right of the centre, edges 2-4 left of it.
    assert cover[[0, 1, 2, 3, 10, 11]] == pytest.approx(1.0, abs=0.01)
    assert cover[[5, 6, 7, 8]] == pytest.approx(0.0, abs=0.01)
    assert 0.0 < cover[4] < 0.2 and 0.0 < cover[9] < 0.2  # the centre line grazes them
    whole = np.array([[centre[0] - 2 * radius, centre[1] - 2 * radius, centre[0] + 2 * radius, centre[1] + 2 * radius]])
    assert sector_cover(corners, np.concatenate([right_half, whole])) == pytest.approx(1.0)


def test_samples_keep_where_pieces_cover_their_sectors(crowded_samples, tmp_path):
    samples, _ = crowded_samples
    with_piece = samples.piece_kind > 0
    # A piece covers part of the tile it stands on; some empty tiles lie under no piece at all.
    assert (samples.sector_cover[with_piece].max(axis=1) > 0).all()
    assert (samples.sector_cover[~with_piece].max(axis=1) == 0).any()
    path = tmp_path / "before_cover.npz"
    np.savez(path, **{f: getattr(samples, f) for f in ReadingSamples.__dataclass_fields__ if f != "sector_cover"})
    assert not load_fields([path], "hex_patches", "sector_cover")["sector_cover"].any()


def test_covered_windows_are_drawn_as_often_as_their_weight_says():
    from scanner.train_sectors import cover_draws

    cover = np.array([0.0, 1.0] * 500)
    draws = np.searchsorted(cover_draws(cover, 4.0), np.random.default_rng(0).random(20_000))
    assert cover[draws].mean() == pytest.approx(0.8, abs=0.01)
    assert cover_draws(cover, 1.0) == pytest.approx(np.arange(1, 1001) / 1000)


def test_cutting_a_folder_skips_every_held_out_render_and_refuses_one_with_nothing_left(tmp_path, capsys):
    import json

    from scanner.holdout import HELD_OUT_COLOURS, HELD_OUT_STYLE, MAX_TRAINING_SEED
    from scanner.training import dataset_main

    held_out = {"evaluation seed": {"render": {"seed": MAX_TRAINING_SEED}},
                "style": {"render": {"seed": 5}, "style": HELD_OUT_STYLE},
                "colour": {"render": {"seed": 6}, "players": ["red", HELD_OUT_COLOURS[0]]}}
    for name, truth in held_out.items():
        (tmp_path / f"{name}.jpg").write_bytes(b"not read: a held-out render is skipped before its photo is opened")
        (tmp_path / f"{name}.json").write_text(json.dumps(truth))
    out = tmp_path / "samples.npz"
    with pytest.raises(SystemExit) as exit_info:
        dataset_main(["--from-dir", str(tmp_path), "--out", str(out)])
    assert exit_info.value.code == 2
    assert "no photo in" in capsys.readouterr().err and not out.exists()


@pytest.fixture(scope="module")
def close_ups_at_both_sides(tmp_path_factory):
    """One render's samples cut at the flat kind model's side and at the fine one's (the same jitter: one seed)."""
    from scanner.training import shipped_presence_model

    board = random_board(5, "2022", 3, stop_fraction=1.0)
    render = render_board(board, 5, width=1008, height=756, hands=0)
    folder = tmp_path_factory.mktemp("both_sides")
    paths = []
    for side in (40, 56):
        samples = samples_from_render(render.image, render.truth, np.random.default_rng(0),
                                      presence=shipped_presence_model(), close_up=side)
        paths.append(folder / f"cut{side}.npz")
        samples.save(paths[-1])
    return paths


def test_close_ups_are_cut_at_the_side_asked_and_the_rest_alike(close_ups_at_both_sides):
    coarse, fine = (ReadingSamples.load(p) for p in close_ups_at_both_sides)
    assert coarse.piece_close.shape[1:] == (40, 40, 3) and fine.piece_close.shape[1:] == (56, 56, 3)
    for field in ("piece_kind", "piece_colour", "piece_points", "sector_labels", "hex_patches", "piece_crops"):
        assert np.array_equal(getattr(coarse, field), getattr(fine, field)), field
    shrunk = np.array([cv2.resize(c, (40, 40), interpolation=cv2.INTER_AREA) for c in fine.piece_close])
    assert np.abs(shrunk.astype(int) - coarse.piece_close).mean() < 12  # the same window, finer


@pytest.mark.skipif(not scan_models_trained(), reason="models not trained")
def test_the_pair_of_kind_models_is_measured_as_the_scan_reads_it(close_ups_at_both_sides, tmp_path):
    """``evaluate`` reads each side's files with the model of that input side, and their average as a pair."""
    from scanner.onnx_model import DEFAULT_MODELS_DIR
    from scanner.train_piece_kinds import evaluate

    coarse, fine = close_ups_at_both_sides
    scores = evaluate([coarse, fine], DEFAULT_MODELS_DIR)
    pieces = scores["pieces (40 px)"]
    assert pieces > 0 and scores["pieces (56 px)"] == scores["pieces (pair)"] == pieces
    assert {name.split(" (")[0] for name in scores} == {"pieces", "empty", "kind_accuracy", "colour_accuracy",
                                                        "pieces_read_none", "empty_read_none"}
    assert set(evaluate([fine], DEFAULT_MODELS_DIR)) == {n for n in scores if n.endswith("(56 px)")}
    other = tmp_path / "other.npz"
    samples = ReadingSamples.load(coarse)
    ReadingSamples(**{f: getattr(samples, f)[::-1] for f in ReadingSamples.__dataclass_fields__}).save(other)
    with pytest.raises(ValueError, match="different pieces"):
        evaluate([other, fine], DEFAULT_MODELS_DIR)


def test_close_ups_of_a_side_no_kind_model_reads_are_a_one_line_error(close_ups_at_both_sides, tmp_path, capsys):
    from scanner.train_piece_kinds import main

    samples = ReadingSamples.load(close_ups_at_both_sides[0])
    odd = tmp_path / "cut48.npz"
    ReadingSamples(**{f: getattr(samples, f) for f in ReadingSamples.__dataclass_fields__ if f != "piece_close"},
                   piece_close=np.zeros((len(samples.piece_kind), 48, 48, 3), np.uint8)).save(odd)
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", "--data", str(odd)])
    assert stop.value.code == 2 and "no kind model reads 48-pixel close-ups" in capsys.readouterr().err
