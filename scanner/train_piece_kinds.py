"""Train and measure the close-up piece models (``models/piece_kinds.onnx``, ``models/piece_kinds_fine.onnx``):
kind (or none) and colour.

The presence model (:mod:`scanner.train_pieces`) finds whether a tile holds a
piece and where its base and top are; this one reads a close-up centred
between them (cut by :mod:`scanner.training` from the photo around the true
points, jittered as the presence model misses them), which generalises far
better than reading kind and colour from the whole tile crop. It also answers
"none": taught on close-ups of windows that hold no piece, cut where the
presence model would centre one (a printed field, a lake, a finger), it gives
the scan a second opinion on whether a piece stands there at all.

The scan reads every close-up with two such models and averages them: the
``flat`` layout on 40-pixel close-ups and the wider ``averaged`` layout on the
same window cut at 56 pixels (``python -m scanner.training --close-up 56``),
trained with random turns and scales and fine-tuned upright (models/README.md).
``python -m scanner.train_piece_kinds train --data ...``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scanner.onnx_model import OnnxModel
from scanner.patches import CLOSE_UP
from scanner.pieces import COLOUR_NAMES, FINE_KINDS_MODEL_FILE, KINDS_LABEL_SMOOTHING, KINDS_MODEL_FILE, PIECE_KINDS
from scanner.sectors import softmax, to_tensor
from scanner.training import export_onnx, fit, load_fields, stage_main, start_from

LAYOUTS = ("flat", "averaged")
"""The kind models' layouts (:func:`build_model`)."""
CLOSE_UP_FIELDS = ("piece_kind", "piece_colour", "piece_close")
"""The arrays of a sample file the kind models are trained and measured on."""


