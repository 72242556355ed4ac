"""Fine-tuning the shipped networks from their ONNX files (needs the ``[train]`` extra; skipped without it)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from scanner.locate import DEFAULT_MODEL  # noqa: E402
from scanner.onnx_model import OnnxModel  # noqa: E402
from scanner.train_locate import make_network  # noqa: E402
from scanner.training import load_folded_onnx  # noqa: E402


def test_weights_taken_back_from_onnx_give_the_shipped_maps():
    net = make_network()
    load_folded_onnx(net, DEFAULT_MODEL)
    net.eval()
    image = np.random.default_rng(0).uniform(0, 255, (1, 3, 96, 128)).astype(np.float32)
    with torch.no_grad():
        ours = net(torch.from_numpy(image)).numpy()
    shipped = OnnxModel(DEFAULT_MODEL, threads=1).run(image)[0]
    assert np.abs(ours - shipped).max() < 1e-4


@pytest.mark.parametrize("module, model_file, options", [("scanner.train_sectors", "sectors.onnx", {}),
                                                         ("scanner.train_pieces", "pieces.onnx", {}),
                                                         ("scanner.train_piece_kinds", "piece_kinds.onnx", {}),
                                                         ("scanner.train_piece_kinds", "piece_kinds_fine.onnx",
                                                          {"layout": "averaged"}),
                                                         ("scanner.train_piece_spots", "piece_spots.onnx", {}),
                                                         ("scanner.train_piece_spots", "piece_spots_doubted.onnx", {})])
def test_reading_models_taken_back_from_onnx_read_as_shipped(module, model_file, options):
    """``--resume`` fine-tunes a shipped reading model: its weights taken back give the shipped outputs."""
    import importlib

    from scanner.onnx_model import DEFAULT_MODELS_DIR

    net = importlib.import_module(module).build_model(**options)
    load_folded_onnx(net, DEFAULT_MODELS_DIR / model_file)
    net.eval()
    shipped = OnnxModel(DEFAULT_MODELS_DIR / model_file, threads=1)
    shape = [4 if not isinstance(d, int) else d for d in shipped.session.get_inputs()[0].shape]
    image = np.random.default_rng(1).uniform(-1, 1, shape).astype(np.float32)
    with torch.no_grad():
        ours = net(torch.from_numpy(image))
    ours = ours if isinstance(ours, tuple) else (ours,)
    assert len(ours) == len(shipped.session.get_outputs())
    for mine, theirs in zip(ours, shipped.run(image)):
        assert np.abs(mine.numpy() - theirs).max() < 1e-4


def test_keeping_the_resumed_answers_holds_a_fine_tune_near_the_shipped_model(tmp_path):
    """``--keep``: a fine-tune on data that says "plain" everywhere drifts less from the shipped answers."""
    from scanner.onnx_model import DEFAULT_MODELS_DIR
    from scanner.sectors import SECTOR_WINDOW
    from scanner.train_sectors import main

    rng = np.random.default_rng(2)
    n = 64
    data = tmp_path / "plain.npz"
    np.savez(data, hex_patches=rng.integers(0, 256, (n, 48, 48, 3), dtype=np.uint8),
             sector_labels=np.full((n, 12), 2, np.int64), piece_kind=np.zeros(n, np.int64))
    windows = rng.uniform(-1, 1, (256, 3, SECTOR_WINDOW, SECTOR_WINDOW)).astype(np.float32)

    def answers(model_path):
        logits = OnnxModel(model_path, threads=1).run(windows)[0]
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        return exp / exp.sum(axis=1, keepdims=True)

    shipped = answers(DEFAULT_MODELS_DIR / "sectors.onnx")
    drift = {}
    for keep in (0, 20):
        out = tmp_path / f"keep{keep}.onnx"
        assert main(["train", "--data", str(data), "--steps", "40", "--batch", "32", "--lr", "3e-3",
                     "--resume", str(DEFAULT_MODELS_DIR / "sectors.onnx"), "--keep", str(keep),
                     "--out", str(out)]) == 0
        drift[keep] = np.abs(answers(out) - shipped).sum(axis=1).mean()
    assert drift[20] < 0.8 * drift[0]  # 0.34 against 0.55 when written; equal were --keep ignored (same seed)


def test_keep_only_files_teach_the_kept_answers_and_never_their_labels(tmp_path):
    """``--keep-only``: the files' windows train as if every label were unknown (only the kept answers count)."""
    from scanner.onnx_model import DEFAULT_MODELS_DIR
    from scanner.sectors import SECTOR_WINDOW
    from scanner.train_sectors import main
    from scanner.training import UNLABELLED

    rng = np.random.default_rng(3)
    n = 32

    def sample_file(name, labels):
        path = tmp_path / name
        np.savez(path, hex_patches=rng.integers(0, 256, (n, 48, 48, 3), dtype=np.uint8),
                 sector_labels=np.full((n, 12), labels, np.int64), piece_kind=np.zeros(n, np.int64))
        return path

    plain, sea = sample_file("plain.npz", 2), sample_file("sea.npz", 0)
    with np.load(sea) as data:
        unlabelled = tmp_path / "sea_unlabelled.npz"
        np.savez(unlabelled, **{**data, "sector_labels": np.full((n, 12), UNLABELLED, np.int64)})
    common = ["--steps", "20", "--batch", "32", "--resume", str(DEFAULT_MODELS_DIR / "sectors.onnx"), "--keep", "1"]
    windows = rng.uniform(-1, 1, (64, 3, SECTOR_WINDOW, SECTOR_WINDOW)).astype(np.float32)
    outputs = {}
    for name, files in (("keep-only", ["--data", str(plain), "--keep-only", str(sea)]),
                        ("unlabelled", ["--data", str(plain), str(unlabelled)]),
                        ("labelled", ["--data", str(plain), str(sea)])):
        out = tmp_path / f"{name}.onnx"
        assert main(["train", *files, *common, "--out", str(out)]) == 0
        outputs[name] = OnnxModel(out, threads=1).run(windows)[0]
    assert np.abs(outputs["keep-only"] - outputs["unlabelled"]).max() < 1e-3
    assert np.abs(outputs["keep-only"] - outputs["labelled"]).max() > 1e-2  # the labels would have taught something


