"""Train and measure the piece spot model (``models/piece_spots.onnx``).

The presence model answers one piece per tile: where two pieces share a tile
its base and top points fall between them. The spot model instead draws a
heat map of where pieces stand on the tile (CenterNet-style: a peak at each
piece's base, and at the peak the base's place within its cell and the vector
from base to top), so it can count them.

``python -m scanner.train_piece_spots train --data out/read-f.npz out/crowd-a.npz``
trains on piece crops cut by :mod:`scanner.training`; files made with
``--crowd`` hold tiles that carry two pieces. ``evaluate --data ...`` counts,
per crop, how often it sees the right number of pieces. The same network,
fine-tuned on bold prints (``--resume models/piece_spots.onnx --out
models/piece_spots_doubted.onnx``), reads the tiles the presence model doubts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from scanner.onnx_model import OnnxModel
from scanner.patches import PIECE_CROP
from scanner.pieces import SPOT_GRID, SPOTS_MODEL_FILE, count_spots
from scanner.sectors import to_tensor
from scanner.training import ReadingSamples, export_onnx, fit, photometric_jitter, stage_main, start_from

SPOT_SIGMA = 0.8
"""Spread of a target peak, in heat-map cells."""
CROWDED_SHARE = 0.25
"""Share of every training batch drawn from crops of tiles that hold two pieces (they are rare)."""


def build_model():
    """A small fully convolutional net: 64×64 crop (+ its pixel coordinates) → 16×16 heat map and 4 regressions."""
    import torch
    from torch import nn

    def conv(cin, cout, stride=1, dilation=1):
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation, dilation=dilation, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]

    class SpotNet(nn.Module):
        def __init__(self):
            super().__init__()
            # Where the tile is follows from where a pixel is in the crop: give the net the coordinates.
            ys, xs = torch.meshgrid(torch.linspace(-1, 1, PIECE_CROP), torch.linspace(-1, 1, PIECE_CROP),
                                    indexing="ij")
            self.register_buffer("coords", torch.stack([xs, ys])[None])
            self.features = nn.Sequential(*conv(5, 24, stride=2), *conv(24, 32), *conv(32, 48, stride=2),
                                          *conv(48, 64, dilation=2), *conv(64, 64, dilation=4), *conv(64, 64))
            self.heat = nn.Conv2d(64, 1, 1)
            self.regress = nn.Conv2d(64, 4, 1)

        def forward(self, x):
            f = self.features(torch.cat([x, self.coords.expand(x.shape[0], -1, -1, -1)], dim=1))
            return self.heat(f), self.regress(f)

    return SpotNet()


def spot_labels(samples: ReadingSamples) -> list[np.ndarray]:
    """Per crop, the (k, 4) base and top points (crop units) of every piece standing on the tile."""
    labels = []
    for kind, first, second in zip(samples.piece_kind, samples.piece_points, samples.second_points):
        points = [first] if kind > 0 else []
        if second[0] >= 0:
            points.append(second)
        labels.append(np.clip(np.array(points, np.float32).reshape(-1, 4), 0.0, 1.0))
    return labels


def spot_targets(labels: list[np.ndarray], flip: np.ndarray):
    """Heat-map targets (n, 1, G, G), peak masks and regression targets (n, 4, G, G) of a batch."""
    n, g = len(labels), SPOT_GRID
    heat = np.zeros((n, 1, g, g), np.float32)
    peak = np.zeros((n, 1, g, g), np.float32)
    regress = np.zeros((n, 4, g, g), np.float32)
    centres = np.arange(g, dtype=np.float32)
    for i, points in enumerate(labels):
        for base_x, base_y, top_x, top_y in points:
            if flip[i]:
                base_x, top_x = 1.0 - base_x, 1.0 - top_x
            u, v = base_x * g - 0.5, base_y * g - 0.5  # cell coordinates
            cx, cy = int(np.clip(np.floor(u + 0.5), 0, g - 1)), int(np.clip(np.floor(v + 0.5), 0, g - 1))
            bump = np.exp(-((centres[None, :] - u) ** 2 + (centres[:, None] - v) ** 2) / (2 * SPOT_SIGMA ** 2))
            heat[i, 0] = np.maximum(heat[i, 0], bump)
            heat[i, 0, cy, cx] = 1.0
            peak[i, 0, cy, cx] = 1.0
            regress[i, :, cy, cx] = (u - cx, v - cy, top_x - base_x, top_y - base_y)
    return heat, peak, regress


def train(data: list[Path], out: Path, steps: int, batch: int, seed: int, resume: Path | None = None,
          lr: float = 3e-3) -> None:
    import torch

    torch.manual_seed(seed)
    samples = ReadingSamples.load_all(data)
    labels = spot_labels(samples)
    counts = np.array([len(p) for p in labels])
    crowded = np.flatnonzero(counts >= 2)
    print(f"{len(labels)} crops; pieces per crop {np.bincount(counts).tolist()}")
    if len(crowded) == 0:
        raise SystemExit("no crop holds two pieces: add data made with python -m scanner.training --crowd N")
    x_all = torch.from_numpy(np.ascontiguousarray(samples.piece_crops.transpose(0, 3, 1, 2)))  # uint8
    model = build_model()
    frozen_norms = start_from(model, resume)
    generator = torch.Generator().manual_seed(seed)
    rng = np.random.default_rng(seed)
    n_crowded = int(round(batch * CROWDED_SHARE))

    def batches(step):
        idx = np.concatenate([rng.integers(0, len(labels), batch - n_crowded), rng.choice(crowded, n_crowded)])
        flip = rng.random(batch) < 0.5  # a pointy-top tile is its own mirror image left to right
        x = x_all[idx].float() / 127.5 - 1.0
        x = torch.where(torch.from_numpy(flip)[:, None, None, None], x.flip(-1), x)
        heat_t, peak_t, regress_t = (torch.from_numpy(a) for a in spot_targets([labels[i] for i in idx], flip))
        heat_logits, regress = model(photometric_jitter(x, generator))
        p = torch.sigmoid(heat_logits).clamp(1e-4, 1 - 1e-4)
        # CenterNet's focal loss: peaks pulled to 1, the rest to 0, less so near a peak.
        positive = peak_t * (1 - p) ** 2 * torch.log(p)
        negative = (1 - peak_t) * (1 - heat_t) ** 4 * p ** 2 * torch.log(1 - p)
        n_peaks = peak_t.sum().clamp(min=1.0)
        loss = -(positive.sum() + negative.sum()) / n_peaks
        return loss + (peak_t * (regress - regress_t).abs()).sum() / n_peaks

    fit(model, batches, steps, lr=lr, frozen_norms=frozen_norms)
    export_onnx(model, torch.from_numpy(to_tensor(samples.piece_crops[:2])), out, ["heat", "regress"])
    print(f"wrote {out}")


def evaluate(data: list[Path], models_dir: Path) -> dict[str, float]:
    """Per crop: how often the spot model counts the pieces standing on the tile right, by true count."""
    samples = ReadingSamples.load_all(data)
    model = OnnxModel(models_dir / SPOTS_MODEL_FILE)
    truth = np.array([len(p) for p in spot_labels(samples)])
    seen = []
    for start in range(0, len(truth), 512):
        heat, regress = model.run(to_tensor(samples.piece_crops[start:start + 512]))
        seen.extend(count_spots(heat))
    seen = np.array(seen)
    report: dict[str, float] = {"crops": float(len(truth))}
    for k in range(3):
        mask = truth == k
        if mask.any():
            report[f"truth {k}: crops"] = float(mask.sum())
            report[f"truth {k}: counted right"] = float(np.mean(seen[mask] == k))
            report[f"truth {k}: counted 2+"] = float(np.mean(seen[mask] >= 2))
    return report


def main(argv: list[str] | None = None) -> int:
    return stage_main("scanner.train_piece_spots", __doc__, SPOTS_MODEL_FILE, train, evaluate, steps=6000, batch=64,
                      argv=argv)


if __name__ == "__main__":
    raise SystemExit(main())
