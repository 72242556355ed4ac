"""Train the tile-top network of :mod:`scanner.locate` on rendered photos.

The network sees the photo shrunk to :data:`scanner.locate.WORK_SIDE` pixels
on its long side and predicts, at half that resolution, two maps: the
probability that a pixel is the top face of a tile, and a "centre cone" that
is 1 at each tile's centre and falls to 0 at its rim. Targets are drawn from the
render's truth corners. Seeds below 1 000 000 only.

    python -m scanner.train_locate data --count 600 --seed 0
    python -m scanner.train_locate data --count 450 --seed 71000 --max-elevation 55   # low views only
    python -m scanner.train_locate train --minutes 20

Needs the ``[train]`` extra (torch, onnx); the scanner itself only runs the ONNX file.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import cv2
import numpy as np

from scanner.holdout import is_training_seed, planned_scene, training_seeds
from scanner.locate import DEFAULT_MODEL, OUTPUT_STRIDE, work_size
from scanner.training import load_folded_onnx, train_mode

DEFAULT_DATA = Path("out/locate-data.npz")
HIDDEN_VISIBLE = 0.6  # tiles less visible than this are left out of the loss


def locate_sample(image: np.ndarray, truth: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A render shrunk to the network's input, with its tiles' corners there ``(n, 6, 2)`` and visibility."""
    size = work_size(image.shape[1], image.shape[0])
    scale = size[0] / image.shape[1]
    tiles = [t for t in truth["tiles"] if "corners_px" in t]
    # Pixel centres: photo x maps to (x + 0.5)·scale − 0.5 in the shrunk image.
    corners = [(np.asarray(t["corners_px"], np.float32) + 0.5) * scale - 0.5 for t in tiles]
    return (cv2.resize(image, size, interpolation=cv2.INTER_AREA), np.asarray(corners, np.float32).reshape(-1, 6, 2),
            np.asarray([float(t.get("visible", 1.0)) for t in tiles], np.float32))


class LocateData:
    """Shrunk photos and their tiles, collected render by render and saved as one ``.npz``."""

    def __init__(self):
        self.images, self.corners, self.visible, self.owners, self.seeds = [], [], [], [], []

    def add(self, seed: int, image: np.ndarray, truth: dict) -> None:
        small, corners, visible = locate_sample(image, truth)
        self.owners.append(np.full(len(corners), len(self.images)))
        self.images.append(small)
        self.corners.append(corners)
        self.visible.append(visible)
        self.seeds.append(seed)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, images=np.stack(self.images), corners=np.concatenate(self.corners),
                 visible=np.concatenate(self.visible), owners=np.concatenate(self.owners),
                 seeds=np.asarray(self.seeds))


