"""How sure a piece reading is: the models' probabilities, calibrated on renders.

The piece models' own probabilities say how sure each model is of its one
question, not how often the piece ends up right: a piece is right only when
the tile under it is a real tile, something stands there, the kind and the
colour are right and its sector lies in the right plain segment. A logistic
model over a few numbers the decoder knows (:data:`FEATURES`: the presence,
kind and colour probabilities as logits, whether it is a rune stone, how sure
the tile's own terrain is, which drops where the lattice is off, and how sure the
board's median tile is, which drops where the whole fit is off and a piece's own
tile may still read clearly, one cell from where it lies; and whether no other
piece read on the board has its colour, as a printed field or lake read as a
piece mostly stands: a player holds more than one piece but for a first house,
and a settler always joins pieces of its colour) turns them into
the chance that the piece is right, fitted on renders of training seeds (Platt
scaling with several inputs) and shipped beside the models as
``models/piece_confidence.json``. The kind and the colour are taken at face value
(:data:`FACE_VALUE`): the close-up model's own chances that they are right multiply
the logistic of the other features instead of entering it with a fitted weight: a weight
fitted on the training renders' paints trusts a colour read fifty-fifty almost as if it
were sure, since there it mostly is right, while on a paint no model was trained on such a
colour is wrong about as often as the model says. So is the chance that the piece's plain segment is read as far
as the piece (:func:`scanner.assemble.segment_chance`, from the tile's decoded sector chances): a piece is
reported on its segment's first sector, which a plain read one sector too far puts off the plain, and the tile's
confidence as a whole says little of that one boundary. It must be fitted again whenever a
piece model changes; the file records the model versions it was fitted for, and a
scanner whose models differ falls back to the plain product of probabilities.

    python -m scanner.confidence fit --renders DIR [DIR ...] [--out models/piece_confidence.json] [--keep FILE]
    python -m scanner.confidence evaluate --renders DIR [DIR ...]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from fjords.board import Piece
from fjords.errors import FjordsError
from scanner.onnx_model import ModelMissingError
from scanner.pieces import COLOUR_NAMES, KINDS_LABEL_SMOOTHING, PIECE_KINDS, PieceReading

FILE_NAME = "piece_confidence.json"
FEATURES = ("presence", "kind", "colour", "runestone", "tile", "board", "sole_colour", "sole_colour_settler",
            "close_up", "segment", "bias")
#: Probabilities are clipped this far from 0 and 1 before taking logits.
EPSILON = 1e-4
#: Features that are a model's own chance that a part of the reading is right, taken at face value by a calibration
#: that names them: how many answers the model chose among, over how many of those the chance is renormalised (the
#: kind among the three kinds of piece, the model also answering "none"), and the label smoothing it was trained
#: with (the close-up model's; none for the segment, a product of decoded sector chances).
FACE_VALUE = {"kind": (len(PIECE_KINDS), len(PIECE_KINDS) - 1, KINDS_LABEL_SMOOTHING),
              "colour": (len(COLOUR_NAMES), len(COLOUR_NAMES), KINDS_LABEL_SMOOTHING), "segment": (1, 1, 0.0)}


def logit(p: float) -> float:
    p = min(max(float(p), EPSILON), 1.0 - EPSILON)
    return float(np.log(p / (1.0 - p)))


def piece_features(kind_probs: np.ndarray, colour_probs: np.ndarray, tile_confidence: float,
                   board_median: float, sole_colour: bool = False, close_up_piece: float = 1.0,
                   segment: float = 1.0) -> np.ndarray:
    """The numbers a piece's confidence is computed from, in the order of :data:`FEATURES`.

    Parameters
    ----------
    kind_probs : (4,) over none, house, settler, runestone.
    colour_probs : player colour probabilities (ignored for a rune stone).
    tile_confidence : the tile's terrain confidence (product of its sector posteriors).
    board_median : the median terrain confidence of the board's tiles (:func:`board_confidence`).
    sole_colour : no other piece read on the board has this piece's colour (:func:`sole_in_colour`; ignored
        for a rune stone).
    close_up_piece : the kind model's chance that its close-up shows a piece at all
        (:attr:`~scanner.pieces.PieceReading.close_up_piece`).
    segment : the chance that the piece is reported on its true plain segment
        (:func:`scanner.assemble.segment_chance`; ignored for a rune stone).
    """
    kind_probs = np.asarray(kind_probs, dtype=np.float64)
    presence = 1.0 - kind_probs[0]
    kind = int(np.argmax(kind_probs[1:])) + 1
    runestone = kind == 3
    colour = 1.0 - EPSILON if runestone else float(np.max(colour_probs))
    sole = sole_colour and not runestone
    return np.array([logit(presence), logit(kind_probs[kind] / max(presence, EPSILON)), logit(colour),
                     float(runestone), logit(tile_confidence), logit(board_median), float(sole),
                     float(sole and PIECE_KINDS[kind] == "settler"), logit(close_up_piece),
                     logit(1.0 if runestone else segment), 1.0])


def unsmoothed_chance(chance: np.ndarray, answers: int, among: int, smoothing: float = KINDS_LABEL_SMOOTHING
                      ) -> np.ndarray:
    """A model's chance for its answer with its training label smoothing undone, in [0, 1].

    Trained towards ``(1 − s)·truth + s/answers``, a model sure of an answer
    gives it ``1 − s + s/answers``; renormalised over ``among`` of the answers, the
    chance ``q`` is ``((1 − s)·p + s/answers) / (1 − s + among·s/answers)`` of the
    model's belief ``p``, which this returns.
    """
    lift = smoothing / answers
    return np.clip((np.asarray(chance, dtype=np.float64) * (1.0 - smoothing + among * lift) - lift)
                   / (1.0 - smoothing), 0.0, 1.0)


def face_value_chance(features: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """The product of the chances that the features ``names`` (of :data:`FACE_VALUE`) give, per row of
    ``features`` (rows in the order of :data:`FEATURES`; a single row may be given as a vector)."""
    x = np.asarray(features, dtype=np.float64)
    chance = np.ones(x.shape[:-1])
    for name in names:
        chance = chance * unsmoothed_chance(expit(x[..., FEATURES.index(name)]), *FACE_VALUE[name])
    return chance


def sole_in_colour(colours: Sequence[str | None]) -> list[bool]:
    """For each piece's colour (None for a rune stone), whether no other piece has it."""
    counts = Counter(colours)
    return [colour is not None and counts[colour] == 1 for colour in colours]


