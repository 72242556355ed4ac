"""``fjords eval`` as a user meets it: photos with truths, scans, tables, JSON and exit codes."""

import json
import sys
import types

import pytest

import fjords_cli.main
from fjords.board import Board
from fjords.errors import FjordsError

TRUTH = {
    "format": "fjords-board/1",
    "edition": "classic",
    "tiles": [
        {"q": 0, "r": 0, "terrain": "PPPPMMSSSSPP"},
        {"q": 1, "r": 0, "terrain": "SSPPPPPPMMMM"},
        {"q": 0, "r": 1, "terrain": "PPPPPPPPPPPP"},
    ],
    "pieces": [
        {"q": 0, "r": 0, "sector": 0, "kind": "house", "player": "red"},
        {"q": 0, "r": 1, "sector": 3, "kind": "settler", "player": "red"},
    ],
}


@pytest.fixture(autouse=True)
def only_eval(monkeypatch):
    """Build the command line from this command alone, whatever state the other commands are in."""
    monkeypatch.setattr(fjords_cli.main, "COMMAND_MODULES", ("fjords_cli.eval_command",))


@pytest.fixture
def photos(tmp_path):
    """Two photos with truths, one photo without, and scans for the first photo only."""
    folder, scans = tmp_path / "photos", tmp_path / "scans"
    folder.mkdir()
    scans.mkdir()
    for name in ("a.jpg", "b.PNG", "lonely.webp"):
        (folder / name).write_bytes(b"not decoded with --scans")
    for name in ("a", "b"):
        (folder / f"{name}.json").write_text(json.dumps(TRUTH))
    turned = Board.from_json(TRUTH).rotated(3).translated(4, -1)
    (scans / "a.json").write_text(turned.dumps())
    return folder, scans


def run(capsys, *argv):
    code = fjords_cli.main.main(["eval", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_with_scans(photos, capsys):
    folder, scans = photos
    code, out, _ = run(capsys, folder, "--scans", scans, "--json")
    assert code == 0
    doc = json.loads(out)
    first, second = doc["photos"]
    assert (first["name"], second["name"]) == ("a.jpg", "b.PNG")
    assert first["board_exact"] and first["errors"] == 0 and first["rotation"] == 3
    assert second["matched_tiles"] == 0 and second["errors"] == 3 + 2  # no scan: every tile and piece missed
    summary = doc["summary"]
    assert summary["photos"] == 2 and summary["board_exact"] == 0.5
    assert summary["tile_recall"] == 0.5 and summary["sector_accuracy"] == 0.5
    assert "seconds_per_photo" not in summary and first["seconds"] is None
    assert summary["ci95"]["board_exact"][0] < 0.5 < summary["ci95"]["board_exact"][1]


def test_table_and_limit(photos, capsys):
    folder, scans = photos
    code, out, _ = run(capsys, folder, "--scans", scans, "--limit", "1")
    assert code == 0
    assert "a.jpg" in out and "b.PNG" not in out and "lonely" not in out
    assert "1 photos" in out and "board exact" in out
    assert [line.split()[-4:] for line in out.splitlines() if line.startswith("a.jpg")] == [["yes", "yes", "0", "-"]]


def test_unreadable_truth_is_one_line_and_exit_2(photos, capsys):
    folder, scans = photos
    (folder / "b.json").write_text("{not json")
    code, out, err = run(capsys, folder, "--scans", scans)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "b.json" in err


def test_unreadable_scan_and_missing_folders_exit_2(photos, capsys, tmp_path):
    folder, scans = photos
    assert run(capsys, tmp_path / "nowhere", "--scans", scans)[0] == 2
    assert run(capsys, folder, "--scans", tmp_path / "nowhere")[0] == 2
    assert run(capsys, scans, "--scans", scans)[0] == 2  # no photo with a truth
    (scans / "a.json").write_text('{"format": "fjords-board/1", "tiles": 3}')
    code, _, err = run(capsys, folder, "--scans", scans)
    assert code == 2 and "a.json" in err


def test_without_scanner_asks_for_scans(photos, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "scanner.pipeline", None)  # makes the import fail
    code, _, err = run(capsys, photos[0])
    assert code == 2 and "use --scans" in err


def test_scans_photos_with_the_pipeline_and_times_them(photos, capsys, monkeypatch):
    truth = Board.from_json(TRUTH)

    class Scanner:
        def scan_path(self, path):
            if path.endswith(".PNG"):
                raise FjordsError("no board in this photo")
            return types.SimpleNamespace(board=truth.rotated(1))

    monkeypatch.setitem(sys.modules, "scanner.pipeline", types.SimpleNamespace(Scanner=Scanner))
    code, out, _ = run(capsys, photos[0], "--json")
    assert code == 0
    doc = json.loads(out)
    assert [p["board_exact"] for p in doc["photos"]] == [True, False]
    assert doc["photos"][1]["failure"] == "no board in this photo"
    assert doc["summary"]["seconds_per_photo"] >= 0 and all(p["seconds"] >= 0 for p in doc["photos"])
