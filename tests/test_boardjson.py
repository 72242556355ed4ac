"""Reading and writing fjords-board/1: round trips, shorthand, and one clear error per bad document."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fjords import Board, FormatError, Hex, Piece, Tile

EXAMPLE = {
    "format": "fjords-board/1",
    "edition": "classic",
    "tiles": [
        {"q": 0, "r": 0, "terrain": "PPPPMMSSSSPP", "center_px": [10.5, 20.0]},
        {"q": 1, "r": 0, "terrain": "SSPPPPPPMMMM", "start": True},
    ],
    "pieces": [
        {"q": 0, "r": 0, "sector": 0, "kind": "house", "player": "red", "confidence": 0.9},
        {"q": 1, "r": 0, "sector": 2, "kind": "settler", "player": "yellow"},
    ],
    "image": {"file": "x.jpg", "width": 10, "height": 10},
}


def test_reads_the_spec_example_and_keeps_unknown_fields():
    board = Board.from_json(json.dumps(EXAMPLE))
    assert board.tiles[Hex(1, 0)].start and not board.tiles[Hex(0, 0)].start
    assert board.tiles[Hex(0, 0)].extra["center_px"] == [10.5, 20.0]
    # "PPPPMMSSSSPP": sector 0 lies in the segment 10, 11, 0, 1, 2, 3, named 10.
    assert board.pieces[0] == Piece(Hex(0, 0), 10, "house", "red")
    out = board.to_json()
    assert out["image"] == EXAMPLE["image"]
    assert out["pieces"][0]["confidence"] == 0.9
    assert out["tiles"][0]["center_px"] == [10.5, 20.0]
    assert Board.from_json(out) == board


def test_six_letter_shorthand_is_written_as_twelve():
    doc = dict(EXAMPLE, tiles=[{"q": 0, "r": 0, "terrain": "ppmssp"}], pieces=[])
    assert Board.from_json(doc).to_json()["tiles"][0]["terrain"] == "PPPPMMSSSSPP"


def test_writers_write_canonical_segment_names():
    doc = dict(EXAMPLE, tiles=[{"q": 0, "r": 0, "terrain": "PPMMPPPPPPPP"}],
               pieces=[{"q": 0, "r": 0, "sector": 1, "kind": "settler", "player": "Red"}])
    piece = Board.from_json(doc).to_json()["pieces"][0]
    assert piece["sector"] == 4 and piece["player"] == "red"


def test_runestone_may_stand_off_the_tiles():
    doc = dict(EXAMPLE, pieces=[{"q": 5, "r": 5, "sector": None, "kind": "runestone", "player": None,
                                 "rune": "Odin"}])
    board = Board.from_json(doc)
    assert board.pieces[0].rune == "odin" and board.pieces[0].sector is None


BAD = [
    ("[1, 2]", "must be a JSON object"),
    ("{", "not valid JSON"),
    ('{"format": "fjords-board/2"}', "unknown format"),
    ('{"format": "fjords-board/1", "edition": "2005"}', "unknown edition"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "PPPPMMSSSSPX"}]}', "letters 'X'"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "PPP"}]}', "12 (or 6) letters"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "PPMSSP"},'
     ' {"q": 0, "r": 0, "terrain": "PPMSSP"}]}', "two tiles at q=0, r=0"),
    ('{"format": "fjords-board/1", "tiles": [], "pieces": [{"q": 0, "r": 0, "sector": 0, "kind": "house",'
     ' "player": "red"}]}', "where there is no tile"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0.5, "r": 0, "terrain": "PPMSSP"}]}', "must be an integer"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 99999999, "r": 0, "terrain": "PPMSSP"}]}', "absurdly far"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "PPMSSP"}], "pieces": [{"q": 0, "r": 0,'
     ' "sector": 12, "kind": "house", "player": "red"}]}', "sector must be 0..11"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "PPMSSP"}], "pieces": [{"q": 0, "r": 0,'
     ' "sector": 0, "kind": "castle", "player": "red"}]}', "unknown kind"),
    ('{"format": "fjords-board/1", "tiles": [{"q": 0, "r": 0, "terrain": "PPMSSP"}], "pieces": [{"q": 0, "r": 0,'
     ' "sector": 0, "kind": "settler"}]}', "needs its player"),
    ('{"format": "fjords-board/1", "pieces": [{"q": 0, "r": 0, "sector": 0, "kind": "runestone",'
     ' "player": "red"}]}', "belongs to no player"),
    ('{"format": "fjords-board/1", "tiles": "many"}', "tiles must be a list"),
    ('{"format": "fjords-board/1", "phase": "endgame"}', "unknown phase"),
]


@pytest.mark.parametrize("text,expected", BAD)
def test_bad_documents_get_one_clear_line(text, expected):
    with pytest.raises(FormatError) as info:
        Board.from_json(text)
    message = str(info.value)
    assert expected in message and "\n" not in message


def test_absurd_sizes_are_refused():
    tiles = [{"q": i, "r": 0, "terrain": "PPMSSP"} for i in range(10_001)]
    with pytest.raises(FormatError, match="more than any table holds"):
        Board.from_json({"format": "fjords-board/1", "tiles": tiles})


terrain = st.text(alphabet="SMP?", min_size=12, max_size=12)
tiles = st.dictionaries(st.tuples(st.integers(-9, 9), st.integers(-9, 9)), terrain, max_size=30)


@given(tiles, st.booleans())
def test_round_trip_is_lossless(raw, classic):
    board = Board.from_tiles([Tile(Hex(q, r), t) for (q, r), t in raw.items()],
                             edition="classic" if classic else "2022")
    assert Board.from_json(board.dumps()) == board


@given(tiles, st.integers(0, 11), st.integers(-5, 5), st.integers(-5, 5))
def test_rotation_and_translation_are_invertible(raw, k, dq, dr):
    board = Board.from_tiles([Tile(Hex(q, r), t) for (q, r), t in raw.items()])
    assert board.rotated(k).rotated(6 - k % 6) == board
    assert board.translated(dq, dr).translated(-dq, -dr) == board
    assert len(board.rotated(k).segment_graph) == len(board.segment_graph)