def board_confidence(tile_confidences) -> float:
    """The median terrain confidence of a board's tiles: low where the lattice fit went wrong."""
    values = list(tile_confidences)
    return float(np.median(values)) if values else 1.0


@dataclass(frozen=True)
class PieceCalibration:
    """Logistic weights over :data:`FEATURES`, the features taken at face value, and the model versions they
    were fitted for.

    The confidence is the logistic of ``weights · features`` times the chances the ``face_value`` features give
    (:func:`face_value_chance`); the fit leaves their weights at zero.
    """

    weights: tuple[float, ...]
    models: Mapping[str, str]
    version: str = ""
    face_value: tuple[str, ...] = ()

    def confidence(self, features: np.ndarray) -> float:
        return float(expit(float(np.dot(self.weights, features))) * face_value_chance(features, self.face_value))

    def to_json(self) -> dict:
        return {"features": list(FEATURES), "weights": [round(w, 6) for w in self.weights],
                "face_value": list(self.face_value), "models": dict(self.models)}

    @classmethod
    def from_json(cls, document: Mapping) -> "PieceCalibration":
        if list(document.get("features", [])) != list(FEATURES):
            raise ValueError("piece confidence file was fitted on other features")
        face_value = tuple(document.get("face_value", ()))
        if set(face_value) - set(FACE_VALUE):
            raise ValueError(f"piece confidence file takes at face value what no model answers: {face_value}")
        return cls(tuple(float(w) for w in document["weights"]), dict(document.get("models", {})),
                   face_value=face_value)


def load_piece_calibration(models_dir: str | Path, versions: Mapping[str, str]) -> PieceCalibration | None:
    """The shipped calibration when it was fitted for exactly these piece models, else None."""
    path = Path(models_dir) / FILE_NAME
    if not path.exists():
        return None
    text = path.read_text()
    try:
        calibration = PieceCalibration.from_json(json.loads(text))
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelMissingError(f"{path} is unreadable ({exc}); fit it again: python -m scanner.confidence fit "
                                "--renders DIR") from None
    calibration = replace(calibration, version=f"{path.stem}-{hashlib.sha256(text.encode()).hexdigest()[:12]}")
    return calibration if dict(calibration.models) == dict(versions) else None