def build_dataset(count: int, seed: int, path: Path = DEFAULT_DATA, save_every: int = 50,
                  max_elevation: float | None = None) -> None:
    """Render ``count`` training photos (seeds from ``seed`` on, held-out ones skipped) and keep them shrunk.

    With ``max_elevation`` only seeds whose camera is drawn at most that many degrees above the table are
    rendered: low views, where far tiles are small, blurred and foreshortened, can be given more weight in
    the data than the renderer's own draw gives them. The file is rewritten every ``save_every`` photos, so an
    interrupted run still leaves data.
    """
    from renderer import render_random
    from tqdm import tqdm

    data = LocateData()
    rng = np.random.default_rng(seed)
    low = None if max_elevation is None else (lambda s: planned_scene(s).elevation_deg <= max_elevation)
    for n, s in enumerate(tqdm(training_seeds(seed, count, low), desc="rendering")):
        width = int(rng.choice([1008, 1008, 1344]))
        render = render_random(s, width=width, height=width * 3 // 4)
        data.add(s, render.image, render.truth)
        if (n + 1) % save_every == 0 or n + 1 == count:
            data.save(path)


def targets(corners: np.ndarray, visible: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``(3, h, w)`` float32 targets at output resolution: tile-top mask, centre cone, loss weight.

    The centre cone of a tile is its distance transform divided by its peak:
    1 at the centre falling to 0 at the rim, so its maximum marks the centre
    whatever the tile's size. Tiles mostly hidden (under a hand) are left out
    of the loss: the network cannot see them and must not learn to invent them.
    """
    w, h = size[0] // OUTPUT_STRIDE, size[1] // OUTPUT_STRIDE
    mask = np.zeros((h, w), np.uint8)
    hidden = np.zeros((h, w), np.uint8)
    cone = np.zeros((h, w), np.float32)
    for c, seen in zip(corners, visible):
        c = (c + 0.5) / OUTPUT_STRIDE - 0.5
        polygon = [np.round(c * 16).astype(np.int32)]
        cv2.fillPoly(mask, polygon, 1, lineType=cv2.LINE_AA, shift=4)
        if seen < HIDDEN_VISIBLE:
            cv2.fillPoly(hidden, polygon, 1, shift=4)
        x0, y0 = np.maximum(np.floor(c.min(axis=0)).astype(int) - 2, 0)
        x1, y1 = np.minimum(np.ceil(c.max(axis=0)).astype(int) + 3, [w, h])
        if x1 <= x0 or y1 <= y0:
            continue
        # Draw the whole tile (even where it leaves the frame) so the cone's peak stays at its centre.
        full = np.floor(c.min(axis=0)).astype(int) - 2
        span = np.ceil(c.max(axis=0)).astype(int) + 3 - full
        tile = np.zeros((span[1], span[0]), np.uint8)
        cv2.fillPoly(tile, [np.round((c - full) * 16).astype(np.int32)], 1, shift=4)
        distance = cv2.distanceTransform(tile, cv2.DIST_L2, 3)
        distance /= max(float(distance.max()), 1e-6)
        window = distance[y0 - full[1]:y1 - full[1], x0 - full[0]:x1 - full[0]]
        cone[y0:y1, x0:x1] = np.maximum(cone[y0:y1, x0:x1], window)
    weight = 1.0 - cv2.dilate(hidden, np.ones((3, 3), np.uint8)).astype(np.float32)
    return np.stack([mask.astype(np.float32), cone, weight])


def make_network(outputs: int = 2, dilations: tuple[int, ...] = (2, 4, 2), centre: float = 127.5,
                 spread: float = 127.5):
    """A small encoder–decoder (strides 2, 4, 8; dilated convolutions at 1/8; skips at 1/4 and 1/2) with
    ``outputs`` sigmoid maps at half the input's resolution, for inputs whose sides are multiples of 8.

    The tile-top network with its defaults; the hand network (:mod:`scanner.train_hands`) with one output, two
    dilated convolutions and the input scaled as ``(x − 128) / 64``.
    """
    import torch
    from torch import nn

    def block(cin, cout, stride=1, dilation=1):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    class TileNet(nn.Module):
        """Small encoder–decoder; output at half the input resolution."""

        def __init__(self):
            super().__init__()
            self.by2 = nn.Sequential(block(3, 16, 2), block(16, 16))
            self.by4 = nn.Sequential(block(16, 32, 2), block(32, 32))
            self.by8 = nn.Sequential(block(32, 48, 2), *(block(48, 48, dilation=d) for d in dilations))
            self.up_quarter = block(48 + 32, 32)
            self.up_half = block(32 + 16, 16)
            self.head = nn.Conv2d(16, outputs, 1)

        def forward(self, x):
            x = (x - centre) / spread
            h = self.by2(x)
            q = self.by4(h)
            e = self.by8(q)
            u = nn.functional.interpolate(e, scale_factor=2.0, mode="bilinear", align_corners=False)
            u = self.up_quarter(torch.cat([u, q], 1))
            u = nn.functional.interpolate(u, scale_factor=2.0, mode="bilinear", align_corners=False)
            u = self.up_half(torch.cat([u, h], 1))
            return torch.sigmoid(self.head(u))

    return TileNet()


def _load_data(paths: list[Path]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Concatenate data files (owners renumbered), leaving out any render a model may not train on."""
    parts = []
    offset = 0
    for path in paths:
        with np.load(path) as data:
            keep = np.flatnonzero([is_training_seed(int(s)) for s in data["seeds"]])
            renumber = np.full(len(data["images"]), -1)
            renumber[keep] = np.arange(len(keep)) + offset
            tiles = np.isin(data["owners"], keep)
            parts.append((data["images"][keep], data["corners"][tiles], data["visible"][tiles],
                          renumber[data["owners"][tiles]]))
            offset += len(keep)
    return tuple(np.concatenate(arrays) for arrays in zip(*parts))


def train(data_paths: list[Path], minutes: float, out: Path, seed: int, crop: int = 128, batch: int = 12,
          resume: Path | None = None, peak_lr: float = 3e-3, threads: int = 2) -> None:
    """Train for a time budget (the machine is shared: steps per minute vary), then export ONNX.

    The learning rate follows a cosine from ``peak_lr`` to 0 over the budget;
    ``resume`` continues from saved weights: the ``.pt`` written next to the model, or a shipped ``.onnx``
    (see :func:`scanner.training.load_folded_onnx`; its batch norms stay frozen).
    """
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(seed)
    images, corners, visible, owners = _load_data(data_paths)
    size = (images.shape[2], images.shape[1])
    target = np.stack([targets(corners[owners == i], visible[owners == i], size) for i in range(len(images))])
    net = make_network()
    frozen_norms = resume is not None and resume.suffix == ".onnx"
    if frozen_norms:
        load_folded_onnx(net, resume)
    elif resume is not None:
        net.load_state_dict(torch.load(resume))
    optimiser = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    bce = torch.nn.functional.binary_cross_entropy
    train_mode(net, frozen_norms)

    def step_loss():
        x, y = _batch(images, target, rng, batch, crop)
        pred = net(torch.from_numpy(x))
        y = torch.from_numpy(y)
        mask_loss = (bce(pred[:, 0], y[:, 0], reduction="none") * y[:, 2]).mean()
        # The cone's upper part is where the centre is decided: weight it up.
        weight = (1.0 + 4.0 * y[:, 1]) * y[:, 2]
        heat_loss = (bce(pred[:, 1], y[:, 1], reduction="none") * weight).mean()
        return mask_loss + heat_loss

    train_for(minutes, optimiser, step_loss, peak_lr, log_every=25)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), out.with_suffix(".pt"))
    export(net, out, size)


