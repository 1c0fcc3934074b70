"""Label smoothing, the warm-up schedule, the training loop and checkpoints (Chapter 7)."""

import math
import os
import random

import pytest
import torch
import torch.nn.functional as F

from transformer_edu import Transformer, TransformerConfig
from transformer_edu.checkpoint import load_checkpoint, load_model, resume, save_checkpoint
from transformer_edu.data import Vocab, copy_task_splits, make_batches
from transformer_edu.training import (
    AveragedWeights,
    BestWeights,
    LabelSmoothingLoss,
    evaluate,
    fit,
    make_optimizer,
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


# --------------------------------------------------------------------------
# The training loop on the copy task
# --------------------------------------------------------------------------

SPLITS = copy_task_splits(0, n_train=256, n_valid=64, n_test=8, max_len=6)
SRC_VOCAB = Vocab.build([s for s, _ in SPLITS["train"]])
TGT_VOCAB = Vocab.build([t for _, t in SPLITS["train"]])


def train_batches(epoch):
    return make_batches(SPLITS["train"], SRC_VOCAB, TGT_VOCAB, 32, shuffle=True, seed=epoch)


VALID = list(make_batches(SPLITS["valid"], SRC_VOCAB, TGT_VOCAB, 64))


def setup(seed=0, dropout=0.1):
    torch.manual_seed(seed)
    random.seed(seed)
    config = TransformerConfig(len(SRC_VOCAB), len(TGT_VOCAB), d_model=32, n_heads=4, d_ff=64, n_layers=1,
                               dropout=dropout, max_len=32)
    model = Transformer(config)
    optimizer = make_optimizer(model)
    scheduler = warmup_schedule(optimizer, 32, warmup=20)
    return model, optimizer, scheduler, LabelSmoothingLoss(len(TGT_VOCAB), 0.1)


def run(epochs, **kwargs):
    model, optimizer, scheduler, loss_fn = setup()
    history = fit(model, train_batches, VALID, epochs=epochs, optimizer=optimizer, scheduler=scheduler,
                  loss_fn=loss_fn, progress=False, **kwargs)
    return model, optimizer, scheduler, history


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
# Checkpoints
# --------------------------------------------------------------------------


def test_resuming_from_a_checkpoint_continues_exactly(tmp_path):
    *_, uninterrupted = run(3)
    model, optimizer, scheduler, history = run(1)
    path = save_checkpoint(tmp_path / "ckpt.pt", model, optimizer, scheduler, epoch=1, extra={"history": history})
    torch.manual_seed(123)  # scramble the generators: resume must restore them
    random.seed(123)
    model, optimizer, scheduler, loss_fn = setup(seed=99)  # fresh objects, different weights
    checkpoint = resume(path, model, optimizer, scheduler)
    assert checkpoint["epoch"] == 1 and checkpoint["step"] == 8
    history = fit(model, train_batches, VALID, epochs=3, optimizer=optimizer, scheduler=scheduler,
                  loss_fn=loss_fn, start_epoch=checkpoint["epoch"], history=checkpoint["extra"]["history"],
                  progress=False)
    assert history["train_loss"] == uninterrupted["train_loss"]
    assert history["valid_loss"] == uninterrupted["valid_loss"]
    assert history["lr"] == uninterrupted["lr"]


def test_checkpoint_round_trip(tmp_path):
    model, optimizer, scheduler, _ = setup()
    vocab = {"src_vocab": SRC_VOCAB.to_dict()}
    path = save_checkpoint(tmp_path, model, optimizer, scheduler, epoch=4, extra=vocab)
    assert path == tmp_path / "checkpoint.pt" and os.listdir(tmp_path) == ["checkpoint.pt"]  # no temp file left
    checkpoint = load_checkpoint(tmp_path)
    assert checkpoint["config"] == model.config.to_dict() and checkpoint["epoch"] == 4
    assert Vocab.from_dict(checkpoint["extra"]["src_vocab"]) == SRC_VOCAB
    assert checkpoint["rng"]["torch"].dtype == torch.uint8
    loaded = load_model(path)
    assert not loaded.training
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))


def test_a_failed_save_leaves_the_old_checkpoint_intact(tmp_path, monkeypatch):
    model, *_ = setup()
    path = save_checkpoint(tmp_path / "ckpt.pt", model, epoch=1)
    before = path.read_bytes()

    def broken_save(obj, f):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, model, epoch=2)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]


class Payload:
    """Stands for any object whose unpickling could run code."""


def test_only_plain_values_are_saved_or_loaded(tmp_path):
    model, *_ = setup()
    with pytest.raises(TypeError, match=r"extra\['vocab'\] is a Vocab"):
        save_checkpoint(tmp_path / "a.pt", model, extra={"vocab": SRC_VOCAB})

    checkpoint = load_checkpoint(save_checkpoint(tmp_path / "b.pt", model))
    checkpoint["extra"] = {"payload": Payload()}
    torch.save(checkpoint, tmp_path / "evil.pt")
    with pytest.raises(ValueError, match="could run arbitrary code, so it was refused"):
        load_checkpoint(tmp_path / "evil.pt")
    torch.save({"weights": model.state_dict()}, tmp_path / "plain.pt")
    with pytest.raises(ValueError, match="not a transformer_edu checkpoint"):
        load_checkpoint(tmp_path / "plain.pt")
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "missing.pt")


