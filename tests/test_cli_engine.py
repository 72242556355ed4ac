"""The engine's subcommands as a user meets them: exit codes, JSON shape, one-line errors."""

import json
import subprocess
import sys

import pytest

from fjords_cli.main import main

LEGAL = {
    "format": "fjords-board/1",
    "edition": "classic",
    "tiles": [
        {"q": 0, "r": 0, "terrain": "PPPPPPPPPPPP", "start": True},
        {"q": 1, "r": 0, "terrain": "PPPPPPPPPPPP", "start": True},
        {"q": 0, "r": 1, "terrain": "PPPPPPPPPPPP", "start": True},
        {"q": 1, "r": 1, "terrain": "PPPPPPPPPPPP"},
    ],
    "pieces": [
        {"q": 1, "r": 1, "sector": 0, "kind": "house", "player": "red"},
        {"q": 1, "r": 0, "sector": 0, "kind": "settler", "player": "red"},
    ],
}


def write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    return str(path)


def test_check_legal_board_exits_0_with_json(tmp_path, capsys):
    assert main(["check", write(tmp_path, "b.json", LEGAL), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["legal"] is True and out["violations"] == [] and out["score"] == {"red": 1}


def test_check_reports_violations_with_exit_1(tmp_path, capsys):
    bad = json.loads(json.dumps(LEGAL))
    bad["tiles"][3]["terrain"] = "SSSSSSSSSSSS"  # cuts nothing but mismatches every shared edge
    assert main(["check", write(tmp_path, "b.json", bad), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    rules = {v["rule"] for v in out["violations"]}
    assert "edge-mismatch" in rules and out["legal"] is False
    assert all(set(v) >= {"rule", "message", "tiles"} for v in out["violations"])


@pytest.mark.parametrize("content,expected", [
    ("", "not valid JSON"),
    ("{not json", "not valid JSON"),
    ('{"format": "other"}', "unknown format"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "QQQQQQ"}]}', "letters"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, expected):
    assert main(["check", write(tmp_path, "b.json", content)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "Traceback" not in err


def board_text(tiles, pieces=()):
    return json.dumps({"format": "fjords-board/1", "tiles": tiles, "pieces": list(pieces)})


HOUSE = {"q": 0, "r": 0, "sector": 0, "kind": "house", "player": "red"}
BAD_INPUTS = {
    "malformed JSON": ('{"format": "fjords-board/1", "tiles": [}', "not valid JSON"),
    "unknown format": ('{"format": "fjords-board/7", "tiles": []}', "unknown format"),
    "wrong terrain letters": (board_text([{"q": 0, "r": 0, "terrain": "PPMSSX"}]), "letters 'X'"),
    "duplicate tiles": (board_text([{"q": 0, "r": 0, "terrain": "PPMSSP"}] * 2), "two tiles at q=0, r=0"),
    "piece on a missing tile": (board_text([{"q": 1, "r": 0, "terrain": "PPMSSP"}], [HOUSE]),
                                "where there is no tile"),
    "too many tiles": (board_text([{"q": i, "r": 0, "terrain": "PPMSSP"} for i in range(10_001)]),
                       "more than any table holds"),
    "absurd coordinate": (board_text([{"q": 10**12, "r": 0, "terrain": "PPMSSP"}]), "absurdly far"),
    "absurdly long number": ('{"format": "fjords-board/1", "tiles": [{"q": ' + "9" * 5000 + "}]}",
                             "too many digits"),
    "absurd nesting": ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    "binary file": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xd8", "not UTF-8 text"),
}
COMMANDS = [["check"], ["check", "--json"], ["score"], ["score", "--json"], ["territory"],
            ["territory", "--json"], ["solve", "--to-move", "red"], ["solve", "--json"]]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_every_command_refuses_bad_input_in_one_line(tmp_path, capsys, command, case):
    content, expected = BAD_INPUTS[case]
    assert main([command[0], write(tmp_path, "b.json", content), *command[1:]]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("fjords: error: ") and expected in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_refuses_a_folder_in_one_line(tmp_path, capsys, command):
    assert main([command[0], str(tmp_path), *command[1:]]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fjords: error: cannot read {tmp_path}") and err.count("\n") == 1


@pytest.mark.parametrize("argv, expected", [
    (["simulate", "--edition", "2005"], "invalid choice: '2005'"),
    (["simulate", "--seed", "x"], "invalid int value: 'x'"),
    (["check"], "the following arguments are required: BOARD.json"),
    (["checkmate"], "invalid choice: 'checkmate'"),
])
def test_usage_errors_are_one_line_and_exit_2(capsys, argv, expected):
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "--help" in err


def test_missing_file_is_exit_2(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_a_bad_round_of_a_match_is_named(tmp_path, capsys):
    good, bad = write(tmp_path, "r1.json", LEGAL), write(tmp_path, "r2.json", "{")
    assert main(["score", good, bad, good]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fjords: error: {bad}: not valid JSON") and len(err.strip().splitlines()) == 1


def test_score_territory_solve_simulate_run(tmp_path, capsys):
    path = write(tmp_path, "b.json", LEGAL)
    assert main(["score", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["red"]["total"] == 1
    assert main(["territory", path, "--json"]) == 0
    json.loads(capsys.readouterr().out)
    assert main(["solve", path, "--to-move", "red", "--json"]) == 0
    json.loads(capsys.readouterr().out)
    assert main(["solve", path, "--to-move", "blue"]) == 2
    for budget in ("0", "-1", "nan"):
        assert main(["solve", path, "--to-move", "red", "--time", budget]) == 2
        assert "--time must be a positive number" in capsys.readouterr().err
    capsys.readouterr()
    assert main(["simulate", "--edition", "2022", "--players", "3", "--seed", "4", "--json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert board["format"] == "fjords-board/1" and board["edition"] == "2022"


def test_console_command_prints_no_traceback(tmp_path):
    path = write(tmp_path, "b.json", "[]")
    proc = subprocess.run([sys.executable, "-m", "fjords_cli.main", "check", path], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("fjords: error:") and "Traceback" not in proc.stderr
