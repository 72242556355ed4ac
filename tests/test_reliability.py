"""The reliability table: is a tile or piece reported with a confidence right, under the best alignment?"""

import copy
import json
import math

import pytest

import fjords_cli.main
from fjords.board import Board
from fjords.boardjson import board_to_json
from fjords.compare import Outcome, compare, reliability_table, summarize, wilson_interval

from test_compare import TRUTH as TRUTH_BOARD

TRUTH = board_to_json(TRUTH_BOARD)  # six tiles, six pieces, no symmetry


def scan_document():
    """The truth as a scanner might report it: confidences, one wrong tile, a `?`, an extra tile, a wrong piece."""
    doc = copy.deepcopy(TRUTH)
    tiles, pieces = doc["tiles"], doc["pieces"]
    tiles[0]["confidence"] = 0.995                  # right
    tiles[1].update(confidence=0.999, terrain="SSPPPPPPMMMS")  # one silent wrong letter: wrong
    tiles[2].update(confidence=0.95, terrain="PPPPPPPPPPP?")   # every letter read is right, but not all are
    tiles[3]["confidence"] = 0.7                    # right
    # tiles[4] and tiles[5] report no confidence: left out
    tiles.append({"q": 3, "r": -3, "terrain": "SSSSSSSSSSSS", "confidence": 0.2})  # not in the truth: wrong
    pieces[0]["confidence"] = 0.999                 # right
    pieces[1].update(confidence=0.992, player="blue")  # wrong colour: wrong
    pieces[2]["confidence"] = "sure"                # not a number: left out
    pieces[4]["confidence"] = 0.6                   # right
    return doc


TILE_OUTCOMES = (Outcome(0.995, True), Outcome(0.999, False), Outcome(0.95, False), Outcome(0.7, True),
                 Outcome(0.2, False))
PIECE_OUTCOMES = (Outcome(0.999, True), Outcome(0.992, False), Outcome(0.6, True))


def test_outcomes_of_the_scan():
    c = compare(Board.from_json(scan_document()), Board.from_json(TRUTH))
    assert sorted(c.tile_outcomes) == sorted(TILE_OUTCOMES)
    assert c.piece_outcomes == PIECE_OUTCOMES
    # The existing counts keep their meaning.
    assert (c.matched_tiles, c.scanned_tiles, c.silent_sector_errors, c.unread_sectors) == (6, 7, 1, 1)
    assert (c.matched_pieces, c.scanned_pieces) == (5, 6)


@pytest.mark.parametrize("k, dq, dr", [(1, 0, 0), (3, 4, -1), (5, -7, 2)])
def test_outcomes_respect_the_alignment(k, dq, dr):
    scanned = Board.from_json(scan_document()).rotated(k).translated(dq, dr)
    c = compare(scanned, Board.from_json(TRUTH))
    assert c.rotation == (-k) % 6
    assert sorted(c.tile_outcomes) == sorted(TILE_OUTCOMES)
    assert sorted(c.piece_outcomes) == sorted(PIECE_OUTCOMES)


def test_pooled_bins_are_counted_exactly():
    truth, scanned = Board.from_json(TRUTH), Board.from_json(scan_document())
    summary = summarize([compare(scanned, truth), compare(scanned.rotated(2), truth)])
    tiles = [(b.label, b.count, b.wrong) for b in summary.reliability["tiles"]]
    assert tiles == [("[0, 0.5)", 2, 2), ("[0.5, 0.9)", 2, 0), ("[0.9, 0.99)", 2, 2), ("[0.99, 1]", 4, 2)]
    pieces = [(b.count, b.wrong) for b in summary.reliability["pieces"]]
    assert pieces == [(0, 0), (2, 0), (0, 0), (4, 2)]
    confident = summary.reliability["pieces"][-1]
    assert confident.wrong_share == 0.5 and confident.interval == wilson_interval(2, 4)
    empty = summary.reliability["pieces"][0]
    assert empty.wrong_share == 0.0 and empty.interval == (0.0, 1.0)


def test_bin_edges_belong_to_the_bin_above_and_one_closes_the_last():
    outcomes = [Outcome(c, True) for c in (-0.1, 0.0, 0.4999, 0.5, 0.8999, 0.9, 0.9899, 0.99, 1.0, 1.2)]
    assert [b.count for b in reliability_table(outcomes)] == [3, 2, 2, 3]
    assert [(b.low, b.high) for b in reliability_table([])] == [(0.0, 0.5), (0.5, 0.9), (0.9, 0.99), (0.99, 1.0)]


def test_the_most_confident_of_interchangeable_pieces_is_the_right_one():
    truth = Board.from_json(TRUTH)
    doc = copy.deepcopy(TRUTH)
    house = TRUTH["pieces"][0]  # sector 10; sector 1 is in the same segment
    doc["pieces"] = [dict(house, confidence=0.6), dict(house, sector=1, confidence=0.999)]
    for pieces in (doc["pieces"], doc["pieces"][::-1]):
        c = compare(Board.from_json(dict(doc, pieces=pieces)).rotated(4), truth)
        assert sorted(c.piece_outcomes) == [Outcome(0.6, False), Outcome(0.999, True)]
        assert c.matched_pieces == 1


def test_truth_without_confidences_has_no_outcomes_and_tables_are_in_json():
    truth = Board.from_json(TRUTH)
    c = compare(truth, truth)
    assert c.tile_outcomes == c.piece_outcomes == ()
    doc = json.loads(json.dumps(c.to_json()))
    assert "tile_outcomes" not in doc and [b["count"] for b in doc["reliability"]["tiles"]] == [0, 0, 0, 0]
    summary = json.loads(json.dumps(summarize([compare(Board.from_json(scan_document()), truth)]).to_json()))
    last = summary["reliability"]["tiles"][-1]
    assert (last["low"], last["high"], last["count"], last["wrong"], last["wrong_share"]) == (0.99, 1.0, 2, 1, 0.5)
    assert last["ci95"] == list(wilson_interval(1, 2))


def test_cli_prints_and_writes_the_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fjords_cli.main, "COMMAND_MODULES", ("fjords_cli.eval_command",))
    folder, scans = tmp_path / "photos", tmp_path / "scans"
    folder.mkdir()
    scans.mkdir()
    (folder / "a.jpg").write_bytes(b"not decoded with --scans")
    (folder / "a.json").write_text(json.dumps(TRUTH))
    (scans / "a.json").write_text(Board.from_json(scan_document()).rotated(3).translated(2, 1).dumps())

    assert fjords_cli.main.main(["eval", str(folder), "--scans", str(scans)]) == 0
    rows = {tuple(line.split()[:3]): line.split()[3:] for line in capsys.readouterr().out.splitlines()
            if line.startswith(("tiles ", "pieces "))}
    assert rows[("tiles", "[0.99,", "1]")][:3] == ["2", "1", "0.5000"]
    assert rows[("pieces", "[0.5,", "0.9)")][:3] == ["1", "0", "0.0000"]
    assert rows[("pieces", "[0,", "0.5)")][:3] == ["0", "0", "-"]

    assert fjords_cli.main.main(["eval", str(folder), "--scans", str(scans), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [b["wrong"] for b in doc["summary"]["reliability"]["tiles"]] == [1, 0, 1, 1]
    assert [b["count"] for b in doc["photos"][0]["reliability"]["pieces"]] == [0, 1, 0, 2]
    assert math.isclose(doc["summary"]["reliability"]["pieces"][-1]["wrong_share"], 0.5)
