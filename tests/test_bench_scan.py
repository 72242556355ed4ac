"""benchmarks/bench_scan.py: the decoder settings it compares from one scan."""

import importlib.util
import json
from pathlib import Path

import pytest

from shipped_models import scan_models_trained

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("bench_scan", ROOT / "benchmarks" / "bench_scan.py")
bench_scan = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench_scan)


def test_settings_are_typed_as_the_decoders_defaults():
    grid = bench_scan.settings_grid(["photo_look_rounds=1,3", "photo_look=0.05", "infer_hidden=false,1"])
    assert grid == {"photo_look_rounds": [1, 3], "photo_look": [0.05], "infer_hidden": [False, True]}
    assert isinstance(grid["photo_look_rounds"][0], int) and isinstance(grid["photo_look"][0], float)


@pytest.mark.parametrize("item", ["no_such_field=1", "photo_look", "photo_look=", "photo_look_rounds=1.5",
                                  "infer_hidden=maybe", "photo_look=high", "unsure=0.7"])
def test_a_setting_the_decoder_cannot_take_is_refused_in_one_line(item):
    with pytest.raises(ValueError) as refused:
        bench_scan.settings_grid([item])
    assert "\n" not in str(refused.value) and item in str(refused.value)


@pytest.mark.skipif(not scan_models_trained(), reason="models not trained")
def test_each_value_is_decoded_from_one_scan_under_its_own_key(tmp_path, capsys):
    photo = ROOT / "sample_images" / "table-classic.jpg"
    for suffix in (".jpg", ".json"):
        (tmp_path / f"one{suffix}").write_bytes(photo.with_suffix(suffix).read_bytes())
    assert bench_scan.main([str(tmp_path), "--setting", "photo_look_rounds=0,3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    keys = [key for key in report if key.startswith("mismatch=")]
    assert [key.rsplit(" ", 1)[1] for key in keys] == ["photo_look_rounds=0", "photo_look_rounds=3"]
    assert all(report[key]["summary"]["photos"] == 1 for key in keys)


def test_a_bad_setting_exits_2_before_scanning(tmp_path, capsys):
    assert bench_scan.main([str(tmp_path), "--setting", "nonsense=1"]) == 2
    assert "nonsense" in capsys.readouterr().err
