"""`fjords scan`: exit codes, --json, --out, --overlay, refusing to overwrite."""

import json

import cv2
import numpy as np
import pytest

from fjords_cli.main import main
from shipped_models import scan_models_trained

needs_models = pytest.mark.skipif(not scan_models_trained(), reason="models not trained")


@pytest.fixture(scope="module")
def photo(tmp_path_factory):
    from renderer import render_random

    path = tmp_path_factory.mktemp("photos") / "table.jpg"
    cv2.imwrite(str(path), render_random(900_201, width=1008, height=756).image)
    return path


def test_help_documents_exit_codes(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["scan", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for text in ("--json", "--overlay", "--out", "--calibration", "--edition", "3 no board", "4 photo must be retaken"):
        assert text in out


@needs_models
def test_missing_file_is_unreadable(tmp_path, capsys):
    assert main(["scan", str(tmp_path / "nothing.jpg")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fjords: error:") and len(err.strip().splitlines()) == 1


@needs_models
def test_text_named_jpg_is_unreadable(tmp_path, capsys):
    fake = tmp_path / "notes.jpg"
    fake.write_text("not a photo")
    assert main(["scan", str(fake)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


@needs_models
def test_photo_without_board(tmp_path, capsys):
    rng = np.random.default_rng(0)
    table = cv2.GaussianBlur(rng.integers(60, 140, (600, 800, 3), dtype=np.uint8), (0, 0), 1.0)
    path = tmp_path / "table.png"
    cv2.imwrite(str(path), table)
    assert main(["scan", str(path)]) in (3, 4)  # no board, or a photo to retake: never a crash


@needs_models
def test_json_is_one_board_document(photo, capsys):
    assert main(["scan", str(photo), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "fjords-board/1"
    assert doc["tiles"] and all(len(t["terrain"]) == 12 for t in doc["tiles"])
    assert {"legality", "score"} <= set(doc)
    assert set(doc["scanner"]["models"]) == {"tile_tops", "sectors", "hands", "pieces", "piece_confidence"}
    assert doc["image"]["width"] == 1008 and doc["image"]["file"] == "table.jpg"


@needs_models
def test_summary_names_tiles_and_players(photo, capsys):
    assert main(["scan", str(photo)]) == 0
    out = capsys.readouterr().out
    assert "tiles" in out and "pieces" in out and " edition " in out


@needs_models
def test_the_edition_the_player_names_is_the_boards(photo, capsys):
    for edition in ("classic", "2022"):
        assert main(["scan", str(photo), "--json", "--edition", edition]) == 0
        doc = json.loads(capsys.readouterr().out)
        assert doc["edition"] == edition
        assert len({p["player"] for p in doc["pieces"] if p["player"]}) <= (2 if edition == "classic" else 4)


@needs_models
def test_out_dir_writes_json_and_overlay_and_refuses_to_overwrite(photo, tmp_path, capsys):
    out = tmp_path / "scans"
    assert main(["scan", str(photo), "--out", str(out)]) == 0
    assert json.loads((out / "table.json").read_text())["format"] == "fjords-board/1"
    overlay = cv2.imread(str(out / "table.overlay.jpg"))
    assert overlay.shape == (756, 1008, 3)
    capsys.readouterr()
    assert main(["scan", str(photo), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert main(["scan", str(photo), "--out", str(out), "--force"]) == 0


@needs_models
def test_overlay_refuses_to_overwrite_a_file(photo, tmp_path, capsys):
    target = tmp_path / "mine.jpg"
    target.write_bytes(b"precious")
    assert main(["scan", str(photo), "--overlay", str(target)]) == 2
    assert target.read_bytes() == b"precious"


@needs_models
def test_several_photos_go_on_after_a_failure(photo, tmp_path, capsys):
    assert main(["scan", str(tmp_path / "missing.jpg"), str(photo), "--json"]) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.out.splitlines() if line.strip()]
    assert len(lines) == 1 and json.loads(lines[0])["format"] == "fjords-board/1"
    assert "missing.jpg" in captured.err


@needs_models
def test_bad_calibration_is_one_line(photo, tmp_path, capsys):
    assert main(["scan", str(photo), "--calibration", str(tmp_path / "nope.json")]) == 2
    assert "calibration" in capsys.readouterr().err


def test_a_folder_stands_for_its_photos_and_a_pattern_for_the_files_it_matches(tmp_path):
    from scanner.cli import photo_paths

    for name in ("b.JPG", "a.png", "notes.txt"):
        (tmp_path / name).write_bytes(b"x")
    (tmp_path / "sub.jpg").mkdir()
    assert photo_paths([str(tmp_path)]) == [str(tmp_path / "a.png"), str(tmp_path / "b.JPG")]
    assert photo_paths([str(tmp_path / "*.png"), str(tmp_path / "c.jpg")]) == [str(tmp_path / "a.png"),
                                                                             str(tmp_path / "c.jpg")]
    assert photo_paths([str(tmp_path / "*.webp")]) == [str(tmp_path / "*.webp")]  # matches nothing: told as missing


def test_a_folder_without_photos_is_one_line(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("no photo")
    assert main(["scan", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no photo in this folder" in err and len(err.strip().splitlines()) == 1


def test_photos_that_would_write_the_same_files_are_refused_before_any_scan(photo, tmp_path, capsys):
    other = tmp_path / "day2"
    other.mkdir()
    (other / "table.jpg").write_bytes(photo.read_bytes())
    out = tmp_path / "scans"
    assert main(["scan", str(photo), str(other / "table.jpg"), "--out", str(out)]) == 2
    assert "both be written as table.json" in capsys.readouterr().err and not out.exists()


@needs_models
def test_a_folder_of_photos_is_scanned(photo, capsys):
    assert main(["scan", str(photo.parent), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["image"]["file"] == "table.jpg"


def test_rule_breaks_a_hidden_or_cut_off_tile_may_cause_are_flagged_in_the_summary():
    from types import SimpleNamespace

    from fjords.board import Board, Tile
    from fjords.geometry import Hex
    from scanner.cli import summary

    corners = [[100 + 50 * np.cos(np.radians(30 + 60 * k)), 80 - 50 * np.sin(np.radians(30 + 60 * k))]
               for k in range(6)]
    tile = Tile(Hex(0, 0), "P" * 12, extra={"corners_px": corners})
    doc = {"legality": [{"message": "No placement order builds this layout"}]}

    def header(extra):
        board = Board.from_tiles([tile], [], extra={"image": {"width": 200, "height": 160}, **extra})
        return summary("t.jpg", SimpleNamespace(board=board, seconds=0.0, advice=[]), doc).splitlines()[1]

    assert header({}) == "  1 rule violation(s):"
    assert "hides or leaves out" in header({"possibly_hidden_tiles": [{"q": 1, "r": 0, "corners_px": corners}]})
    assert "hides or leaves out" in header({"image": {"width": 120, "height": 160}})  # the tile runs past the edge
