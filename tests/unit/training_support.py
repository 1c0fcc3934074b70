"""The copy task and the small model the training tests share (test_training, test_scale, test_checkpoint)."""

from __future__ import annotations

import random

import torch

from transformer_edu import Transformer, TransformerConfig
from transformer_edu.data import Vocab, copy_task_splits, make_batches
from transformer_edu.training import LabelSmoothingLoss, fit, make_optimizer, warmup_schedule

SPLITS = copy_task_splits(0, n_train=256, n_valid=64, n_test=8, max_len=6)
SRC_VOCAB = Vocab.build([s for s, _ in SPLITS["train"]])
TGT_VOCAB = Vocab.build([t for _, t in SPLITS["train"]])


def train_batches(epoch):
    """Eight batches of 32 copy-task pairs, in a new order every epoch."""
    return make_batches(SPLITS["train"], SRC_VOCAB, TGT_VOCAB, 32, shuffle=True, seed=epoch)


VALID = list(make_batches(SPLITS["valid"], SRC_VOCAB, TGT_VOCAB, 64))


def setup(seed=0, dropout=0.1):
    """A seeded one-layer model, Adam with the paper's settings, the warm-up schedule and the loss."""
    torch.manual_seed(seed)
    random.seed(seed)
    config = TransformerConfig(len(SRC_VOCAB), len(TGT_VOCAB), d_model=32, n_heads=4, d_ff=64, n_layers=1,
                               dropout=dropout, max_len=32)
    model = Transformer(config)
    optimizer = make_optimizer(model)
    scheduler = warmup_schedule(optimizer, 32, warmup=20)
    return model, optimizer, scheduler, LabelSmoothingLoss(len(TGT_VOCAB), 0.1)


def run(epochs, **kwargs):
    """``setup()`` trained by Chapter 7's ``fit`` for ``epochs``: (model, optimizer, scheduler, history)."""
    model, optimizer, scheduler, loss_fn = setup()
    history = fit(model, train_batches, VALID, epochs=epochs, optimizer=optimizer, scheduler=scheduler,
                  loss_fn=loss_fn, progress=False, **kwargs)
    return model, optimizer, scheduler, history


def weights_differ(a, b):
    """The largest difference between two models' weights."""
    return max(float((a.state_dict()[k] - b.state_dict()[k]).abs().max()) for k in a.state_dict())
