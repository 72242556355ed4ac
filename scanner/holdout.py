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

from functools import lru_cache

import numpy as np

MAX_TRAINING_SEED = 1_000_000
HELD_OUT_STYLE = "vintage"
HELD_OUT_COLOURS = ("orange", "purple")


@lru_cache(maxsize=65536)
def render_plan(seed: int) -> tuple[str, tuple[str, ...]]:
    """The art style and player colours that ``renderer.render_random(seed)`` will draw (cheap: no rendering)."""
    from renderer.boards import random_board, random_setup
    from renderer.scene import sample_scene

    edition, players = random_setup(seed)
    board = random_board(seed, edition, players)
    # render_board draws the scene first from a fresh generator of the same seed.
    style = sample_scene(np.random.default_rng(seed), None, edition).style
    return style, tuple(board.players)


def is_training_seed(seed: int) -> bool:
    """Whether a model may train on ``render_random(seed)``."""
    if not 0 <= seed < MAX_TRAINING_SEED:
        return False
    style, colours = render_plan(seed)
    return style != HELD_OUT_STYLE and not set(colours) & set(HELD_OUT_COLOURS)


def training_seeds(first: int, count: int) -> list[int]:
    """The first ``count`` training seeds from ``first`` on, skipping held-out ones."""
    seeds, seed = [], first
    while len(seeds) < count:
        if seed >= MAX_TRAINING_SEED:
            raise ValueError(f"training seeds must stay below {MAX_TRAINING_SEED}")
        if is_training_seed(seed):
            seeds.append(seed)
        seed += 1
    return seeds
