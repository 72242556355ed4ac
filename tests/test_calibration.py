"""`fjords calibrate` and scanner.calibration: what is learnt, where it is kept, what is refused."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from fjords_cli.main import main
from scanner.calibration import (NETWORK_NAMING, PALETTE_NAMING, Calibration, CalibrationError, TerrainLook,
                                 calibration_path, load_calibration, photo_terrain_look, save_calibration,
                                 sector_features, sector_masks)

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


@pytest.fixture(autouse=True)
def config_dir(tmp_path, monkeypatch):
    """Every test gets its own configuration folder: the user's is never touched."""
    folder = tmp_path / "config"
    monkeypatch.setenv("FJORDS_CONFIG_DIR", str(folder))
    return folder


def _look(weight=0.5):
    means = np.array([[40.0, -5, -30, 3, 2, 2], [55, 2, 5, 8, 2, 2], [60, -30, 40, 4, 3, 3]])
    return TerrainLook(means, np.stack([np.eye(6) * 9.0] * 3), weight)


def test_sector_masks_split_the_hexagon_into_twelve_disjoint_sectors():
    masks = sector_masks()
    assert masks.shape[0] == 12
    assert masks.sum(axis=0).max() == 1
    sizes = masks.sum(axis=(1, 2))
    assert sizes.min() > 20 and sizes.max() - sizes.min() <= 0.2 * sizes.mean()
    # Sector 0 lies right of and below the centre (image y down), sector 3 above and right.
    ys, xs = np.nonzero(masks[0])
    assert xs.mean() > 24 and ys.mean() > 24
    ys, xs = np.nonzero(masks[3])
    assert xs.mean() > 24 and ys.mean() < 24


def test_sector_features_see_each_sectors_own_colour():
    patch = np.zeros((1, 48, 48, 3), np.uint8)
    masks = sector_masks()
    patch[0][masks[5]] = (255, 0, 0)  # blue in BGR
    features = sector_features(patch)
    assert features.shape == (1, 12, 6)
    assert features[0, 5, 2] < -50  # CIELAB b: blue
    assert np.allclose(features[0, [0, 1, 2, 3, 4, 6], :3], 0.0, atol=1e-3)


def test_adjust_with_weight_zero_changes_nothing():
    probs = np.array([[0.2, 0.5, 0.3]])
    assert np.array_equal(_look(0.0).adjust(probs, np.zeros((1, 6))), probs)


def test_adjust_moves_probability_towards_the_nearest_terrain():
    probs = np.full((1, 3), 1 / 3)
    adjusted = _look(0.5).adjust(probs, np.array([[60.0, -30, 40, 4, 3, 3]]))
    assert adjusted.argmax() == 2 and adjusted[0, 2] > 0.9 and np.isclose(adjusted.sum(), 1.0)


def test_sector_features_of_many_patches_are_each_patchs_own_relative_to_the_photo():
    rng = np.random.default_rng(3)
    patches = rng.integers(0, 256, size=(5, 48, 48, 3), dtype=np.uint8)
    masks = sector_masks()
    lab = [cv2.cvtColor(p.astype(np.float32) / 255.0, cv2.COLOR_BGR2LAB) for p in patches]
    means = np.array([[l[m].mean(axis=0) for m in masks] for l in lab])
    spreads = np.array([[l[m].std(axis=0) for m in masks] for l in lab])
    features = sector_features(patches)
    assert np.allclose(features[..., :3], means - np.median(means.reshape(-1, 3), axis=0), atol=1e-3)
    assert np.allclose(features[..., 3:], spreads, atol=1e-3)
    assert sector_features(patches[:0]).shape == (0, 12, 6)


def test_a_photos_own_look_is_fitted_on_its_sure_sectors_only():
    rng = np.random.default_rng(4)
    features, labels, _ = _synthetic(rng)
    sure = rng.random(labels.shape) < 0.5
    wrong = labels.copy()
    wrong[~sure] = (labels[~sure] + 1) % 3  # readings not taken as sure may be anything
    look = photo_terrain_look(features, wrong, sure, 0.1)
    assert look.weight == 0.1
    assert np.abs(look.means - _look().means).max() < 1.5
    assert photo_terrain_look(features, labels, np.zeros_like(sure), 0.1) is None