def fit_logistic(features: np.ndarray, right: np.ndarray, l2: float = 1e-2, offset: np.ndarray | None = None,
                 chance: np.ndarray | None = None) -> np.ndarray:
    """Weights ``w`` of the model P(right) = ``chance`` · logistic(``offset`` + features · w), by maximum
    likelihood with a small ridge on all but the last (bias) column.

    ``chance`` (default 1: a plain logistic model) is each row's fixed factor, the chances taken at face value.
    With ``offset`` (a fixed logit per row), every column is ridged: the offset holds the bias.
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(right, dtype=np.float64)
    fixed = np.zeros(len(y)) if offset is None else np.asarray(offset, dtype=np.float64)
    log_chance = np.log(np.clip(np.ones(len(y)) if chance is None else np.asarray(chance, np.float64), 1e-12, 1.0))
    ridge = np.full(x.shape[1], l2)
    if offset is None:
        ridge[-1] = 0.0

    def loss_and_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = fixed + x @ w
        log_p = log_chance + log_expit(z)
        p = np.exp(log_p)
        log_q = np.log1p(-np.minimum(p, 1.0 - 1e-12))
        sigma = expit(z)
        # d(-log P)/dz = -(1 - sigma); d(-log(1 - P))/dz = P (1 - sigma) / (1 - P)
        slope = np.where(y > 0, -(1.0 - sigma), p * (1.0 - sigma) / np.exp(log_q))
        loss = -float(np.sum(y * log_p + (1.0 - y) * log_q)) + 0.5 * float(np.sum(ridge * w * w))
        return loss, x.T @ slope + ridge * w

    result = minimize(loss_and_gradient, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B",
                      options={"maxiter": 1000, "gtol": 1e-8})
    return result.x


def collect(renders: list[Path], models_dir: Path | None = None, training_only: bool = True
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, str]]:
    """Scan every render in some folders (photo + truth JSON) and judge each piece read.

    Returns the features, whether each piece was right, its uncalibrated
    confidence, and the piece model versions. With ``training_only``, renders
    of held-out seeds are skipped (fitting on them would spoil their figures).
    """
    from fjords.boardjson import parse_board
    from fjords.compare import compare
    from fjords_cli.eval_command import find_photos
    from scanner.assemble import assemble
    from scanner.holdout import is_training_seed
    from scanner.load import load_image
    from scanner.pipeline import Scanner

    scanner = Scanner(models_dir, piece_calibration=False)
    rows, right, plain = [], [], []
    for photo in (photo for folder in renders for photo in find_photos(folder)):
        truth_doc = json.loads(photo.with_suffix(".json").read_text())
        seed = truth_doc.get("render", {}).get("seed")
        if training_only and (seed is None or not is_training_seed(int(seed))):
            continue
        try:
            result = scanner.scan(load_image(photo).image_bgr)
        except FjordsError:
            continue
        outcomes = compare(result.board, parse_board(truth_doc)).piece_outcomes
        # Pieces are weighed by how sure the network alone reads the tiles (scanner.assemble.assemble), not the
        # network with the photo's own terrain look, which the board reports.
        network = assemble(result.evidence, settings=replace(scanner.settings, photo_look=0.0)).tiles
        sureness = {h: tile.extra["confidence"] for h, tile in network.items()}
        board = board_confidence(sureness.values())
        sole = sole_in_colour([piece.player for piece in result.board.pieces])
        for piece, outcome, sole_colour in zip(result.board.pieces, outcomes, sole):
            tile = result.board.tiles.get(piece.hex)
            if tile is None:  # a rune stone beside the tiles: its confidence is not calibrated
                continue
            reading = reading_of(piece, result.evidence[piece.hex].pieces)
            rows.append(piece_features(reading.kind_probs, reading.colour_probs,
                                       sureness.get(piece.hex, tile.extra["confidence"]), board, sole_colour,
                                       reading.close_up_piece, piece.extra.get("segment_confidence", 1.0)))
            right.append(outcome.right)
            plain.append(outcome.confidence)
    return np.array(rows), np.array(right, dtype=bool), np.array(plain), scanner.pieces.versions


def reading_of(piece: Piece, readings: tuple[PieceReading, ...]) -> PieceReading:
    """The reading a decoded piece came from: the one whose base point it reports."""
    base = np.asarray(piece.extra["base_px"])
    return min(readings, key=lambda r: float(np.hypot(*(np.asarray(r.base_px) - base))))


def _print_table(title: str, confidences: np.ndarray, right: np.ndarray) -> None:
    from fjords.compare import Outcome, reliability_table

    print(title)
    for row in reliability_table(Outcome(float(c), bool(r)) for c, r in zip(confidences, right)):
        print(f"  {row.label:12s} {row.count:5d} pieces, wrong {row.wrong_share:.3f} "
              f"[{row.interval[0]:.3f}, {row.interval[1]:.3f}]")


def main(argv: list[str] | None = None) -> int:
    from scanner.onnx_model import DEFAULT_MODELS_DIR

    parser = argparse.ArgumentParser(prog="python -m scanner.confidence", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="action", required=True)
    p_fit = sub.add_parser("fit", help="fit the piece confidence on renders of training seeds")
    p_fit.add_argument("--renders", type=Path, nargs="+", required=True, help="folders of renders with their truth")
    p_fit.add_argument("--models", type=Path, default=DEFAULT_MODELS_DIR)
    p_fit.add_argument("--out", type=Path, default=None, help=f"default: MODELS/{FILE_NAME}")
    p_fit.add_argument("--keep", type=Path, default=None,
                       help="a piece confidence file: keep the weights of the features it names, fit only the others")
    p_eval = sub.add_parser("evaluate", help="reliability of the piece confidence on renders")
    p_eval.add_argument("--renders", type=Path, nargs="+", required=True)
    p_eval.add_argument("--models", type=Path, default=DEFAULT_MODELS_DIR)
    args = parser.parse_args(argv)
    try:
        return _fit(args) if args.action == "fit" else _evaluate(args)
    except FjordsError as exc:
        print(f"python -m scanner.confidence: {exc}", file=sys.stderr)
        return 2


def _fit(args: argparse.Namespace) -> int:
    features, right, plain, versions = collect(args.renders, args.models)
    if not len(right):
        raise FjordsError(f"no piece read in the training-seed renders of {', '.join(map(str, args.renders))}")
    weights = fit_weights(features, right) if args.keep is None else _fit_on_top(features, right, args.keep)
    calibration = PieceCalibration(tuple(float(w) for w in weights), versions, face_value=tuple(FACE_VALUE))
    out = args.out or args.models / FILE_NAME
    out.write_text(json.dumps(calibration.to_json(), indent=1) + "\n")
    print(f"{len(right)} pieces, {right.mean():.3f} right; wrote {out}")
    print("  " + ", ".join(f"{n} {w:+.3f}" for n, w in zip(FEATURES, weights)))
    _print_table("fitted pieces, plain confidence:", plain, right)
    _print_table("fitted pieces, calibrated:", np.array([calibration.confidence(f) for f in features]), right)
    return 0


def fit_weights(features: np.ndarray, right: np.ndarray, kept: Mapping[str, float] | None = None) -> np.ndarray:
    """The weights of a calibration taking :data:`FACE_VALUE` at face value: theirs zero, those ``kept`` names as
    given (the others then fitted on top of them, their logit an offset), the others fitted."""
    kept = kept or {}
    free = [n for n, name in enumerate(FEATURES) if name not in kept and name not in FACE_VALUE]
    weights = np.array([0.0 if name in FACE_VALUE else kept.get(name, 0.0) for name in FEATURES])
    if free:
        weights[free] = fit_logistic(features[:, free], right, offset=features @ weights if kept else None,
                                     chance=face_value_chance(features, tuple(FACE_VALUE)))
    return weights


def _fit_on_top(features: np.ndarray, right: np.ndarray, kept_file: Path) -> np.ndarray:
    """Weights keeping those ``kept_file`` gives its features, the features it does not name fitted on top (the
    kind and colour at face value, their weights zero)."""
    try:
        kept = json.loads(kept_file.read_text())
        named = dict(zip(kept["features"], (float(w) for w in kept["weights"])))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FjordsError(f"cannot read the weights to keep from {kept_file} ({exc})") from None
    unknown = sorted(set(named) - set(FEATURES))
    if unknown:
        raise FjordsError(f"{kept_file} names features this scanner has not: {', '.join(unknown)}")
    if "bias" not in named:
        raise FjordsError(f"{kept_file} keeps no bias")
    return fit_weights(features, right, named)


def _evaluate(args: argparse.Namespace) -> int:
    features, right, plain, versions = collect(args.renders, args.models, training_only=False)
    calibration = load_piece_calibration(args.models, versions)
    _print_table("plain confidence:", plain, right)
    if calibration is None:
        print(f"no {FILE_NAME} fitted for these models")
    else:
        _print_table("calibrated:", np.array([calibration.confidence(f) for f in features]), right)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
