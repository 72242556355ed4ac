"""What the training-data builders may render: the planned scene, held-out seeds, and chosen seeds."""

import json

import pytest

from renderer import render_random
from scanner.holdout import (HELD_OUT_COLOURS, HELD_OUT_STYLE, MAX_TRAINING_SEED, is_training_seed, planned_scene,
                             render_plan, training_seeds)


@pytest.mark.parametrize("seed", [3, 71003, 900017])
def test_planned_scene_is_the_scene_the_render_draws(seed):
    truth = render_random(seed, width=160, height=120).truth
    assert json.loads(json.dumps(planned_scene(seed).as_dict())) == truth["render"]["scene"]
    assert render_plan(seed) == (truth["style"], tuple(truth["players"]))


def test_training_seeds_skip_held_out_and_refused_seeds():
    def low(seed):
        return planned_scene(seed).elevation_deg <= 55

    everything = training_seeds(71000, 80)
    assert everything == sorted(everything) and everything[0] >= 71000
    assert all(render_plan(s)[0] != HELD_OUT_STYLE and not set(render_plan(s)[1]) & set(HELD_OUT_COLOURS)
               for s in everything)
    assert len(everything) < everything[-1] - 71000 + 1  # some seeds in the range are held out
    kept = [s for s in everything if low(s)]
    assert 12 <= len(kept) < len(everything)
    assert training_seeds(71000, 12, low) == kept[:12]


def test_training_seeds_stop_below_the_evaluation_seeds():
    assert not is_training_seed(MAX_TRAINING_SEED)
    with pytest.raises(ValueError):
        training_seeds(MAX_TRAINING_SEED - 3, 5)


@pytest.mark.parametrize("seed", [5, 71011])
def test_planned_scene_of_an_edition_is_the_scene_render_board_draws(seed):
    from renderer import render_board
    from renderer.boards import random_board

    board = random_board(seed, "2022", 3)
    truth = render_board(board, seed, width=160, height=120).truth
    assert json.loads(json.dumps(planned_scene(seed, "2022").as_dict())) == truth["render"]["scene"]
