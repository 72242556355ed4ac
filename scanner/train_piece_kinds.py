"""Train and measure the close-up piece model (``models/piece_kinds.onnx``): kind and colour.

The presence model (:mod:`scanner.train_pieces`) finds whether a tile holds a
piece and where its base and top are; this one reads a close-up centred
between them (cut by :mod:`scanner.training` from the photo around the true
points, jittered as the presence model misses them), which generalises far
better than reading kind and colour from the whole tile crop.
``python -m scanner.train_piece_kinds train --data ...``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scanner.onnx_model import OnnxModel
from scanner.patches import CLOSE_UP
from scanner.pieces import COLOUR_NAMES, KINDS_MODEL_FILE, PIECE_KINDS
from scanner.sectors import to_tensor
from scanner.training import export_onnx, fit, load_fields, stage_main, start_from

def build_model():
    """A small CNN: 40×40 close-up → kind logits (house, settler, runestone) and colour logits."""
    import torch
    from torch import nn

    def conv(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class KindNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*conv(3, 24), nn.MaxPool2d(2), *conv(24, 32), *conv(32, 32),
                                          nn.MaxPool2d(2), *conv(32, 48), nn.MaxPool2d(2), nn.Flatten(),
                                          nn.Linear(48 * (CLOSE_UP // 8) ** 2, 96), nn.ReLU(), nn.Dropout(0.2))
            self.kind = nn.Linear(96, len(PIECE_KINDS) - 1)
            self.colour = nn.Linear(96, len(COLOUR_NAMES))

        def forward(self, x):
            f = self.features(x)
            return self.kind(f), self.colour(f)

    return KindNet()


def with_close_up(piece_kind: np.ndarray, piece_close: np.ndarray) -> np.ndarray:
    """Which samples hold a piece with its close-up (older sample files have none)."""
    return (piece_kind > 0) & (piece_close.reshape(len(piece_kind), -1).max(axis=1) > 0)


def train(data: list[Path], out: Path, steps: int, batch: int, seed: int, resume: Path | None = None,
          lr: float = 3e-3) -> None:
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    samples = load_fields(data, "piece_kind", "piece_colour", "piece_close")
    has = with_close_up(samples["piece_kind"], samples["piece_close"])
    close_all = samples["piece_close"][has]
    kinds = torch.from_numpy(samples["piece_kind"][has].astype(np.int64) - 1)
    colours = torch.from_numpy(samples["piece_colour"][has].astype(np.int64))
    print(f"{len(kinds)} pieces; kinds {np.bincount(kinds.numpy(), minlength=3).tolist()}")
    model = build_model()
    frozen_norms = start_from(model, resume)
    generator = torch.Generator().manual_seed(seed)
    kind_weights = torch.tensor([1.0, 1.0, 3.0])  # rune stones are rare in the renders

    def batches(step):
        idx = rng.integers(0, len(kinds), batch)
        close = close_all[idx]
        flip = rng.random(batch) < 0.5  # pieces look alike mirrored; doubles the views
        close[flip] = close[flip, :, ::-1]
        x = torch.from_numpy(to_tensor(close))
        x = x * (1.0 + 0.3 * (torch.rand(batch, 1, 1, 1, generator=generator) - 0.5))  # brightness, not hue
        kind_logits, colour_logits = model(x)
        loss = F.cross_entropy(kind_logits, kinds[idx], weight=kind_weights, label_smoothing=0.02)
        known = colours[idx] >= 0
        if known.any():
            loss = loss + F.cross_entropy(colour_logits[known], colours[idx][known], label_smoothing=0.02)
        return loss

    fit(model, batches, steps, lr=lr, frozen_norms=frozen_norms)
    export_onnx(model, torch.from_numpy(to_tensor(close_all[:2])), out, ["kind", "colour"])
    print(f"wrote {out}")


def evaluate(data: list[Path], models_dir: Path) -> dict[str, float]:
    """Kind and colour accuracy on held-out pieces, read around their true centres."""
    samples = load_fields(data, "piece_kind", "piece_colour", "piece_close")
    has = with_close_up(samples["piece_kind"], samples["piece_close"])
    kind_logits, colour_logits = OnnxModel(models_dir / KINDS_MODEL_FILE).run(to_tensor(samples["piece_close"][has]))
    kinds = samples["piece_kind"][has] - 1
    colours = samples["piece_colour"][has]
    known = colours >= 0
    return {"pieces": int(has.sum()), "kind_accuracy": float(np.mean(kind_logits.argmax(1) == kinds)),
            "colour_accuracy": float(np.mean(colour_logits.argmax(1)[known] == colours[known]))}


def main(argv: list[str] | None = None) -> int:
    return stage_main("scanner.train_piece_kinds", __doc__, KINDS_MODEL_FILE, train, evaluate, steps=3000,
                      batch=128, argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