def test_a_checkpoint_from_before_the_output_layer_was_renamed_loads(tmp_path):
    model, *_ = setup()
    path = save_checkpoint(tmp_path / "c.pt", model)
    stored = torch.load(path, weights_only=False)
    stored["model"] = {k.replace("output.", "generator.", 1): v for k, v in stored["model"].items()}
    torch.save(stored, path)  # the names it had until 2026-11-27
    assert any(k.startswith("generator.") for k in torch.load(path, weights_only=False)["model"])
    loaded = load_model(path)
    for name, tensor in model.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], tensor), name


def test_load_model_names_what_does_not_fit(tmp_path):
    model, *_ = setup()
    checkpoint = load_checkpoint(save_checkpoint(tmp_path / "c.pt", model))
    checkpoint["config"]["d_ff"] = 128
    del checkpoint["model"]["output.bias"]
    checkpoint["model"]["extra.weight"] = torch.zeros(1)
    with pytest.raises(ValueError) as error:
        load_model(checkpoint)
    message = str(error.value)
    assert "missing from the checkpoint (1):\n    output.bias" in message
    assert "unexpected in the checkpoint (1):\n    extra.weight" in message
    assert "encoder.layers.0.feed_forward.w_1.weight: checkpoint (64, 32), model (128, 32)" in message


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
    from transformer_edu import training

    bars = []

    class Recorded(notebook.tqdm):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            bars.append(self)

    monkeypatch.setattr(training, "tqdm", Recorded)
    for stop_early in (True, False):
        model, optimizer, scheduler, loss_fn = setup()
        fit(model, train_batches, VALID, epochs=2 if not stop_early else 5, optimizer=optimizer,
            scheduler=scheduler, loss_fn=loss_fn, on_epoch_end=_stop_after_two(model), progress=True)
        widget = bars[-1].container.children[1]
        assert (widget.value, widget.max, widget.bar_style) == (2, 2, "success")  # red ("danger") before


# --------------------------------------------------------------------------
# The ablation without source positional encoding (Chapter 7)
# --------------------------------------------------------------------------


def test_without_source_positions_the_encoder_sees_a_bag_and_the_decoder_is_unchanged():
    def model(src_positional):
        torch.manual_seed(0)
        config = TransformerConfig(12, 10, d_model=16, n_heads=2, d_ff=32, n_layers=2, max_len=20,
                                   src_positional=src_positional)
        return Transformer(config).eval()

    with_pe, without = model(True), model(False)
    assert all(torch.equal(a, b) for a, b in zip(with_pe.state_dict().values(), without.state_dict().values()))
    src = torch.tensor([[4, 5, 6, 7, 8, 9]])  # (1, S), no padding
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    tgt = torch.tensor([[1, 4, 5, 6]])  # (1, T)
    with torch.no_grad():
        memory = without.encode(src)  # (1, S, D)
        torch.testing.assert_close(without.encode(src[:, perm]), memory[:, perm])  # rows permute with tokens
        torch.testing.assert_close(without(src[:, perm], tgt), without(src, tgt))  # the output ignores order
        assert not torch.allclose(with_pe(src[:, perm], tgt), with_pe(src, tgt), atol=1e-4)
        plain = without.encoder(without.src_embed(src) * without.embed_scale, None)
        torch.testing.assert_close(memory, plain)  # nothing added to the embeddings
        shared = with_pe.encode(src)
        torch.testing.assert_close(without.decode(tgt, shared), with_pe.decode(tgt, shared))  # decoder: same
        assert not torch.allclose(without.decode(tgt[:, [0, 2, 1, 3]], shared)[:, 3],
                                  without.decode(tgt, shared)[:, 3], atol=1e-4)  # the target keeps positions
    with pytest.raises(TypeError, match="src_positional must be a bool"):
        TransformerConfig(12, 10, src_positional="no")


def test_train_task_takes_a_changed_recipe():
    from dataclasses import replace

    from transformer_edu.recipes import RECIPES, Recipe, train_task

    recipe = replace(RECIPES["reverse"], src_positional=False, d_model=32, d_ff=64, n_layers=1)
    translator, metrics = train_task("reverse", recipe=recipe, epochs=1, progress=False)
    assert translator.model.config.src_positional is False and translator.model.config.d_model == 32
    assert metrics["recipe"]["src_positional"] is False and metrics["epochs_run"] == 1
    assert isinstance(RECIPES["reverse"], Recipe) and RECIPES["reverse"].src_positional is True
    with pytest.raises(TypeError, match="recipe must be a Recipe"):
        train_task("reverse", recipe={"epochs": 1})


