"""Train the hand network of :mod:`scanner.hands` on rendered photos.

The network sees the photo shrunk to :data:`scanner.hands.HAND_SIDE` pixels on its long side and predicts, at
half that resolution, the share of each pixel an arm or hand covers (the renderer's hand mask,
:attr:`renderer.Render.hand_mask`). Training seeds only (:func:`scanner.holdout.is_training_seed`); each render
draws 0, 1 or 2 arms, so that prints and tables with no hand are seen too.

    python -m scanner.train_hands data --count 800 --seed 89716 --out out/hands-a.npz
    python -m scanner.train_hands train --data out/hands-a.npz out/hands-b.npz --minutes 14
    python -m scanner.train_hands evaluate --data out/hands-c.npz

(the shipped model's whole recipe, a second run resumed from the first: models/README.md).

Needs the ``[train]`` extra (torch, onnx) to train; the scanner itself only runs the ONNX file.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np

from scanner.hands import DEFAULT_MODEL, OUTPUT_STRIDE, hand_input_size
from scanner.holdout import is_training_seed, training_seeds
from scanner.train_locate import make_network as encoder_decoder
from scanner.train_locate import train_for

RENDER_SIZE = (768, 576)
"""Renders are drawn at this size and shrunk to the network's input: finer than it needs, cheaper than full size."""
HANDS_DRAWN = (0, 1, 2)
HANDS_CHANCE = (0.2, 0.45, 0.35)