def build_model(kinds: int = len(PIECE_KINDS), layout: str = "flat", side: int = CLOSE_UP):
    """A small CNN: a ``side``-pixel close-up → kind logits (``kinds`` of them: none, house, settler, runestone)
    and colour logits.

    ``flat`` (``piece_kinds.onnx``) flattens its last feature map, so every weight knows where in the close-up it
    looks. ``averaged`` (``piece_kinds_fine.onnx``) halves the close-up in its first, learnt layer, so the later
    layers work at half the side on features of the full detail, and averages its features over the close-up, so
    few weights learn where a piece lies: it learns from turned close-ups what the flat layout would need many more
    pieces for.
    """
    from torch import nn

    def conv(cin, cout, kernel=3, stride=1):
        return [nn.Conv2d(cin, cout, kernel, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class KindNet(nn.Module):
        def __init__(self):
            super().__init__()
            if layout == "flat":
                self.features = nn.Sequential(*conv(3, 24), nn.MaxPool2d(2), *conv(24, 32), *conv(32, 32),
                                              nn.MaxPool2d(2), *conv(32, 48), nn.MaxPool2d(2), nn.Flatten(),
                                              nn.Linear(48 * (side // 8) ** 2, 96), nn.ReLU(), nn.Dropout(0.2))
                width = 96
            else:
                self.features = nn.Sequential(*conv(3, 32, kernel=4, stride=2), *conv(32, 48), nn.MaxPool2d(2),
                                              *conv(48, 64), *conv(64, 64), nn.MaxPool2d(2), *conv(64, 96),
                                              *conv(96, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2))
                width = 128
            self.kind = nn.Linear(width, kinds)
            self.colour = nn.Linear(width, len(COLOUR_NAMES))

        def forward(self, x):
            f = self.features(x)
            return self.kind(f), self.colour(f)

    return KindNet()


def turned(x, generator, most_degrees: float, most_rescale: float):
    """A batch of close-ups (torch, n×3×s×s) each turned about its middle by a random angle of at most
    ``most_degrees`` either way and scaled by a random factor within ``most_rescale`` of 1: a piece looks alike
    from every side of the table, and a little nearer or further."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    angle = np.radians(most_degrees) * (2 * torch.rand(n, generator=generator) - 1)
    scale = 1.0 + most_rescale * (2 * torch.rand(n, generator=generator) - 1)
    cos, sin = torch.cos(angle) / scale, torch.sin(angle) / scale
    theta = torch.stack([torch.stack([cos, -sin, torch.zeros(n)], 1), torch.stack([sin, cos, torch.zeros(n)], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)


def with_close_up(piece_close: np.ndarray) -> np.ndarray:
    """Which samples have a close-up: every piece, and the empty windows of files cut since the close-up
    answers "none" (older files' are black)."""
    return piece_close.reshape(len(piece_close), -1).max(axis=1) > 0


def start_from_kinds(model, resume: Path | None) -> bool:
    """:func:`~scanner.training.start_from` that also takes a model exported before the close-up answered
    "none" (three kind logits): its kind rows move to house, settler and rune stone, and "none" starts at
    zero weight and a bias under the others', so the resumed model first reads as it did."""
    import onnx
    import torch

    if resume is None or onnx.load(str(resume)).graph.output[0].type.tensor_type.shape.dim[1].dim_value == len(
            PIECE_KINDS):
        return start_from(model, resume)
    older = build_model(len(PIECE_KINDS) - 1)
    frozen = start_from(older, resume)
    state = model.state_dict()
    with torch.no_grad():
        for name, value in older.state_dict().items():
            if name.startswith("kind."):
                state[name][1:] = value
                state[name][0] = 0.0 if name == "kind.weight" else value.min() - 2.0
            else:
                state[name].copy_(value)
    return frozen


def train(data: list[Path], out: Path, steps: int, batch: int, seed: int, resume: Path | None = None,
          lr: float = 3e-3, layout: str = "flat", turn: float = 0.0, rescale: float = 0.0) -> None:
    """Train a kind model of ``layout`` on the close-ups of ``data`` (at their side), each mirrored at random and,
    where ``turn`` or ``rescale`` is given, turned and scaled at random (:func:`turned`)."""
    shipped_layout = {KINDS_MODEL_FILE: "flat", FINE_KINDS_MODEL_FILE: "averaged"}.get(Path(out).name, layout)
    if shipped_layout != layout:  # the default --out is the flat model's file: never overwrite it with the other
        raise ValueError(f"{Path(out).name} is the {shipped_layout} layout's file: give --layout {shipped_layout} or "
                         "--out another file")
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    samples = load_fields(data, *CLOSE_UP_FIELDS)
    has = with_close_up(samples["piece_close"])
    close_all = samples["piece_close"][has]
    kinds = torch.from_numpy(samples["piece_kind"][has].astype(np.int64))
    colours = torch.from_numpy(samples["piece_colour"][has].astype(np.int64))
    counts = np.bincount(kinds.numpy(), minlength=len(PIECE_KINDS)).tolist()
    print(f"{len(kinds)} close-ups; none, house, settler, rune stone {counts}")
    model = build_model(layout=layout, side=close_all.shape[1])
    frozen_norms = start_from_kinds(model, resume)
    generator = torch.Generator().manual_seed(seed)
    kind_weights = torch.tensor([1.0, 1.0, 1.0, 3.0])  # rune stones are rare in the renders

    def batches(step):
        idx = rng.integers(0, len(kinds), batch)
        close = close_all[idx]
        flip = rng.random(batch) < 0.5  # pieces look alike mirrored; doubles the views
        close[flip] = close[flip, :, ::-1]
        x = torch.from_numpy(to_tensor(close))
        if turn or rescale:
            x = turned(x, generator, turn, rescale)
        x = x * (1.0 + 0.3 * (torch.rand(batch, 1, 1, 1, generator=generator) - 0.5))  # brightness, not hue
        kind_logits, colour_logits = model(x)
        loss = F.cross_entropy(kind_logits, kinds[idx], weight=kind_weights, label_smoothing=KINDS_LABEL_SMOOTHING)
        known = colours[idx] >= 0
        if known.any():
            loss = loss + F.cross_entropy(colour_logits[known], colours[idx][known],
                                          label_smoothing=KINDS_LABEL_SMOOTHING)
        return loss

    fit(model, batches, steps, lr=lr, frozen_norms=frozen_norms)
    export_onnx(model, torch.from_numpy(to_tensor(close_all[:2])), out, ["kind", "colour"])
    print(f"wrote {out}")


def read_validation(samples: dict[str, np.ndarray], models: dict[int, OnnxModel]) -> dict[str, np.ndarray]:
    """Kind and colour probabilities of the close-ups of ``samples`` (:data:`CLOSE_UP_FIELDS` of files of one
    side) read by the model of that input side among ``models`` (side → model), with their true kinds and
    colours."""
    has = with_close_up(samples["piece_close"])
    side = samples["piece_close"].shape[1]
    if side not in models:
        raise ValueError(f"no kind model reads {side}-pixel close-ups (models read {sorted(models)})")
    kind_logits, colour_logits = models[side].run(to_tensor(samples["piece_close"][has]))
    return {"kind": softmax(kind_logits), "colour": softmax(colour_logits), "true_kind": samples["piece_kind"][has],
            "true_colour": samples["piece_colour"][has]}


def validation_scores(reading: dict[str, np.ndarray]) -> dict[str, float]:
    """Kind and colour accuracy on the pieces of a :func:`read_validation`, and how often the close-up answers
    "none" (chance over a half) on a piece and on an empty window."""
    kinds, colours = reading["true_kind"], reading["true_colour"]
    piece, known = kinds > 0, colours >= 0
    none = reading["kind"][:, 0] > 0.5
    return {"pieces": int(piece.sum()), "empty": int((~piece).sum()),
            "kind_accuracy": float(np.mean(reading["kind"][piece, 1:].argmax(1) + 1 == kinds[piece])),
            "colour_accuracy": float(np.mean(reading["colour"].argmax(1)[known] == colours[known])),
            "pieces_read_none": float(np.mean(none[piece])), "empty_read_none": float(np.mean(none[~piece]))}


def evaluate(data: list[Path], models_dir: Path) -> dict[str, float]:
    """:func:`validation_scores` of held-out pieces, read around their true centres, by each kind model on the files
    cut at its input side; given files of both sides cut from the same renders (``--close-up``: the same pieces
    in the same order), also of both models' readings averaged, as the scan reads."""
    models = {m.input_side: m for m in (OnnxModel(models_dir / f) for f in (KINDS_MODEL_FILE, FINE_KINDS_MODEL_FILE))}
    by_side: dict[int, list[dict[str, np.ndarray]]] = {}
    for path in data:  # each file read once, grouped by the side of its close-ups
        samples = load_fields([path], *CLOSE_UP_FIELDS)
        by_side.setdefault(samples["piece_close"].shape[1], []).append(samples)
    readings = {side: read_validation({f: np.concatenate([part[f] for part in parts]) for f in CLOSE_UP_FIELDS},
                                      models)
                for side, parts in sorted(by_side.items())}
    scores = {f"{name} ({side} px)": value for side, reading in readings.items()
              for name, value in validation_scores(reading).items()}
    if len(readings) == len(models):
        first, *others = readings.values()
        if any(not np.array_equal(r[f], first[f]) for r in others for f in ("true_kind", "true_colour")):
            raise ValueError("the files of each side hold different pieces: cut them from the same renders")
        pair = {f: np.mean([r[f] for r in readings.values()], axis=0) for f in ("kind", "colour")}
        scores.update({f"{name} (pair)": value
                       for name, value in validation_scores({**first, **pair}).items()})
    return scores


def main(argv: list[str] | None = None) -> int:
    return stage_main("scanner.train_piece_kinds", __doc__, KINDS_MODEL_FILE, train, evaluate, steps=3000,
                      batch=128, argv=argv,
                      train_options={"--layout": {"choices": LAYOUTS, "default": "flat",
                                                  "help": "the network's layout (default flat: build_model)"},
                                     "--turn": {"type": float, "default": 0.0, "metavar": "DEGREES",
                                                "help": "turn each close-up at random by at most this much"},
                                     "--rescale": {"type": float, "default": 0.0, "metavar": "SHARE",
                                                   "help": "scale each close-up at random by 1 ± at most this share"}})


if __name__ == "__main__":
    raise SystemExit(main())
