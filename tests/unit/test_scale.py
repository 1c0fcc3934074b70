"""Chapter 9's loop (transformer_edu.training.scale): Chapter 7's updates when nothing is added, and
what it adds: micro-batches, a budget of steps, resuming mid-epoch. (Several processes:
tests/apps/test_torchrun.py; 16-bit precision: test_mixed_precision.py.)"""

import pytest
import torch

from training_support import TGT_VOCAB, VALID, run, setup, train_batches, weights_differ
from transformer_edu.training import LabelSmoothingLoss
from transformer_edu.training.distributed import World
from transformer_edu.training.scale import Updater, fit_at_scale

pytestmark = pytest.mark.usefixtures("one_thread")


def run_at_scale(epochs, dropout=0.1, accumulate=1, **kwargs):
    model, optimizer, scheduler, loss_fn = setup(dropout=dropout)
    updater = Updater(model, optimizer, loss_fn, scheduler, accumulate=accumulate)
    history = fit_at_scale(model, train_batches, VALID, epochs=epochs, updater=updater, progress=False, **kwargs)
    return model, optimizer, scheduler, history


def test_with_nothing_added_it_makes_chapter_7s_updates_bit_for_bit():
    """One process, one micro-batch, float32, dropout on: the same weights and history as ``fit``."""
    chapter_7, _, _, history_7 = run(3)
    chapter_9, _, _, history_9 = run_at_scale(3)
    assert weights_differ(chapter_7, chapter_9) == 0.0
    for key in ("train_loss", "valid_loss", "valid_nll", "lr", "grad_norm", "step", "tokens", "updates"):
        assert history_9[key] == history_7[key], key


@pytest.mark.parametrize("accumulate", [2, 3, 40])
def test_accumulating_micro_batches_gives_the_update_of_the_whole_batch(accumulate):
    """Each micro-batch's mean loss is weighted by its share of the batch's tokens (40 > 32 rows: some
    micro-batches are empty and only add zeros)."""
    whole, _, _, history = run_at_scale(1, dropout=0.0, max_steps=6)
    parts, _, _, history_parts = run_at_scale(1, dropout=0.0, max_steps=6, accumulate=accumulate)
    assert weights_differ(whole, parts) < 1e-5
    assert history_parts["train_loss"] == pytest.approx(history["train_loss"], rel=1e-6)
    assert history_parts["tokens"] == history["tokens"]


def test_unweighted_micro_batches_would_not_give_the_same_update():
    """The baseline the weighting is needed against: the plain mean of the micro-batches' mean losses."""
    whole, _, _, _ = run_at_scale(1, dropout=0.0, max_steps=6)
    model, optimizer, scheduler, loss_fn = setup(dropout=0.0)
    for batch in list(train_batches(0))[:6]:
        optimizer.zero_grad()
        parts = [p for p in batch.split(3) if p is not None]
        for part in parts:
            (loss_fn(model(part.src, part.tgt_in), part.tgt_out) / len(parts)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
    assert weights_differ(whole, model) > 1e-4


def test_max_steps_stops_mid_epoch_and_records_the_partial_epoch():
    calls = []
    _, _, scheduler, history = run_at_scale(5, dropout=0.0, max_steps=11,
                                            on_epoch_end=lambda e, h: calls.append(e))
    assert scheduler.last_epoch == 11 and history["step"] == [8, 11] and history["epoch"] == [1, 2]
    assert calls == [1, 2] and history["updates"] == [8, 3]


def test_resuming_mid_epoch_continues_exactly():
    straight, _, _, history = run_at_scale(3, dropout=0.0, max_steps=20)
    model, optimizer, scheduler, first = run_at_scale(3, dropout=0.0, max_steps=11)
    state = {k: list(v) for k, v in first.items()}
    updater = Updater(model, optimizer, LabelSmoothingLoss(len(TGT_VOCAB), 0.1), scheduler)
    fit_at_scale(model, train_batches, VALID, epochs=3, updater=updater, progress=False, max_steps=20,
                 start_epoch=1, start_batch=3, history=state)
    assert weights_differ(straight, model) == 0.0
    assert state["step"] == history["step"] == [8, 16, 20]
    assert state["train_loss"] == pytest.approx(history["train_loss"], rel=1e-12)  # epoch 2 counts all 8 batches


def test_bad_arguments_are_named():
    model, optimizer, scheduler, loss_fn = setup()
    for kwargs, message in (({"accumulate": 0}, "accumulate must be at least 1"),
                            ({"world": 2}, "world must be a transformer_edu.training.distributed.World"),
                            ({"amp": "fp32"}, "amp must be None, 'bf16' or 'fp16', got 'fp32'"),
                            ({"clip_norm": -1.0}, "clip_norm must be a positive number")):
        with pytest.raises((ValueError, TypeError), match=message):
            Updater(model, optimizer, loss_fn, **kwargs)
    updater = Updater(model, optimizer, loss_fn, world=World())
    for kwargs, message in (({"max_steps": 0}, "max_steps must be at least 1"),
                            ({"start_batch": -1}, "start_batch must be at least 0"),
                            ({"updater": optimizer}, "updater must be an Updater")):
        with pytest.raises((ValueError, TypeError), match=message):
            fit_at_scale(model, train_batches, **{"epochs": 1, "updater": updater, "progress": False, **kwargs})
    fit_at_scale(model, train_batches, epochs=1, updater=updater, max_steps=2, progress=False)
    with pytest.raises(ValueError, match="max_steps = 2 batches are already done"):
        fit_at_scale(model, train_batches, epochs=1, updater=updater, max_steps=2, start_batch=2, progress=False)
