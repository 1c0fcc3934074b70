"""Chapter 7's training: label smoothing, the warm-up schedule, the loop and the weights it keeps
(transformer_edu.training.loss, .schedule, .loop, .weights)."""

import math

import pytest
import torch
import torch.nn.functional as F

from training_support import SPLITS, TGT_VOCAB, VALID, run, setup, train_batches
from transformer_edu.training import (
    AveragedWeights,
    BestWeights,
    LabelSmoothingLoss,
    evaluate,
    fit,
    make_optimizer,
    noam_lambda,
    noam_rate,
    perplexity,
    warmup_schedule,
)

pytestmark = pytest.mark.usefixtures("one_thread")


# --------------------------------------------------------------------------
# Label smoothing
# --------------------------------------------------------------------------


def smoothed_entropy(eps, V):
    """H(q) of q = (1 − ε) one-hot + ε / V: the gold token has 1 − ε + ε/V, the V − 1 others ε/V."""
    gold, other = 1 - eps + eps / V, eps / V
    return -(gold * math.log(gold) + (V - 1) * other * math.log(other)) if eps else 0.0


@pytest.mark.parametrize("eps", [0.1, 0.3, 0.0])
def test_label_smoothing_is_pytorch_cross_entropy_minus_the_target_entropy(eps):
    torch.manual_seed(0)
    V, pad = 11, 0
    logits = torch.randn(3, 5, V, dtype=torch.float64) * 3  # (B, T, V)
    target = torch.randint(1, V, (3, 5))
    target[0, 3:] = pad
    target[2, 1:] = pad
    ours = LabelSmoothingLoss(V, smoothing=eps, pad_id=pad)(logits, target)
    pytorch = torch.nn.CrossEntropyLoss(label_smoothing=eps, ignore_index=pad)(logits.view(-1, V), target.view(-1))
    assert float(ours) == pytest.approx(float(pytorch) - smoothed_entropy(eps, V), abs=1e-6)


def test_gradients_equal_pytorch_label_smoothing():
    torch.manual_seed(0)
    logits = torch.randn(4, 7, requires_grad=True)
    target = torch.tensor([1, 0, 3, 6])
    LabelSmoothingLoss(7, 0.2, pad_id=0)(logits, target).backward()
    ours = logits.grad.clone()
    logits.grad = None
    F.cross_entropy(logits, target, label_smoothing=0.2, ignore_index=0).backward()
    torch.testing.assert_close(ours, logits.grad)
    assert (ours[1] == 0).all()  # the padding position gets no gradient


def test_target_distribution_and_its_minimum():
    loss_fn = LabelSmoothingLoss(5, smoothing=0.1, pad_id=0)
    q = loss_fn.target_distribution(torch.tensor([2, 4]))
    torch.testing.assert_close(q.sum(-1), torch.ones(2))
    assert q[0].tolist() == pytest.approx([0.02, 0.02, 0.92, 0.02, 0.02])
    assert float(loss_fn(q.log(), torch.tensor([2, 4]))) == pytest.approx(0.0, abs=1e-6)  # predict q: loss 0


def test_label_smoothing_rejects_bad_input():
    loss_fn = LabelSmoothingLoss(5, pad_id=0)
    with pytest.raises(ValueError, match="only padding"):
        loss_fn(torch.randn(2, 5), torch.tensor([0, 0]))
    with pytest.raises(ValueError, match="does not match logits"):
        loss_fn(torch.randn(2, 3, 5), torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="vocab_size"):
        loss_fn(torch.randn(2, 4), torch.tensor([1, 2]))
    with pytest.raises(ValueError, match="smoothing must be in"):
        LabelSmoothingLoss(5, smoothing=1.0)


# --------------------------------------------------------------------------
# Learning-rate schedule
# --------------------------------------------------------------------------


def test_noam_rate_warms_up_then_decays():
    d, warmup = 512, 4000
    assert noam_rate(1, d, warmup) == pytest.approx(d**-0.5 * warmup**-1.5)
    rates = [noam_rate(s, d, warmup) for s in range(1, 3 * warmup)]
    assert max(range(len(rates)), key=rates.__getitem__) + 1 == warmup  # peak at step = warmup
    assert rates[warmup - 1] == pytest.approx((d * warmup) ** -0.5)
    assert noam_rate(4 * warmup, d, warmup) == pytest.approx(rates[warmup - 1] / 2)  # 1/√step decay
    with pytest.raises(ValueError, match="step must be at least 1"):
        noam_rate(0, d, warmup)


def test_scheduler_gives_the_nth_update_the_nth_rate():
    model = torch.nn.Linear(3, 3)
    optimizer = make_optimizer(model)
    assert optimizer.defaults["betas"] == (0.9, 0.98) and optimizer.defaults["eps"] == 1e-9
    scheduler = warmup_schedule(optimizer, d_model=64, warmup=10, factor=2.0)
    for n in range(1, 30):
        assert optimizer.param_groups[0]["lr"] == pytest.approx(2.0 * noam_rate(n, 64, 10))
        optimizer.step()
        scheduler.step()


def test_perplexity_of_a_uniform_guess_is_the_vocabulary_size():
    assert perplexity(math.log(37)) == pytest.approx(37)


def test_the_schedule_names_a_bad_factor():
    with pytest.raises(ValueError, match="factor must be a positive number, got 0"):
        noam_lambda(64, 10, factor=0)
    with pytest.raises(TypeError, match="factor must be a number"):
        noam_lambda(64, 10, factor="1")


# --------------------------------------------------------------------------
# The training loop on the copy task
# --------------------------------------------------------------------------

