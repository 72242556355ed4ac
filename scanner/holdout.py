"""What no model may train on: held-out seeds, one art style and one pair of piece colours.

Render seeds from :data:`MAX_TRAINING_SEED` up are the evaluation set. Beyond
that, one of the renderer's art styles and two piece colours are kept out of
every model's training, so that calibration to an unseen printing and unseen
paint (``fjords calibrate``) can be measured honestly: a training render is
skipped when it is in :data:`HELD_OUT_STYLE` or shows a player of a colour in
:data:`HELD_OUT_COLOURS`.

Orange and purple are held out (rather than, say, white and green) because no
boxed edition uses them: only the renderer's "home-made pieces" photos do, so
leaving them out costs the models no ordinary games.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from renderer.scene import Scene

MAX_TRAINING_SEED = 1_000_000
HELD_OUT_STYLE = "vintage"
HELD_OUT_COLOURS = ("orange", "purple")


def planned_scene(seed: int, edition: str | None = None) -> Scene:
    """The scene (camera, light, table, style) that ``renderer.render_random(seed)`` will draw (cheap: no rendering);
    with ``edition``, the scene ``render_board`` draws with ``seed`` for a board of that edition."""
    from renderer.boards import random_setup
    from renderer.scene import sample_scene

    if edition is None:
        edition, _ = random_setup(seed)
    # render_board draws the scene first from a fresh generator of the same seed.
    return sample_scene(np.random.default_rng(seed), None, edition)


@lru_cache(maxsize=65536)
def render_plan(seed: int) -> tuple[str, tuple[str, ...]]:
    """The art style and player colours that ``renderer.render_random(seed)`` will draw (cheap: no rendering)."""
    from renderer.boards import random_board, random_setup

    edition, players = random_setup(seed)
    board = random_board(seed, edition, players)
    return planned_scene(seed).style, tuple(board.players)


def shows_held_out(style: str | None, colours: Iterable[str]) -> bool:
    """Whether a photo in this art style with players of these colours shows something held out of all training."""
    return style == HELD_OUT_STYLE or bool(set(colours) & set(HELD_OUT_COLOURS))


def is_training_seed(seed: int) -> bool:
    """Whether a model may train on ``render_random(seed)``."""
    return 0 <= seed < MAX_TRAINING_SEED and not shows_held_out(*render_plan(seed))


def training_seeds(first: int, count: int, keep: Callable[[int], bool] | None = None) -> list[int]:
    """The first ``count`` training seeds from ``first`` on, skipping held-out ones and those ``keep`` refuses."""
    seeds, seed = [], first
    while len(seeds) < count:
        if seed >= MAX_TRAINING_SEED:
            raise ValueError(f"training seeds must stay below {MAX_TRAINING_SEED}")
        if is_training_seed(seed) and (keep is None or keep(seed)):
            seeds.append(seed)
        seed += 1
    return seeds
