"""Checkpoints (transformer_edu.training.checkpoint, Chapter 7): the model a user keeps, the state that
resumes training, written atomically with the usual permissions, and read without running code."""

import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from training_support import SRC_VOCAB, TGT_VOCAB, VALID, run, setup, train_batches
from transformer_edu.data import Vocab
from transformer_edu.training import fit
from transformer_edu.training.checkpoint import (
    CHECKPOINT_NAME,
    RESUME_NAME,
    load_checkpoint,
    load_model,
    load_training_state,
    resume,
    save_checkpoint,
    save_training_state,
)

pytestmark = pytest.mark.usefixtures("one_thread")
REPO_ROOT = Path(__file__).resolve().parents[2]
NOT_OURS = "is not a checkpoint written by python -m transformer_edu.train"


def test_a_checkpoint_holds_the_model_and_what_the_caller_adds(tmp_path):
    model, *_ = setup()
    path = save_checkpoint(tmp_path, model, extra={"src_vocab": SRC_VOCAB.to_dict()})
    assert path == tmp_path / CHECKPOINT_NAME and os.listdir(tmp_path) == [CHECKPOINT_NAME]  # no temp file left
    checkpoint = load_checkpoint(tmp_path)
    assert set(checkpoint) == {"format_version", "config", "model", "extra"}
    assert checkpoint["config"] == model.config.to_dict()
    assert Vocab.from_dict(checkpoint["extra"]["src_vocab"]) == SRC_VOCAB
    loaded = load_model(path)
    assert not loaded.training
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))
    weights = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    assert path.stat().st_size < 1.1 * weights + 20_000  # the weights, and little else


def test_the_training_state_resumes_a_run_exactly(tmp_path):
    *_, uninterrupted = run(3)
    model, optimizer, scheduler, history = run(1)
    path = save_training_state(tmp_path, model, optimizer, scheduler, epoch=1, extra={"history": history})
    assert path == tmp_path / RESUME_NAME
    torch.manual_seed(123)  # scramble the generators: resume must restore them
    random.seed(123)
    model, optimizer, scheduler, loss_fn = setup(seed=99)  # fresh objects, different weights
    state = resume(tmp_path, model, optimizer, scheduler)
    assert state["epoch"] == 1 and scheduler.last_epoch == 8 and state["rng"]["torch"].dtype == torch.uint8
    history = fit(model, train_batches, VALID, epochs=3, optimizer=optimizer, scheduler=scheduler,
                  loss_fn=loss_fn, start_epoch=state["epoch"], history=state["extra"]["history"], progress=False)
    assert history["train_loss"] == uninterrupted["train_loss"]
    assert history["valid_loss"] == uninterrupted["valid_loss"]
    assert history["lr"] == uninterrupted["lr"]


def test_the_two_files_are_not_taken_for_each_other(tmp_path):
    model, optimizer, scheduler, _ = setup()
    save_checkpoint(tmp_path, model)
    save_training_state(tmp_path, model, optimizer, scheduler)
    assert sorted(os.listdir(tmp_path)) == [CHECKPOINT_NAME, RESUME_NAME]
    assert load_training_state(tmp_path)["optimizer"] is not None  # a directory stands for its resume.pt
    with pytest.raises(ValueError, match="is the state python -m transformer_edu.train keeps to resume training"):
        load_checkpoint(tmp_path / RESUME_NAME)
    with pytest.raises(ValueError, match="holds a model, not the state to resume training"):
        load_training_state(tmp_path / CHECKPOINT_NAME)


def test_files_get_the_permissions_of_any_new_file(tmp_path):
    model, optimizer, *_ = setup()
    umask = os.umask(0o022)
    try:
        for path in (save_checkpoint(tmp_path, model), save_training_state(tmp_path, model, optimizer)):
            assert path.stat().st_mode & 0o777 == 0o644  # 0666 less the umask, as `touch` makes them
    finally:
        os.umask(umask)


def test_a_failed_save_leaves_the_old_checkpoint_intact(tmp_path, monkeypatch):
    model, *_ = setup()
    path = save_checkpoint(tmp_path / "ckpt.pt", model, extra={"epoch": 1})
    before = path.read_bytes()

    def broken_save(obj, f):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, model, extra={"epoch": 2})
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]