def train_for(minutes: float, optimiser, step_loss, peak_lr: float, log_every: int) -> int:
    """Optimise ``step_loss()`` (a fresh batch's loss each call) for a time budget, the learning rate on a cosine
    from ``peak_lr`` to 0 over it, printing the mean loss every ``log_every`` steps; returns the steps taken."""
    budget, start = minutes * 60.0, time.time()
    step, recent = 0, []
    while (elapsed := time.time() - start) < budget:
        for group in optimiser.param_groups:
            group["lr"] = peak_lr * 0.5 * (1.0 + np.cos(np.pi * elapsed / budget))
        loss = step_loss()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        recent.append(loss.item())
        step += 1
        if step % log_every == 0:
            print(f"step {step} ({elapsed / 60:.1f} min) loss {np.mean(recent):.4f}", flush=True)
            recent = []
    return step


def _batch(images: np.ndarray, target: np.ndarray, rng: np.random.Generator, n: int, crop: int):
    """Random crops with flips, quarter turns and brightness/contrast changes."""
    xs, ys = [], []
    h, w = images.shape[1:3]
    for _ in range(n):
        i = rng.integers(len(images))
        y0 = int(rng.integers(0, (h - crop) // OUTPUT_STRIDE + 1)) * OUTPUT_STRIDE
        x0 = int(rng.integers(0, (w - crop) // OUTPUT_STRIDE + 1)) * OUTPUT_STRIDE
        x = images[i, y0:y0 + crop, x0:x0 + crop].astype(np.float32)
        t = target[i, :, y0 // OUTPUT_STRIDE:(y0 + crop) // OUTPUT_STRIDE, x0 // OUTPUT_STRIDE:(x0 + crop) // OUTPUT_STRIDE]
        x = x.transpose(2, 0, 1)
        k = int(rng.integers(4))
        x, t = np.rot90(x, k, (1, 2)), np.rot90(t, k, (1, 2))
        if rng.random() < 0.5:
            x, t = x[:, :, ::-1], t[:, :, ::-1]
        x = np.clip((x - 128) * rng.uniform(0.7, 1.3) + 128 + rng.uniform(-30, 30), 0, 255)
        xs.append(np.ascontiguousarray(x))
        ys.append(np.ascontiguousarray(t))
    return np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)


def export(net, out: Path, size: tuple[int, int]) -> None:
    import torch

    net.eval()
    example = torch.zeros(1, 3, size[1], size[0])
    torch.onnx.export(net, example, str(out), input_names=["image"], output_names=["maps"], opset_version=17,
                      dynamic_axes={"image": {2: "height", 3: "width"}, "maps": {2: "h", 3: "w"}}, dynamo=False)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scanner.train_locate", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    data = sub.add_parser("data", help="render training photos")
    data.add_argument("--count", type=int, default=600)
    data.add_argument("--seed", type=int, default=0)
    data.add_argument("--out", type=Path, default=DEFAULT_DATA)
    data.add_argument("--max-elevation", type=float, default=None,
                      help="render only seeds whose camera is drawn at most this many degrees above the table")
    fit = sub.add_parser("train", help="train and export models/tile_tops.onnx")
    fit.add_argument("--data", type=Path, nargs="+", default=[DEFAULT_DATA])
    fit.add_argument("--minutes", type=float, default=20.0, help="training time budget")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    fit.add_argument("--resume", type=Path, default=None,
                     help="continue from these weights (.pt, or an exported .onnx)")
    fit.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    fit.add_argument("--threads", type=int, default=2, help="CPU threads for torch")
    fit.add_argument("--crop", type=int, default=128, help="side of the square training crops (multiple of 8)")
    fit.add_argument("--batch", type=int, default=12, help="crops per step")
    args = parser.parse_args(argv)
    if args.step == "data":
        build_dataset(args.count, args.seed, args.out, max_elevation=args.max_elevation)
    else:
        train(args.data, args.minutes, args.out, args.seed, crop=args.crop, batch=args.batch, resume=args.resume,
              peak_lr=args.lr, threads=args.threads)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
