"""Train and measure the close-up piece model (``models/piece_kinds.onnx``): kind (or none) and colour.

The presence model (:mod:`scanner.train_pieces`) finds whether a tile holds a
piece and where its base and top are; this one reads a close-up centred
between them (cut by :mod:`scanner.training` from the photo around the true
points, jittered as the presence model misses them), which generalises far
better than reading kind and colour from the whole tile crop. It also answers
"none": taught on close-ups of windows that hold no piece, cut where the
presence model would centre one (a printed field, a lake, a finger), it gives
the scan a second opinion on whether a piece stands there at all.
``python -m scanner.train_piece_kinds train --data ...``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scanner.onnx_model import OnnxModel
from scanner.patches import CLOSE_UP
from scanner.pieces import COLOUR_NAMES, KINDS_LABEL_SMOOTHING, KINDS_MODEL_FILE, PIECE_KINDS
from scanner.sectors import softmax, to_tensor
from scanner.training import export_onnx, fit, load_fields, stage_main, start_from

def build_model(kinds: int = len(PIECE_KINDS)):
    """A small CNN: 40×40 close-up → kind logits (``kinds`` of them: none, house, settler, runestone) and colour
    logits."""
    from torch import nn

    def conv(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class KindNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*conv(3, 24), nn.MaxPool2d(2), *conv(24, 32), *conv(32, 32),
                                          nn.MaxPool2d(2), *conv(32, 48), nn.MaxPool2d(2), nn.Flatten(),
                                          nn.Linear(48 * (CLOSE_UP // 8) ** 2, 96), nn.ReLU(), nn.Dropout(0.2))
            self.kind = nn.Linear(96, kinds)
            self.colour = nn.Linear(96, len(COLOUR_NAMES))

        def forward(self, x):
            f = self.features(x)
            return self.kind(f), self.colour(f)

    return KindNet()


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
          lr: float = 3e-3) -> None:
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    samples = load_fields(data, "piece_kind", "piece_colour", "piece_close")
    has = with_close_up(samples["piece_close"])
    close_all = samples["piece_close"][has]
    kinds = torch.from_numpy(samples["piece_kind"][has].astype(np.int64))
    colours = torch.from_numpy(samples["piece_colour"][has].astype(np.int64))
    counts = np.bincount(kinds.numpy(), minlength=len(PIECE_KINDS)).tolist()
    print(f"{len(kinds)} close-ups; none, house, settler, rune stone {counts}")
    model = build_model()
    frozen_norms = start_from_kinds(model, resume)
    generator = torch.Generator().manual_seed(seed)
    kind_weights = torch.tensor([1.0, 1.0, 1.0, 3.0])  # rune stones are rare in the renders

    def batches(step):
        idx = rng.integers(0, len(kinds), batch)
        close = close_all[idx]
        flip = rng.random(batch) < 0.5  # pieces look alike mirrored; doubles the views
        close[flip] = close[flip, :, ::-1]
        x = torch.from_numpy(to_tensor(close))
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


def evaluate(data: list[Path], models_dir: Path) -> dict[str, float]:
    """Kind and colour accuracy on held-out pieces, read around their true centres, and how often the close-up
    answers "none" (chance over a half) on a piece and on an empty window."""
    samples = load_fields(data, "piece_kind", "piece_colour", "piece_close")
    has = with_close_up(samples["piece_close"])
    kind_logits, colour_logits = OnnxModel(models_dir / KINDS_MODEL_FILE).run(to_tensor(samples["piece_close"][has]))
    kinds, colours = samples["piece_kind"][has], samples["piece_colour"][has]
    piece, known = kinds > 0, colours >= 0
    none = softmax(kind_logits)[:, 0] > 0.5
    return {"pieces": int(piece.sum()), "empty": int((~piece).sum()),
            "kind_accuracy": float(np.mean(kind_logits[piece, 1:].argmax(1) + 1 == kinds[piece])),
            "colour_accuracy": float(np.mean(colour_logits.argmax(1)[known] == colours[known])),
            "pieces_read_none": float(np.mean(none[piece])), "empty_read_none": float(np.mean(none[~piece]))}


def main(argv: list[str] | None = None) -> int:
    return stage_main("scanner.train_piece_kinds", __doc__, KINDS_MODEL_FILE, train, evaluate, steps=3000,
                      batch=128, argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
