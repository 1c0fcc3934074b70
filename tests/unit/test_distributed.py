"""transformer_edu.distributed: who is who in a torchrun job, and each process's share of a batch
(the two-process runs are in tests/apps/test_distributed.py)."""

import pytest
import torch

from transformer_edu.data import Batch, Vocab, make_batches
from transformer_edu.distributed import World, init_from_env, my_parts

PAIRS = [(" ".join("abcdefg"[: 1 + i % 7]), " ".join("xyz"[: 1 + i % 3])) for i in range(10)]
SRC, TGT = Vocab.build([s for s, _ in PAIRS]), Vocab.build([t for _, t in PAIRS])


def batch() -> Batch:
    return next(make_batches(PAIRS, SRC, TGT, 10))


def test_without_torchrun_it_is_one_process(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    world = init_from_env()
    assert world == World() and world.is_main and not world.distributed
    assert world.all_reduce_sum([1.5, 2.0]) == [1.5, 2.0] and world.broadcast(True) is True


@pytest.mark.parametrize("env, message", [({"RANK": "x", "WORLD_SIZE": "2"}, "whole numbers"),
                                          ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK=2 is not in")])
def test_bad_environment_is_named(monkeypatch, env, message):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=message):
        init_from_env()


def test_the_processes_parts_deal_out_every_row_once():
    whole = batch()
    pads = Vocab.pad_id
    seen = []
    for rank in range(2):
        for part in my_parts(whole, World(rank, 2), accumulate=2):
            assert part is not None and (part.tgt_out != pads).sum() == part.n_tokens
            assert (part.src != pads).any(dim=0).all()  # no column of padding only
            seen += [tuple(row[row != pads].tolist()) for row in part.src]
    assert sorted(seen) == sorted(tuple(row[row != pads].tolist()) for row in whole.src)
    assert sum(p.n_tokens for r in range(2) for p in my_parts(whole, World(r, 2), 2)) == whole.n_tokens


def test_more_parts_than_rows_leaves_empty_parts():
    parts = batch().split(12)
    assert [p is None for p in parts] == [False] * 10 + [True] * 2
    with pytest.raises(ValueError, match="Batch.split: parts must be at least 1, got 0"):
        batch().split(0)


def test_a_part_computes_what_its_rows_compute_in_the_whole_batch(tiny_model):
    model = tiny_model(src_vocab_size=len(SRC), tgt_vocab_size=len(TGT))
    whole = batch()
    part = whole.split(3)[1]
    with torch.no_grad():
        full, mine = model(whole.src, whole.tgt_in), model(part.src, part.tgt_in)  # (B, T, V), (b, t, V)
    torch.testing.assert_close(mine, full[1::3, :mine.shape[1]], atol=1e-5, rtol=1e-5)