def _synthetic(rng, tiles=20, noise=2.0):
    look = _look()
    labels = rng.integers(0, 3, size=(tiles, 12))
    features = look.means[labels] + rng.normal(0, noise, size=(tiles, 12, 6))
    return features, labels, np.ones((tiles, 12), bool)


def test_calibration_round_trips_through_json():
    calibration = Calibration("home", {"anna": (250, 250, 245), "ben": (30, 140, 40)})
    back = Calibration.from_json(json.loads(json.dumps(calibration.to_json())))
    assert back.name == "home" and back.colours == calibration.colours
    assert back.colour_naming == PALETTE_NAMING and back.palette == calibration.colours


def test_a_calibration_naming_by_the_network_keeps_its_colours_but_names_no_piece():
    calibration = Calibration("home", {"red": (200, 40, 40)}, colour_naming=NETWORK_NAMING)
    back = Calibration.from_json(json.loads(json.dumps(calibration.to_json())))
    assert back.colour_naming == NETWORK_NAMING and back.colours == {"red": (200, 40, 40)} and back.palette is None
    # Files written before the choice existed named every piece by their palette.
    assert Calibration.from_json({"colours": {"red": [200, 40, 40]}}).palette == {"red": (200, 40, 40)}
    with pytest.raises(CalibrationError, match="colour_naming"):
        Calibration.from_json({"colours": {"red": [200, 40, 40]}, "colour_naming": "nearest"})


def test_an_older_calibrations_lens_and_terrain_look_are_read_and_not_kept():
    # Scans measure their own photo's lens and fit their own photo's terrain look; those of the calibration
    # photo are no longer used.
    look = {"weight": 0.03, "terrains": {t: {"mean": [0.0] * 6, "covariance": np.eye(6).tolist()} for t in "SMP"}}
    older = Calibration.from_json({"colours": {"red": [1, 2, 3]}, "lens": {"k1": -0.2}, "terrain": look})
    assert older.colours == {"red": (1, 2, 3)} and not {"lens", "terrain"} & set(older.to_json())
    for nothing in ({"lens": {"k1": -0.2}}, {"terrain": look}):
        with pytest.raises(CalibrationError, match="holds nothing"):
            Calibration.from_json(nothing)


def test_a_scan_whose_calibration_names_by_the_network_reads_pieces_as_without_one():
    from scanner.pipeline import Scanner

    plain = Scanner()
    network = Scanner(calibration=Calibration("home", {"red": (200, 40, 40)}, colour_naming=NETWORK_NAMING))
    palette = Scanner(calibration=Calibration("home", {"red": (200, 40, 40)}))
    assert network.palette is None and palette.palette == {"red": (200, 40, 40)}
    # The piece confidence is fitted on the network's colour names: it applies where the network names pieces.
    assert network.piece_calibration is not None and plain.piece_calibration is not None
    assert palette.piece_calibration is None


def test_a_colour_mapping_is_still_a_calibration():
    calibration = load_calibration({"Anna": [250, 250, 245]})
    assert calibration.colours == {"anna": (250, 250, 245)} and calibration.colour_naming == PALETTE_NAMING


@pytest.mark.parametrize("doc", [{"colours": {"a": [1, 2]}}, {"colours": {"a": [1, 2, 300]}}, {},
                                 {"colours": {}, "terrain": {"weight": 1, "terrains": {}}}])
def test_bad_calibration_documents_are_refused(doc):
    with pytest.raises(CalibrationError):
        Calibration.from_json(doc)


def test_save_refuses_to_replace_without_force(config_dir):
    first = Calibration("home", {"anna": (1, 2, 3)})
    path = save_calibration(first)
    assert path == config_dir / "calibrations" / "home.json"
    before = path.read_bytes()
    with pytest.raises(CalibrationError, match="--force"):
        save_calibration(Calibration("home", {"anna": (9, 9, 9)}))
    assert path.read_bytes() == before
    save_calibration(Calibration("home", {"anna": (9, 9, 9)}), force=True)
    assert load_calibration("home").colours == {"anna": (9, 9, 9)}


