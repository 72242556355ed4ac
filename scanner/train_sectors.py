"""Train and measure the sector classifier (``models/sectors.onnx``).

``python -m scanner.train_sectors train --data out/reading-data.npz`` trains on
samples cut by :mod:`scanner.training` (rendered photos only) and writes the
ONNX model; ``evaluate --data ...`` measures accuracy and calibration on
samples from other seeds.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fjords.geometry import SECTORS, TERRAINS
from scanner.sectors import MODEL_FILE, SECTOR_WINDOW, SectorClassifier, sector_windows, to_tensor
from scanner.training import (UNLABELLED, ReadingSamples, export_onnx, fit, load_fields, photometric_jitter, stage_main,
                              start_from)


KEEP_TEMPERATURE = 2.0  # softens both answers so the kept model's runners-up count too (Hinton et al. 2015)


def build_model():
    """A small CNN: 24×24 window of sector 0 → logits of S, M, P and "no tile top"."""
    from torch import nn

    def conv(cin, cout):
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

    return nn.Sequential(*conv(3, 16), nn.MaxPool2d(2),
                         *conv(16, 32), *conv(32, 32), nn.MaxPool2d(2),
                         *conv(32, 48), *conv(48, 48), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(48 * (SECTOR_WINDOW // 8) ** 2, 64), nn.ReLU(), nn.Dropout(0.1),
                         nn.Linear(64, len(TERRAINS) + 1))


def shift_windows(x, sigma: float, generator):
    """Move each window of a batch (N×C×H×W, torch) by N(0, ``sigma``) pixels in x and y, edges repeated.

    A sector window cut at corners a lattice fit placed slightly off.
    """
    import torch
    from torch.nn import functional

    n, _, height, width = x.shape
    move = sigma * torch.randn(n, 2, generator=generator)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = theta[:, 1, 1] = 1.0
    theta[:, 0, 2] = 2.0 * move[:, 0] / width  # affine_grid's units: half the window per 1
    theta[:, 1, 2] = 2.0 * move[:, 1] / height
    grid = functional.affine_grid(theta, list(x.shape), align_corners=False)
    return functional.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)


def cover_draws(cover: np.ndarray, weight: float) -> np.ndarray:
    """The cumulative chance of drawing each window, a window of ``cover`` (its sector's share under a piece's box)
    drawn ``1 + (weight − 1)·cover`` times as often as one no piece covers; a uniform draw ``u`` picks the first
    window whose value is at least ``u`` (``searchsorted``)."""
    draws = np.cumsum(1.0 + (weight - 1.0) * np.asarray(cover, np.float64))
    return draws / draws[-1]


def train(data: list[Path], out: Path, steps: int, batch: int, seed: int, resume: Path | None = None,
          lr: float = 3e-3, keep: float = 0.0, shift: float = 0.0, cover_weight: float = 1.0,
          keep_only: list[Path] | None = None) -> None:
    """Train (or with ``resume`` fine-tune) the network and export it to ``out``.

    ``keep`` > 0 (with ``resume``) adds to every batch's loss the divergence of the network's answers from the
    resumed model's, both softened by :data:`KEEP_TEMPERATURE`, times ``keep``: learning without forgetting
    (Li & Hoiem 2016). A fine-tune on a few hundred renders of a new look otherwise drifts on the looks the
    shipped model learnt from far more renders than are at hand.

    ``shift`` > 0 moves every training window by that many window pixels (standard deviation, x and y) before
    the network reads it; the kept answers are the resumed model's on the window where it was, so the network
    learns to answer on a misplaced window as the resumed model does on the right one.

    ``cover_weight`` W draws a window ``1 + (W − 1)·cover`` times as often, ``cover`` the share of its sector a
    piece's box covers in the photo (:func:`scanner.training.sector_cover`; 0 in files cut before it was kept):
    most sector errors on photos wholly in view lie under pieces. Tried in the fifty-seventh session, not shipped
    (``models/README.md``).

    ``keep_only`` sample files (with ``keep``) teach only the kept answers, their labels ignored: a network taught
    a new print on ``data`` keeps reading the prints of these files as the resumed model does.
    """
    if keep_only and not keep:
        raise ValueError("--keep-only needs --keep: those windows teach only the kept answers")
    import copy

    import torch

    torch.manual_seed(seed)
    # Weight 1 draws uniformly, as before the weight was an option: the same command makes the same model.
    fields = ("hex_patches", "sector_labels") + (("sector_cover",) if cover_weight != 1.0 else ())
    samples = load_fields(data, *fields)
    if keep_only:
        kept_only = load_fields(keep_only, *fields)
        kept_only["sector_labels"] = np.full_like(kept_only["sector_labels"], UNLABELLED)
        samples = {name: np.concatenate([samples[name], kept_only[name]]) for name in samples}
    # Every tile gives twelve windows, one per sector, each labelled with its own sector's terrain.
    windows = sector_windows(samples.pop("hex_patches")).reshape(-1, SECTOR_WINDOW, SECTOR_WINDOW, 3)
    labels = torch.from_numpy(samples["sector_labels"].reshape(-1).astype(np.int64))
    x_all = torch.from_numpy(windows)  # uint8 and channels last until batched: no second copy in memory
    print(f"{len(labels)} sector windows from {len(samples['sector_labels'])} tiles; "
          f"S/M/P/none = {np.bincount(labels.numpy()[labels.numpy() >= 0], minlength=4).tolist()}, "
          f"unlabelled {int((labels < 0).sum())}")
    draw = (torch.from_numpy(cover_draws(samples.pop("sector_cover").reshape(-1), cover_weight))
            if cover_weight != 1.0 else None)
    model = build_model()
    frozen_norms = start_from(model, resume)
    teacher = copy.deepcopy(model).eval() if keep else None
    generator = torch.Generator().manual_seed(seed)
    # A sector partly under a hand (training.UNLABELLED) is neither its terrain nor none: it teaches nothing.
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.01, ignore_index=UNLABELLED)

    def batches(step):
        if draw is None:
            idx = torch.randint(0, len(labels), (batch,), generator=generator)
        else:
            idx = torch.searchsorted(draw, torch.rand(batch, generator=generator, dtype=torch.float64))
            idx = idx.clamp_(max=len(labels) - 1)
        x = photometric_jitter(x_all[idx].permute(0, 3, 1, 2).float() / 127.5 - 1.0, generator)
        logits = model(shift_windows(x, shift, generator) if shift else x)
        loss = loss_fn(logits, labels[idx])
        if teacher is None:
            return loss
        with torch.no_grad():
            kept = torch.softmax(teacher(x) / KEEP_TEMPERATURE, dim=1)
        drift = torch.nn.functional.kl_div(torch.log_softmax(logits / KEEP_TEMPERATURE, dim=1), kept,
                                           reduction="batchmean")
        return loss + keep * KEEP_TEMPERATURE ** 2 * drift

    fit(model, batches, steps, lr=lr, frozen_norms=frozen_norms)
    export_onnx(model, torch.from_numpy(to_tensor(windows[:2])), out, ["logits"])
    print(f"wrote {out}")


def evaluate(data: list[Path], models_dir: Path) -> dict[str, float]:
    """Per-sector accuracy on tile tops, how right the confident answers are, and "no tile" detection."""
    samples = ReadingSamples.load_all(data)
    probs, readable = SectorClassifier(models_dir).predict_patches(samples.hex_patches)
    labels = samples.sector_labels
    tiles = (labels < len(TERRAINS)).all(axis=1)
    result = {"sectors": int(tiles.sum() * SECTORS)}
    if (~tiles).any():
        result["no_tile_windows_unreadable"] = float(np.mean(readable[~tiles] < 0.5))
    probs, labels, readable = probs[tiles], labels[tiles], readable[tiles]
    best = (probs.max(axis=-1) * readable).ravel()
    wrong = probs.argmax(axis=-1).ravel() != labels.ravel()
    result.update(accuracy=float(1 - wrong.mean()), tiles_exact=float(np.mean(~wrong.reshape(-1, SECTORS).any(1))),
                  tile_tops_unreadable=float(np.mean(readable < 0.5)))
    for threshold in (0.9, 0.99, 0.999):
        sure = best >= threshold
        result[f"share_conf>={threshold}"] = float(sure.mean())
        result[f"wrong_among_conf>={threshold}"] = float(wrong[sure].mean()) if sure.any() else 0.0
        result[f"wrong_flagged_below_{threshold}"] = float((~sure[wrong]).mean()) if wrong.any() else 1.0
    return result


def main(argv: list[str] | None = None) -> int:
    shift = {"type": float, "default": 0.0, "metavar": "PX",
             "help": "move every training window by this many pixels (standard deviation; default 0)"}
    cover = {"type": float, "default": 1.0, "metavar": "W", "dest": "cover_weight",
             "help": "draw windows a piece covers up to W times as often (default 1)"}
    keep_only = {"type": Path, "nargs": "+", "metavar": "DATA", "dest": "keep_only",
                 "help": "sample files whose windows teach only the kept answers (with --keep; labels ignored)"}
    return stage_main("scanner.train_sectors", __doc__, MODEL_FILE, train, evaluate, steps=5000, batch=128,
                      keeps_answers=True, argv=argv,
                      train_options={"--shift": shift, "--cover-weight": cover, "--keep-only": keep_only})


if __name__ == "__main__":
    raise SystemExit(main())