def test_moved_windows_keep_their_content_and_move_it():
    from scanner.train_sectors import shift_windows

    windows = torch.zeros(64, 1, 24, 24)
    windows[:, 0, 12, 12] = 1.0
    generator = torch.Generator().manual_seed(0)
    assert torch.allclose(shift_windows(windows, 1e-9, generator), windows, atol=1e-6)
    moved = shift_windows(windows, 2.0, generator)
    ys, xs = torch.meshgrid(torch.arange(24.0), torch.arange(24.0), indexing="ij")
    centres = torch.stack([(moved[:, 0] * xs).sum((1, 2)), (moved[:, 0] * ys).sum((1, 2))], 1)
    assert torch.allclose(moved.sum((1, 2, 3)), torch.ones(64), atol=1e-4)  # far from the edges: nothing lost
    offsets = centres - 12.0
    assert 1.2 < offsets.std().item() < 2.8  # moved by about the asked 2 pixels either way


def test_averaging_a_model_with_its_fine_tuned_self_mixes_each_weight(tmp_path):
    """``average`` (weight-space ensemble): weight 0 is the start, weight w moves every float weight w of the way."""
    import onnx
    from onnx import numpy_helper

    from scanner.onnx_model import DEFAULT_MODELS_DIR
    from scanner.training import average_onnx

    start = DEFAULT_MODELS_DIR / "sectors.onnx"
    tuned = onnx.load(str(start))
    for init in tuned.graph.initializer:
        value = numpy_helper.to_array(init)
        if value.dtype.kind == "f":
            init.CopyFrom(numpy_helper.from_array((value * 1.5 + 0.25).astype(value.dtype), init.name))
    onnx.save(tuned, str(tmp_path / "tuned.onnx"))
    average_onnx(start, tmp_path / "tuned.onnx", 0.5, tmp_path / "half.onnx")
    average_onnx(start, tmp_path / "tuned.onnx", 0.0, tmp_path / "none.onnx")
    half = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(tmp_path / "half.onnx")).graph.initializer}
    floats = 0
    for init in onnx.load(str(start)).graph.initializer:
        value = numpy_helper.to_array(init)
        expected = value * 1.25 + 0.125 if value.dtype.kind == "f" else value
        floats += value.dtype.kind == "f"
        assert np.allclose(half[init.name], expected, rtol=1e-6, atol=1e-6)
    assert floats >= 10
    windows = np.random.default_rng(0).uniform(0, 1, (4, 3, 24, 24)).astype(np.float32)
    assert np.array_equal(OnnxModel(tmp_path / "none.onnx", threads=1).run(windows)[0],
                          OnnxModel(start, threads=1).run(windows)[0])
    other = onnx.load(str(start))
    other.graph.initializer[0].name = "renamed"
    onnx.save(other, str(tmp_path / "other.onnx"))
    with pytest.raises(ValueError, match="not a fine-tuned"):
        average_onnx(start, tmp_path / "other.onnx", 0.5, tmp_path / "x.onnx")


def test_a_close_up_model_from_before_none_resumes_reading_as_it_did(tmp_path):
    """``--resume`` of a kind model with three kind logits (no "none"): the kinds read as before, "none" unlikely."""
    from scanner.sectors import softmax
    from scanner.train_piece_kinds import build_model, start_from_kinds
    from scanner.training import export_onnx

    torch.manual_seed(0)
    older = build_model(3)
    with torch.no_grad():  # trained-looking norms: the export would merge a fresh model's equal (zero) biases
        for norm in (m for m in older.modules() if isinstance(m, torch.nn.BatchNorm2d)):
            norm.bias.uniform_(-0.5, 0.5)
    older.eval()
    close = torch.from_numpy(np.random.default_rng(2).uniform(-1, 1, (6, 3, 40, 40)).astype(np.float32))
    path = tmp_path / "older.onnx"
    export_onnx(older, close[:2], path, ["kind", "colour"])
    model = build_model()
    assert start_from_kinds(model, path)
    model.eval()
    with torch.no_grad():
        kinds, colours = (t.numpy() for t in model(close))
    old_kinds, old_colours = OnnxModel(path, threads=1).run(close.numpy())
    assert kinds.shape == (6, 4) and np.abs(colours - old_colours).max() < 1e-4
    assert np.abs(softmax(kinds[:, 1:]) - softmax(old_kinds)).max() < 1e-4
    assert (softmax(kinds)[:, 0] < 0.15).all()