@pytest.mark.parametrize("name", ["", "../evil", "a/b", "x" * 65, ".hidden"])
def test_unsafe_names_are_refused(name):
    with pytest.raises(CalibrationError):
        calibration_path(name)


def test_unknown_calibration_names_where_it_looked():
    with pytest.raises(CalibrationError, match="fjords calibrate"):
        load_calibration("nobody")


# -- the command, end to end on the bundled sample photos ----------------------------------------


def test_calibrate_then_scan_with_it(config_dir, capsys):
    photo, board = SAMPLES / "table-classic.jpg", SAMPLES / "table-classic.json"
    assert main(["calibrate", str(photo), "--board", str(board), "--name", "home"]) == 0
    out = capsys.readouterr().out
    assert "saved calibration home" in out
    saved = json.loads((config_dir / "calibrations" / "home.json").read_text())
    truth = json.loads(board.read_text())
    assert saved["format"] == "fjords-calibration/1"
    assert set(saved["colours"]) == {p["player"] for p in truth["pieces"] if p.get("player")}
    # The board agrees with what the network reads; no terrain look is kept (every scan fits its photo's own).
    assert saved["report"]["sector_agreement"] >= 0.9 and "terrain" not in saved
    assert main(["scan", str(photo), "--calibration", "home", "--json"]) == 0
    scanned = json.loads(capsys.readouterr().out)
    assert {p["player"] for p in scanned["pieces"] if p.get("player")} <= set(saved["colours"])


def test_pieces_of_players_the_calibration_does_not_know_keep_their_standard_names(capsys):
    # The shipped example knows black and blue; this table's players are blue, green and yellow.
    assert main(["scan", str(SAMPLES / "table-2022.jpg"), "--calibration", "table-classic", "--json"]) == 0
    scanned = json.loads(capsys.readouterr().out)
    players = {p["player"] for p in scanned["pieces"] if p.get("player")}
    assert {"green", "yellow"} <= players
    assert any("match no player colour of calibration table-classic" in a for a in scanned["scanner"]["advice"])


def test_calibrate_refuses_to_replace_and_leaves_the_old_one(config_dir, capsys):
    photo, board = SAMPLES / "table-classic.jpg", SAMPLES / "table-classic.json"
    path = config_dir / "calibrations" / "home.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"colours": {"anna": [1, 2, 3]}}\n')
    assert main(["calibrate", str(photo), "--board", str(board), "--name", "home"]) == 2
    assert "--force" in capsys.readouterr().err
    assert path.read_text() == '{"colours": {"anna": [1, 2, 3]}}\n'