def hand_sample(image: np.ndarray, hand_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A render shrunk to the network's input, and its hand mask at the output's resolution (uint8, share × 255)."""
    size = hand_input_size(image.shape[1], image.shape[0])
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    out_size = (size[0] // OUTPUT_STRIDE, size[1] // OUTPUT_STRIDE)
    mask = cv2.resize(hand_mask.astype(np.float32), out_size, interpolation=cv2.INTER_AREA)
    return small, np.round(np.clip(mask, 0.0, 1.0) * 255).astype(np.uint8)


def build_dataset(count: int, seed: int, out: Path) -> int:
    """Render ``count`` training seeds from ``seed`` up with 0–2 arms each; save them; return the next seed."""
    from renderer import random_board, render_board
    from renderer.boards import random_setup

    seeds = training_seeds(seed, count, is_training_seed)
    images, masks = [], []
    for n, s in enumerate(seeds):
        hands = int(np.random.default_rng([s, 7]).choice(HANDS_DRAWN, p=HANDS_CHANCE))
        edition, players = random_setup(s)
        render = render_board(random_board(s, edition, players), s, width=RENDER_SIZE[0], height=RENDER_SIZE[1],
                              hands=hands)
        small, mask = hand_sample(render.image, render.hand_mask)
        images.append(small)
        masks.append(mask)
        if (n + 1) % 50 == 0:
            print(f"{n + 1} of {len(seeds)} renders", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, images=np.stack(images), masks=np.stack(masks), seeds=np.asarray(seeds))
    print(f"wrote {out}: {len(seeds)} renders, seeds {seeds[0]}-{seeds[-1]}; next unused {seeds[-1] + 1}")
    return seeds[-1] + 1


def make_network():
    """The tile-top network's encoder–decoder (:func:`scanner.train_locate.make_network`) with one output."""
    return encoder_decoder(outputs=1, dilations=(2, 4), centre=128.0, spread=64.0)


def _load(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    data = [np.load(p) for p in paths]
    return np.concatenate([d["images"] for d in data]), np.concatenate([d["masks"] for d in data])


def _batch(images: np.ndarray, masks: np.ndarray, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Whole photos with flips, half turns and brightness, contrast and colour-balance changes."""
    xs, ys = [], []
    for _ in range(n):
        i = int(rng.integers(len(images)))
        x = images[i].astype(np.float32).transpose(2, 0, 1)
        y = masks[i].astype(np.float32)[None] / 255.0
        if rng.random() < 0.5:
            x, y = x[:, :, ::-1], y[:, :, ::-1]
        if rng.random() < 0.5:
            x, y = x[:, ::-1, ::-1], y[:, ::-1, ::-1]
        gain = rng.uniform(0.9, 1.1, (3, 1, 1))
        x = np.clip(((x - 128) * rng.uniform(0.7, 1.3) + 128 + rng.uniform(-30, 30)) * gain, 0, 255)
        xs.append(np.ascontiguousarray(x))
        ys.append(np.ascontiguousarray(y))
    return np.stack(xs).astype(np.float32), np.stack(ys).astype(np.float32)


def train(data_paths: list[Path], minutes: float, out: Path, seed: int, batch: int = 8, peak_lr: float = 3e-3,
          threads: int = 2, resume: Path | None = None) -> None:
    """Train for a time budget, the learning rate on a cosine from ``peak_lr`` to 0, then export ONNX;
    ``resume`` continues from the weights (``.pt``) a run saved beside its model."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(seed)
    images, masks = _load(data_paths)
    net = make_network()
    if resume is not None:
        net.load_state_dict(torch.load(resume))
    optimiser = torch.optim.AdamW(net.parameters(), lr=peak_lr, weight_decay=1e-4)
    net.train()

    def step_loss():
        x, y = _batch(images, masks, rng, batch)
        return torch.nn.functional.binary_cross_entropy(net(torch.from_numpy(x)), torch.from_numpy(y))

    step = train_for(minutes, optimiser, step_loss, peak_lr, log_every=50)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(net.state_dict(), out.with_suffix(".pt"))
    net.eval()
    example = torch.zeros(1, 3, images.shape[1], images.shape[2])
    torch.onnx.export(net, example, str(out), input_names=["image"], output_names=["hands"], opset_version=17,
                      dynamic_axes={"image": {2: "height", 3: "width"}, "hands": {2: "h", 3: "w"}}, dynamo=False)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB) after {step} steps")


def evaluate(data_paths: list[Path], model: Path) -> dict:
    """Pixel figures of the ONNX model on held-aside renders: intersection over union of the hands, and the share
    of pixels with no hand read as hand (at 0.5)."""
    from scanner.hands import HandModel

    images, masks = _load(data_paths)
    hands = HandModel(model)
    inter = union = false = empty = 0
    for image, mask in zip(images, masks):
        read = hands.read(image) >= 0.5
        truth = mask >= 128
        inter += int(np.sum(read & truth))
        union += int(np.sum(read | truth))
        false += int(np.sum(read & ~truth))
        empty += int(np.sum(~truth))
    result = {"renders": len(images), "hand_iou": inter / max(union, 1), "false_hand_share": false / max(empty, 1)}
    print(result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scanner.train_hands", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    data = sub.add_parser("data", help="render training photos with their hand masks")
    data.add_argument("--count", type=int, default=400)
    data.add_argument("--seed", type=int, required=True)
    data.add_argument("--out", type=Path, required=True)
    fit = sub.add_parser("train", help=f"train and export {DEFAULT_MODEL}")
    fit.add_argument("--data", type=Path, nargs="+", required=True)
    fit.add_argument("--minutes", type=float, default=15.0, help="training time budget")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("--out", type=Path, default=DEFAULT_MODEL)
    fit.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    fit.add_argument("--threads", type=int, default=2, help="CPU threads for torch")
    fit.add_argument("--batch", type=int, default=8, help="photos per step")
    fit.add_argument("--resume", type=Path, default=None, help="continue from these weights (a run's .pt)")
    check = sub.add_parser("evaluate", help="pixel figures on renders never trained on")
    check.add_argument("--data", type=Path, nargs="+", required=True)
    check.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    args = parser.parse_args(argv)
    if args.step == "data":
        build_dataset(args.count, args.seed, args.out)
    elif args.step == "train":
        train(args.data, args.minutes, args.out, args.seed, batch=args.batch, peak_lr=args.lr, threads=args.threads,
              resume=args.resume)
    else:
        evaluate(args.data, args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