def test_train_task_rewrites_every_source_with_src_transform():
    from dataclasses import replace

    from transformer_edu.recipes import RECIPES, task_splits, train_task

    seen = []

    def reverse_back(source: str) -> str:
        seen.append(source)
        return " ".join(reversed(source.split()))

    recipe = replace(RECIPES["reverse"], d_model=16, n_heads=2, d_ff=32, n_layers=1)
    translator, metrics = train_task("reverse", recipe=recipe, epochs=1, progress=False, src_transform=reverse_back)
    splits = task_splits("reverse")
    assert seen == [src for name in splits for src, _ in splits[name]]  # every split, every source, once
    assert metrics["src_transform"] == "reverse_back" and translator.src_tokenizer is None
    with pytest.raises(TypeError, match="src_transform must be a function"):
        train_task("reverse", recipe=recipe, epochs=1, src_transform="sorted")


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


# --------------------------------------------------------------------------
# Steps, gradient accumulation and resuming mid-epoch (Chapter 9)
# --------------------------------------------------------------------------


def weights_differ(a, b):
    return max(float((a.state_dict()[k] - b.state_dict()[k]).abs().max()) for k in a.state_dict())


def run_without_dropout(epochs, **kwargs):
    model, optimizer, scheduler, loss_fn = setup(dropout=0.0)
    history = fit(model, train_batches, VALID, epochs=epochs, optimizer=optimizer, scheduler=scheduler,
                  loss_fn=loss_fn, progress=False, **kwargs)
    return model, optimizer, scheduler, history


@pytest.mark.parametrize("accumulate", [2, 3, 40])
def test_accumulating_micro_batches_gives_the_update_of_the_whole_batch(accumulate):
    """Each micro-batch's mean loss is weighted by its share of the batch's tokens (40 > 32 rows: some
    micro-batches are empty and only add zeros)."""
    whole, _, _, history = run_without_dropout(1, max_steps=6)
    parts, _, _, history_parts = run_without_dropout(1, max_steps=6, accumulate=accumulate)
    assert weights_differ(whole, parts) < 1e-5
    assert history_parts["train_loss"] == pytest.approx(history["train_loss"], rel=1e-6)
    assert history_parts["tokens"] == history["tokens"]


def test_unweighted_micro_batches_would_not_give_the_same_update():
    """The baseline the weighting is needed against: the plain mean of the micro-batches' mean losses."""
    whole, _, _, _ = run_without_dropout(1, max_steps=6)
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
    _, _, scheduler, history = run_without_dropout(5, max_steps=11, on_epoch_end=lambda e, h: calls.append(e))
    assert scheduler.last_epoch == 11 and history["step"] == [8, 11] and history["epoch"] == [1, 2]
    assert calls == [1, 2] and history["updates"] == [8, 3]


def test_resuming_mid_epoch_continues_exactly():
    straight, _, _, history = run_without_dropout(3, max_steps=20)
    model, optimizer, scheduler, first = run_without_dropout(3, max_steps=11)
    state = {k: list(v) for k, v in first.items()}
    fit(model, train_batches, VALID, epochs=3, optimizer=optimizer, scheduler=scheduler,
        loss_fn=LabelSmoothingLoss(len(TGT_VOCAB), 0.1), progress=False, max_steps=20, start_epoch=1,
        start_batch=3, history=state)
    assert weights_differ(straight, model) == 0.0
    assert state["step"] == history["step"] == [8, 16, 20]
    assert state["train_loss"] == pytest.approx(history["train_loss"], rel=1e-12)  # epoch 2 counts all 8 batches


def test_fit_names_bad_step_arguments():
    model, optimizer, scheduler, loss_fn = setup()
    for kwargs, message in (({"max_steps": 0}, "max_steps"), ({"accumulate": 0}, "accumulate"),
                            ({"start_batch": -1}, "start_batch"), ({"world": 2}, "world must be")):
        with pytest.raises((ValueError, TypeError), match=message):
            fit(model, train_batches, epochs=1, optimizer=optimizer, loss_fn=loss_fn, progress=False, **kwargs)


def test_train_task_resumes_across_epochs_with_its_averages(tmp_path):
    """A run stopped after 12 steps (an epoch and a half of the shortened copy task) and resumed
    to 40 equals the run of 40 straight: weights, averaged weights, history."""
    from dataclasses import replace

    from transformer_edu.recipes import RECIPES, train_task

    recipe = replace(RECIPES["copy"], average_last=3, batch_size=512, d_model=32, d_ff=64, n_layers=1)
    quiet = dict(recipe=recipe, progress=False, log=lambda message: None)
    straight, metrics = train_task("copy", max_steps=40, out=tmp_path / "a", **quiet)
    train_task("copy", max_steps=12, out=tmp_path / "b", **quiet)
    resumed, again = train_task("copy", max_steps=40, resume=tmp_path / "b" / "checkpoint.pt", out=tmp_path / "b",
                                **quiet)
    assert weights_differ(straight.model, resumed.model) == 0.0
    for key in ("train_loss", "valid_exact_match", "step", "tokens"):
        assert again["history"][key] == pytest.approx(metrics["history"][key], rel=1e-12), key
    stored = load_checkpoint(tmp_path / "b")["extra"]["resume"]
    assert len(stored["averaged"]["weights"]) == min(3, metrics["epochs_run"] - 1)
