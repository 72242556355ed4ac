"""Train and measure the piece model (``models/pieces.onnx``).

``python -m scanner.train_pieces train --data out/reading-data.npz`` trains on
piece crops cut by :mod:`scanner.training` (rendered photos only);
``evaluate --data ...`` measures kind and colour accuracy on other seeds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scanner.onnx_model import OnnxModel
from scanner.patches import PIECE_CROP
from scanner.pieces import (COLOUR_NAMES, MIN_PIECE_SEEN, MODEL_FILE, PIECE_KINDS, mirror_points,
                            presence_of_readings)
from scanner.sectors import softmax, to_tensor
from scanner.training import ReadingSamples, export_onnx, fit, load_fields, stage_main, start_from


def build_model():
    """A small CNN: 64×64 piece crop → kind logits, colour logits, base and top points (crop units)."""
    import torch
    from torch import nn

    def conv(cin, cout, stride=1):
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    class PieceNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(*conv(3, 16, stride=2), *conv(16, 24), nn.MaxPool2d(2),
                                          *conv(24, 48), nn.MaxPool2d(2), *conv(48, 64), nn.MaxPool2d(2),
                                          nn.Flatten(), nn.Linear(64 * (PIECE_CROP // 16) ** 2, 128), nn.ReLU(),
                                          nn.Dropout(0.1))
            self.kind = nn.Linear(128, len(PIECE_KINDS))
            self.colour = nn.Linear(128, len(COLOUR_NAMES))
            self.points = nn.Linear(128, 4)

        def forward(self, x):
            f = self.features(x)
            return self.kind(f), self.colour(f), torch.sigmoid(self.points(f))

    return PieceNet()


def train(data: list[Path], out: Path, steps: int, batch: int, seed: int, resume: Path | None = None,
          lr: float = 3e-3, mirror: bool = False) -> None:
    """Train (or fine-tune from ``resume``) and export the piece model.

    ``mirror``: half of every batch's crops are mirrored left to right with their base and top points, as the
    scan reads every crop both ways (:func:`scanner.pieces.presence_both_ways`).
    """
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    samples = load_fields(data, "piece_crops", "piece_kind", "piece_colour", "piece_points")
    x_all = torch.from_numpy(samples["piece_crops"])  # uint8 and channels last until batched
    kinds = torch.from_numpy(samples["piece_kind"].astype(np.int64))
    colours = torch.from_numpy(samples["piece_colour"].astype(np.int64))
    points = torch.from_numpy(samples["piece_points"]).clamp(0.0, 1.0)
    known = samples["piece_colour"][samples["piece_colour"] >= 0]
    print(f"{len(kinds)} crops; kinds {np.bincount(samples['piece_kind'], minlength=4).tolist()}; colours "
          f"{np.bincount(known, minlength=len(COLOUR_NAMES)).tolist()}")
    model = build_model()
    frozen_norms = start_from(model, resume)
    generator = torch.Generator().manual_seed(seed)

    def batches(step):
        idx = torch.randint(0, len(kinds), (batch,), generator=generator)
        # Colour is the whole point of the colour head: jitter brightness only, never the hue.
        x = x_all[idx].permute(0, 3, 1, 2).float() / 127.5 - 1.0
        scale = 1.0 + 0.3 * (torch.rand(batch, 1, 1, 1, generator=generator) - 0.5)
        target_points = points[idx]
        if mirror:
            flip = torch.rand(batch, generator=generator) < 0.5
            x[flip] = x[flip].flip(-1)
            target_points = torch.where(flip[:, None], mirror_points(target_points), target_points)
        kind_logits, colour_logits, pts = model(x * scale)
        loss = F.cross_entropy(kind_logits, kinds[idx], label_smoothing=0.01)
        has_colour = colours[idx] >= 0
        if has_colour.any():
            loss = loss + F.cross_entropy(colour_logits[has_colour], colours[idx][has_colour], label_smoothing=0.01)
        has_piece = kinds[idx] > 0
        if has_piece.any():
            loss = loss + 20.0 * F.smooth_l1_loss(pts[has_piece], target_points[has_piece], beta=0.02)
        return loss

    fit(model, batches, steps, lr=lr, frozen_norms=frozen_norms)
    export_onnx(model, torch.from_numpy(to_tensor(samples["piece_crops"][:2])), out, ["kind", "colour", "points"])
    print(f"wrote {out}")


def evaluate(data: list[Path], models_dir: Path) -> dict[str, float]:
    """Kind and colour accuracy, and base point error (in tile radii), on held-out crops; and, read as the scan
    reads them (each crop both ways, :func:`scanner.pieces.presence_both_ways`), the share of pieces seen — of all,
    of the rune stones and of each player colour — and of empty crops read as holding one."""
    samples = ReadingSamples.load_all(data)
    model = OnnxModel(models_dir / MODEL_FILE)
    kind_logits, colour_logits, pts, chances = [], [], [], []
    for start in range(0, len(samples.piece_kind), 512):
        crops = to_tensor(samples.piece_crops[start:start + 512])
        reading = model.run(crops)
        k, c, p = reading
        kind_logits.append(k), colour_logits.append(c), pts.append(p)
        chances.append(presence_of_readings(reading, model.run(crops[..., ::-1]))[0])
    kind_probs = softmax(np.concatenate(kind_logits))
    colour = np.concatenate(colour_logits).argmax(axis=1)
    pts = np.concatenate(pts)
    truth = samples.piece_kind
    predicted = kind_probs.argmax(axis=1)
    has_piece, said_piece = truth > 0, predicted > 0
    has_colour = samples.piece_colour >= 0
    both = has_piece & said_piece
    # Crop units → tile radii: the crop is 3 tile radii wide.
    base_error = np.linalg.norm(pts[both, :2] - samples.piece_points[both, :2], axis=1) * 3.0
    sure = kind_probs.max(axis=1) >= 0.99
    return {
        "tiles": int(len(truth)), "pieces": int(has_piece.sum()),
        "kind_accuracy": float(np.mean(predicted == truth)),
        "piece_recall": float(np.mean(said_piece[has_piece])) if has_piece.any() else 1.0,
        "piece_precision": float(np.mean(has_piece[said_piece])) if said_piece.any() else 1.0,
        "kind_accuracy_on_pieces": float(np.mean(predicted[has_piece] == truth[has_piece])),
        "colour_accuracy": float(np.mean(colour[has_colour] == samples.piece_colour[has_colour])),
        "wrong_kind_among_conf>=0.99": float(np.mean(predicted[sure] != truth[sure])) if sure.any() else 0.0,
        "base_error_median_radii": float(np.median(base_error)) if len(base_error) else 0.0,
        "base_error_p99_radii": float(np.percentile(base_error, 99)) if len(base_error) else 0.0,
        **seen_shares(np.concatenate(chances) >= MIN_PIECE_SEEN, truth, samples.piece_colour),
    }


def seen_shares(seen: np.ndarray, kinds: np.ndarray, colours: np.ndarray) -> dict[str, float]:
    """Shares of crops read as holding a piece (``seen``, bool): ``seen_pieces`` of the crops holding one,
    ``seen_rune_stones`` and ``seen_NAME`` per player colour among them (where there are any), and
    ``seen_empty`` of the crops holding none. The lightest paints and the rune stones are where the presence
    model misses most (models/README.md), and an overall recall hides them."""
    groups = {"pieces": kinds > 0, "rune_stones": kinds == PIECE_KINDS.index("runestone")}
    groups.update((name, (kinds > 0) & (colours == n)) for n, name in enumerate(COLOUR_NAMES))
    groups["empty"] = kinds == 0
    return {f"seen_{name}": float(np.mean(seen[members])) for name, members in groups.items() if members.any()}


def main(argv: list[str] | None = None) -> int:
    mirror = {"action": "store_true", "help": "mirror half of every batch's crops left to right, with their points"}
    return stage_main("scanner.train_pieces", __doc__, MODEL_FILE, train, evaluate, steps=3000, batch=64, argv=argv,
                      train_options={"--mirror": mirror})


if __name__ == "__main__":
    raise SystemExit(main())