def test_a_close_up_turned_keeps_its_middle_and_each_point_its_distance_from_it():
    """``--turn`` / ``--rescale``: a mark beside the middle goes round it; nothing asked, nothing moves."""
    from scanner.train_piece_kinds import turned

    side = 56
    close = torch.zeros(64, 3, side, side)
    close[:, :, side // 2 - 2:side // 2 + 2, side // 2 - 2:side // 2 + 2] = 1.0  # the middle
    close[:, :, side // 2 - 2:side // 2 + 2, side // 2 + 14:side // 2 + 18] = 0.5  # a mark 16 px to its right
    generator = torch.Generator().manual_seed(0)
    assert torch.allclose(turned(close, generator, 0.0, 0.0), close, atol=1e-5)
    out = turned(close, generator, 180.0, 0.0)
    middle = side // 2 - 0.5
    ys, xs = np.mgrid[0:side, 0:side]
    angles = []
    for image in out[:, 0].numpy():
        assert image[side // 2 - 1:side // 2 + 1, side // 2 - 1:side // 2 + 1].min() > 0.9
        distance = np.hypot(ys - middle, xs - middle)  # the corners show the close-up reflected: not looked at
        mark = (image > 0.25) & (image < 0.75) & (distance > 8) & (distance < side / 2)
        assert np.hypot(ys[mark] - middle, xs[mark] - middle).mean() == pytest.approx(16, abs=1.5)
        angles.append(np.arctan2(ys[mark].mean() - middle, xs[mark].mean() - middle))
    assert np.ptp(angles) > np.pi  # turned every way, not only a little


def test_mirrored_points_run_the_other_way_across_the_crop():
    from scanner.pieces import mirror_points

    points = np.array([[0.1, 0.8, 0.15, 0.3]], np.float32)
    assert np.allclose(mirror_points(points), [[0.9, 0.8, 0.85, 0.3]])
    assert np.allclose(mirror_points(torch.from_numpy(points)).numpy(), mirror_points(points))
    assert np.allclose(mirror_points(mirror_points(points)), points)


def test_mirrored_training_crops_carry_their_points_across(tmp_path):
    """``--mirror`` flips half of each batch's crops with their points: taught pieces all standing at the left,
    the network learns them at the left or the right alike, on average near the middle (the scan reads every
    crop both ways)."""
    from scanner.onnx_model import DEFAULT_MODELS_DIR
    from scanner.patches import PIECE_CROP
    from scanner.train_pieces import main

    rng = np.random.default_rng(4)
    n = 64
    data = tmp_path / "left.npz"
    np.savez(data, piece_crops=rng.integers(0, 256, (n, PIECE_CROP, PIECE_CROP, 3), dtype=np.uint8),
             piece_kind=np.full(n, 2, np.int64), piece_colour=np.zeros(n, np.int64),
             piece_points=np.tile(np.array([[0.1, 0.8, 0.15, 0.3]], np.float32), (n, 1)))
    crops = rng.uniform(-1, 1, (128, 3, PIECE_CROP, PIECE_CROP)).astype(np.float32)
    base_x = {}
    for name, more in (("plain", []), ("mirror", ["--mirror"])):
        out = tmp_path / f"{name}.onnx"
        assert main(["train", "--data", str(data), "--steps", "60", "--batch", "32", "--lr", "3e-3",
                     "--resume", str(DEFAULT_MODELS_DIR / "pieces.onnx"), *more, "--out", str(out)]) == 0
        base_x[name] = float(OnnxModel(out, threads=1).run(crops)[2][:, 0].mean())
    assert base_x["plain"] < 0.3 and abs(base_x["mirror"] - 0.5) < 0.15, base_x


def test_a_kind_model_is_never_written_over_the_file_of_the_other_layout(tmp_path, capsys):
    """The default ``--out`` is the flat model's file: training the averaged layout there is refused, one line."""
    from scanner.train_piece_kinds import main

    with pytest.raises(SystemExit) as stop:
        main(["train", "--layout", "averaged", "--data", str(tmp_path / "none.npz")])
    assert stop.value.code == 2 and "piece_kinds.onnx is the flat layout's file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["train", "--data", str(tmp_path / "none.npz"), "--out", str(tmp_path / "piece_kinds_fine.onnx")])
    assert "averaged layout's file" in capsys.readouterr().err