def test_a_board_of_another_photo_is_refused(config_dir, capsys):
    photo, board = SAMPLES / "table-classic.jpg", SAMPLES / "table-2022.json"
    assert main(["calibrate", str(photo), "--board", str(board), "--name", "home"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fjords: error:") and len(err.strip().splitlines()) == 1
    assert not (config_dir / "calibrations" / "home.json").exists()


def test_a_board_without_a_players_piece_is_refused(config_dir, tmp_path, capsys):
    """A calibration learns the players' colours: a board with none of their pieces has nothing to teach."""
    board = json.loads((SAMPLES / "table-classic.json").read_text())
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({**board, "pieces": []}))
    assert main(["calibrate", str(SAMPLES / "table-classic.jpg"), "--board", str(bare), "--name", "home"]) == 2
    err = capsys.readouterr().err
    assert "no player's piece" in err and len(err.strip().splitlines()) == 1
    assert not (config_dir / "calibrations" / "home.json").exists()


def test_a_photo_without_a_board_is_refused(config_dir, tmp_path, capsys):
    table = tmp_path / "table.jpg"
    rng = np.random.default_rng(0)
    cv2.imwrite(str(table), cv2.GaussianBlur(rng.integers(90, 140, (1512, 2016, 3), dtype=np.uint8), (0, 0), 3))
    assert main(["calibrate", str(table), "--board", str(SAMPLES / "table-classic.json"), "--name", "home"]) == 2
    assert "no board" in capsys.readouterr().err
    assert not (config_dir / "calibrations" / "home.json").exists()


def test_bad_board_file_is_one_line(tmp_path, capsys):
    bad = tmp_path / "board.json"
    bad.write_text("{not json")
    assert main(["calibrate", str(SAMPLES / "table-classic.jpg"), "--board", str(bad), "--name", "home"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_saved_text_is_json_with_number_lists_on_one_line(config_dir):
    calibration = Calibration("home", {"anna": (1, 2, 3)}, {"tiles": 3, "pieces_measured": {"anna": 2}})
    text = save_calibration(calibration).read_text()
    assert json.loads(text) == json.loads(json.dumps(calibration.to_json()))
    assert '"anna": [1, 2, 3]' in text


def test_the_shipped_example_is_found_by_name():
    assert load_calibration("table-classic").colours


def test_a_crowded_tiles_pieces_are_matched_to_their_own_readings():
    from fjords.board import Piece
    from fjords.geometry import Hex
    from scanner.calibrate import reading_for
    from scanner.pieces import COLOUR_NAMES, PieceReading

    def read(sector, rgb):
        return PieceReading(np.full(4, 0.25), np.full(len(COLOUR_NAMES), 1 / 11), COLOUR_NAMES, (0.0, 0.0),
                            (0.0, -1.0), sector, rgb)

    readings = (read(1, (200, 0, 0)), read(7, (0, 0, 200)))
    assert reading_for(Piece(Hex(0, 0), 11, "house", "red"), "P" * 12, readings).rgb == (200, 0, 0)
    assert reading_for(Piece(Hex(0, 0), 6, "settler", "blue"), "P" * 12, readings).rgb == (0, 0, 200)
    # Named by its segment's first sector (3), the red piece stands at 7; the blue one's reading (1) is nearer 3.
    two_segments = "PPSPPPPPPSSS"  # segments (0, 1) and (3, ..., 8)
    readings = (read(1, (0, 0, 200)), read(7, (200, 0, 0)))
    assert reading_for(Piece(Hex(0, 0), 3, "house", "red"), two_segments, readings).rgb == (200, 0, 0)
    assert reading_for(Piece(Hex(0, 0), 0, "settler", "blue"), two_segments, readings).rgb == (0, 0, 200)


def test_a_players_colour_is_measured_only_where_a_piece_is_seen():
    """Where the presence model sees no piece the reading's point lies on the tile: its colour is the terrain's."""
    from types import SimpleNamespace

    from fjords.board import Board, Piece, Tile
    from fjords.geometry import Hex
    from scanner.calibrate import PlacedTile, piece_colours, player_readings
    from scanner.pieces import COLOUR_NAMES, PieceReading

    def read(p_none, rgb):
        return PieceReading(np.array([p_none, 1 - p_none, 0.0, 0.0]), np.full(len(COLOUR_NAMES), 1 / 11),
                            COLOUR_NAMES, (0.0, 0.0), (0.0, -1.0), 0, rgb)

    hexes = [Hex(0, 0), Hex(1, 0), Hex(2, 0), Hex(0, 1)]
    seen = {Hex(0, 0): read(0.1, (230, 120, 20)), Hex(1, 0): read(0.95, (40, 90, 200)),
            Hex(2, 0): read(0.3, (220, 110, 30)), Hex(0, 1): read(0.9, (90, 150, 60))}
    board = Board.from_tiles([Tile(h, "P" * 12) for h in hexes],
                             [Piece(h, 0, "house", "orange" if h != Hex(0, 1) else "green") for h in hexes])
    # Each tile's corners carry its index, so the stub answers for the tiles in the order it is asked.
    stub = SimpleNamespace(pieces=SimpleNamespace(
        predict=lambda pyramid, corners: [(seen[hexes[int(c[0, 0])]],) for c in corners]))
    placed = [PlacedTile(h, "P" * 12, np.full((6, 2), float(k))) for k, h in enumerate(hexes)]
    colours, measured = piece_colours(player_readings(stub, None, board, placed))
    assert colours["orange"] == (225, 115, 25) and measured["orange"] == 2
    # A player none of whose pieces is seen keeps the readings' colour, and the report says so.
    assert colours["green"] == (90, 150, 60) and measured["green"] == 0


def test_colours_too_alike_to_tell_apart_are_named():
    from scanner.calibrate import MIN_COLOUR_DISTANCE, alike_colours

    # The seventh session's copy-2 calibration: "orange" measured on the tiles, a grey brown near purple.
    alike = alike_colours({"orange": (94, 97, 77), "purple": (117, 71, 80), "yellow": (219, 184, 48)})
    assert [(a, b) for a, b, _ in alike] == [("orange", "purple")]
    assert 20 < alike[0][2] < MIN_COLOUR_DISTANCE
    assert alike_colours({"orange": (119, 48, 11), "purple": (97, 34, 89)}) == []
    assert alike_colours({}) == [] and alike_colours({"red": (200, 30, 30)}) == []


def _reading(p_none, rgb, network_name):
    from scanner.pieces import COLOUR_NAMES, PieceReading

    probs = np.full(len(COLOUR_NAMES), 0.01)
    probs[COLOUR_NAMES.index(network_name)] = 0.9
    return PieceReading(np.array([p_none, 1 - p_none, 0.0, 0.0]), probs, COLOUR_NAMES, (0.0, 0.0), (0.0, -1.0), 0, rgb)


def test_the_network_names_pieces_where_it_already_knows_the_paint():
    from scanner.calibrate import colour_naming, piece_colours

    # A red piece in the lamp's glare measures like the yellow player's paint; the network still names it red.
    readings = {"red": [_reading(0.1, (200, 40, 40), "red"), _reading(0.1, (190, 50, 45), "red"),
                        _reading(0.1, (225, 170, 60), "red")],
                "yellow": [_reading(0.1, (225, 185, 50), "yellow"), _reading(0.1, (230, 195, 45), "yellow")]}
    assert colour_naming(readings, piece_colours(readings)[0]) == (NETWORK_NAMING, {"network": 5, "palette": 4})
    # Where both name every seen piece right, a scan names colours as without a calibration.
    readings["red"][2] = _reading(0.1, (210, 45, 40), "red")
    assert colour_naming(readings, piece_colours(readings)[0]) == (NETWORK_NAMING, {"network": 5, "palette": 5})
    # A player with one seen piece leaves nothing to measure it on: the palette earns nothing there.
    alone = {"red": readings["red"][:1], "yellow": readings["yellow"]}
    assert colour_naming(alone, piece_colours(alone)[0])[1] == {"network": 3, "palette": 2}


def test_the_palette_names_paints_the_network_does_not_know():
    from scanner.calibrate import colour_naming, piece_colours

    # Orange and purple, which no model was trained on: the network calls them red and blue.
    readings = {"orange": [_reading(0.1, (230, 120, 20), "red"), _reading(0.1, (220, 110, 30), "red"),
                           _reading(0.1, (225, 125, 25), "yellow")],
                "purple": [_reading(0.1, (110, 40, 120), "blue"), _reading(0.1, (100, 35, 110), "blue")]}
    naming, counts = colour_naming(readings, piece_colours(readings)[0])
    assert naming == PALETTE_NAMING and counts == {"network": 0, "palette": 5}
    # Players named by people, not colours, are named by the palette whatever the network says.
    people = {"anna": readings["orange"], "ben": readings["purple"]}
    assert colour_naming(people, piece_colours(people)[0])[0] == PALETTE_NAMING


def test_with_no_piece_seen_the_palette_names_them():
    from scanner.calibrate import colour_naming, piece_colours

    # Nothing seen: no evidence against the colours the player gave, so the palette is kept as before.
    readings = {"red": [_reading(0.9, (200, 40, 40), "red")], "blue": [_reading(0.8, (40, 40, 200), "blue")]}
    assert colour_naming(readings, piece_colours(readings)[0]) == (PALETTE_NAMING, {"network": 0, "palette": 0})
