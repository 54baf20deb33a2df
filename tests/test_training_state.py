"""The trainer's typed state reads and writes checkpoint/state.json as the state dict did (no model needed)."""

from __future__ import annotations

import json

from figlang.training.loop import TrainState

OLD_KEYS = ["step", "epoch", "group", "best", "bad_evals", "finished", "last_eval_step", "config", "data", "evals", "running_losses"]


def test_a_fresh_state_writes_the_keys_of_the_old_state_dict():
    state = TrainState(config={"lr": 3e-5}, data={"train_items": 4})
    assert list(state.to_dict()) == OLD_KEYS  # no best_value / skipped_steps until they have a value, as before
    state.best_value, state.skipped_steps = 0.5, 2
    assert list(state.to_dict()) == [*OLD_KEYS[:-1], "best_value", "skipped_steps", "running_losses"]


def test_a_checkpoint_from_before_best_value_reads_back_and_round_trips():
    saved = {
        "step": 7,
        "epoch": 1,
        "group": 3,
        "best": {"step": 5, "epoch": 0.8, "dev_accuracy": 0.6},
        "bad_evals": 1,
        "finished": None,
        "last_eval_step": 5,
        "config": {"lr": 3e-5},
        "data": {"train_items": 4},
        "evals": [{"step": 5, "epoch": 0.8, "accuracy": 0.6}],
        "running_losses": [0.7],
    }
    state = TrainState.from_dict(json.loads(json.dumps(saved)))
    assert state.best_value is None and state.skipped_steps == 0  # patience falls back to the kept model's value
    assert state.step == 7 and state.best == saved["best"]
    assert state.to_dict() == saved