KILLED_MID_SAVE = textwrap.dedent("""
    import io, sys, time
    import torch
    from transformer_edu.training.recipes import RECIPES, train_task

    saves, real_save = [], torch.save

    def slow_save(obj, f, *args, **kwargs):  # epoch 1 saves its two files; epoch 2 dies halfway through its first
        saves.append(1)
        if len(saves) <= 2:
            return real_save(obj, f, *args, **kwargs)
        whole = io.BytesIO()
        real_save(obj, whole, *args, **kwargs)
        f.write(whole.getvalue()[: len(whole.getvalue()) // 2])
        f.flush()
        print("saving", flush=True)
        time.sleep(600)

    torch.save = slow_save
    recipe = RECIPES["copy"].changed(d_model=16, n_heads=2, d_ff=32, n_layers=1, batch_size=256)
    train_task("copy", recipe=recipe, epochs=3, out=sys.argv[1], progress=False, measure=False)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX's")
def test_a_run_killed_while_it_saves_leaves_the_last_checkpoints_whole(tmp_path):
    """A real training process, killed (SIGKILL) in the middle of writing epoch 2's files: epoch 1's
    checkpoint and training state still load, and the run resumes from them."""
    from transformer_edu.training.recipes import RECIPES, train_task

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, "-c", KILLED_MID_SAVE, str(tmp_path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout.readline() == "saving\n", process.stderr.read()
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    leftovers = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert len(leftovers) == 1 and leftovers[0].startswith(f".{RESUME_NAME}.")  # the half-written file
    assert load_checkpoint(tmp_path)["extra"]["history"]["epoch"] == [1]
    assert load_training_state(tmp_path)["extra"]["history"]["epoch"] == [1]
    recipe = RECIPES["copy"].changed(d_model=16, n_heads=2, d_ff=32, n_layers=1, batch_size=256)
    _, metrics = train_task("copy", recipe=recipe, epochs=2, out=tmp_path, resume=tmp_path, progress=False,
                            measure=False)
    assert metrics["history"]["epoch"] == [1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == [CHECKPOINT_NAME, RESUME_NAME]  # the leftover is gone


class Payload:
    """Stands for any object whose unpickling could run code."""


def test_only_plain_values_are_saved_or_loaded(tmp_path):
    model, *_ = setup()
    with pytest.raises(TypeError, match=r"extra\['vocab'\] is a Vocab"):
        save_checkpoint(tmp_path / "a.pt", model, extra={"vocab": SRC_VOCAB})
    stored = torch.load(save_checkpoint(tmp_path / "b.pt", model), weights_only=True)
    stored["extra"] = {"payload": Payload()}
    torch.save(stored, tmp_path / "evil.pt")
    with pytest.raises(ValueError, match=f"{NOT_OURS}: it holds objects other than tensors and plain Python "
                                         "values, which could run code when loaded, so it was not opened") as error:
        load_checkpoint(tmp_path / "evil.pt")
    assert "weights_only=False" not in str(error.value)  # the unsafe way out is never suggested


@pytest.mark.parametrize("content, why", [
    (b'{"exact_match": 1.0}\n', "it is not a PyTorch file, or it was cut off while it was written"),
    ("cut", "it is not a PyTorch file, or it was cut off while it was written"),
    ("plain", "it holds no transformer_edu format_version"),
])
def test_what_is_not_a_checkpoint_is_named(tmp_path, content, why):
    model, *_ = setup()
    path = tmp_path / "file.pt"
    if content == "cut":
        whole = save_checkpoint(tmp_path / "whole.pt", model).read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
    elif content == "plain":
        torch.save({"weights": model.state_dict()}, path)
    else:
        path.write_bytes(content)
    with pytest.raises(ValueError, match=f"{NOT_OURS}: {why}"):
        load_checkpoint(path)


def test_missing_files_and_empty_directories_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint at .*missing.pt.*no such file or directory"):
        load_checkpoint(tmp_path / "missing.pt")
    with pytest.raises(FileNotFoundError, match="is a directory without checkpoint.pt"):
        load_checkpoint(tmp_path)
    with pytest.raises(FileNotFoundError, match="is a directory without resume.pt"):
        load_training_state(tmp_path)


def test_a_checkpoint_of_format_1_still_loads_to_translate_but_not_to_resume(tmp_path):
    """Until 2026-11-28 one file held the model and the training state (format 1)."""
    model, optimizer, scheduler, _ = setup()
    torch.save({"format_version": 1, "torch_version": "2.13.0", "config": model.config.to_dict(),
                "model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": None,
                "rng": {"torch": torch.get_rng_state()}, "epoch": 1, "step": 8,
                "extra": {"src_vocab": SRC_VOCAB.to_dict(), "tgt_vocab": TGT_VOCAB.to_dict()}},
               tmp_path / CHECKPOINT_NAME)
    loaded = load_model(tmp_path)
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), model.state_dict().values()))
    with pytest.raises(ValueError, match="format 1; such a run can be translated with, not resumed"):
        load_training_state(tmp_path / CHECKPOINT_NAME)


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