def test_fit_learns_and_is_deterministic():
    model, _, scheduler, history = run(3)
    assert history["epoch"] == [1, 2, 3] and scheduler.last_epoch == 3 * 8
    assert history["train_loss"] == sorted(history["train_loss"], reverse=True)  # it learns
    assert history["train_loss"][-1] < 0.85 * history["train_loss"][0]
    assert history["valid_loss"][-1] < history["valid_loss"][0]
    assert all(len(v) == 3 for v in history.values())
    valid = evaluate(model, VALID, LabelSmoothingLoss(len(TGT_VOCAB), 0.1))
    assert valid["loss"] == pytest.approx(history["valid_loss"][-1])
    assert valid["nll"] == pytest.approx(history["valid_nll"][-1]) and valid["tokens"] > 0
    assert run(3)[3]["train_loss"] == history["train_loss"]  # same seeds, same numbers


def test_fit_names_bad_arguments():
    model, optimizer, scheduler, loss_fn = setup()
    for kwargs, error, message in (
        ({"clip_norm": 0}, ValueError, "clip_norm must be a positive number"),
        ({"start_epoch": 3}, ValueError, r"start_epoch must be an int in \[0, epochs = 2\]"),
        ({"start_epoch": 1}, ValueError, "history must be the dict fit returned"),
        ({"epochs": 0}, ValueError, "epochs must be at least 1"),
    ):
        with pytest.raises(error, match=message):
            fit(model, train_batches, **{"epochs": 2, **kwargs}, optimizer=optimizer, loss_fn=loss_fn,
                progress=False)
    with pytest.raises(ValueError, match="gave no batches in epoch 0"):
        fit(model, [], epochs=1, optimizer=optimizer, loss_fn=loss_fn, progress=False)


def test_fit_explains_a_one_pass_iterator():
    model, optimizer, scheduler, loss_fn = setup()
    with pytest.raises(TypeError, match="one-pass iterator"):
        fit(model, train_batches(0), epochs=2, optimizer=optimizer, loss_fn=loss_fn, progress=False)


def test_on_epoch_end_can_stop_and_best_weights_restores():
    model, optimizer, scheduler, loss_fn = setup()
    best = BestWeights(model)
    seen = []

    def hook(epoch, history):
        seen.append(epoch)
        best(epoch, history)
        return epoch == 2

    history = fit(model, train_batches, VALID, epochs=5, optimizer=optimizer, scheduler=scheduler,
                  loss_fn=loss_fn, on_epoch_end=hook, progress=False)
    assert seen == [1, 2] and len(history["epoch"]) == 2
    assert best.epoch == 1 + min(range(2), key=history["valid_loss"].__getitem__)
    kept = {k: v.clone() for k, v in best._state.items()}
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    assert best.restore() == best.epoch
    assert all(torch.equal(v, kept[k]) for k, v in model.state_dict().items())


# --------------------------------------------------------------------------
# The progress bar of a run that stops early
# --------------------------------------------------------------------------


def _stop_after_two(model):
    best = BestWeights(model)

    def hook(epoch, history):
        best(epoch, history)
        return epoch == 2

    return hook


def test_a_bar_stopped_early_ends_full_and_says_so(capsys):
    model, optimizer, scheduler, loss_fn = setup()
    fit(model, train_batches, VALID, epochs=5, optimizer=optimizer, scheduler=scheduler, loss_fn=loss_fn,
        on_epoch_end=_stop_after_two(model), progress=True)
    last = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert "100%" in last and "2/2" in last and "stopped=early, 5 planned" in last, last


def test_a_notebook_bar_stopped_early_is_drawn_finished(monkeypatch):
    notebook = pytest.importorskip("tqdm.notebook")
    pytest.importorskip("ipywidgets")
    from transformer_edu.training import loop

    bars = []

    class Recorded(notebook.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bars.append(self)

    monkeypatch.setattr(loop, "tqdm", Recorded)
    for stop_early in (True, False):
        model, optimizer, scheduler, loss_fn = setup()
        fit(model, train_batches, VALID, epochs=2 if not stop_early else 5, optimizer=optimizer,
            scheduler=scheduler, loss_fn=loss_fn, on_epoch_end=_stop_after_two(model), progress=True)
        widget = bars[-1].container.children[1]
        assert (widget.value, widget.max, widget.bar_style) == (2, 2, "success")  # red ("danger") before


# --------------------------------------------------------------------------
# Checkpoint averaging
# --------------------------------------------------------------------------


def test_averaged_weights_are_the_mean_of_the_last_epochs():
    model, optimizer, scheduler, loss_fn = setup()
    averaged = AveragedWeights(model, last=2)
    seen = []

    def hook(epoch, history):
        seen.append({k: v.clone() for k, v in model.state_dict().items()})
        return averaged(epoch, history)

    fit(model, train_batches, VALID, epochs=3, optimizer=optimizer, scheduler=scheduler, loss_fn=loss_fn,
        on_epoch_end=hook, progress=False)
    assert len(averaged) == 2  # epoch 1 was forgotten
    average = averaged.average()
    for key, value in average.items():
        torch.testing.assert_close(value, (seen[1][key] + seen[2][key]) / 2)
    assert not torch.equal(average["output.weight"], seen[2]["output.weight"])
    with averaged.applied():
        torch.testing.assert_close(model.state_dict()["output.weight"], average["output.weight"])
    assert all(torch.equal(v, seen[2][k]) for k, v in model.state_dict().items())  # its own weights are back
    with pytest.raises(ValueError, match="no weights remembered"):
        AveragedWeights(model).average()
    with pytest.raises(ValueError, match="last must be"):
        AveragedWeights(model, last=0)
