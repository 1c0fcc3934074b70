"""The profiling helper of Chapter 8 (transformer_edu.profiling)."""

import pytest
import torch

import transformer_edu as te
from transformer_edu import profiling

pytestmark = pytest.mark.usefixtures("one_thread")


def test_a_matrix_product_lands_in_its_category():
    a, b = torch.randn(512, 512), torch.randn(512, 512)  # milliseconds each: the profiler's own start is small beside it
    report = profiling.profile_steps(lambda: [a @ b for _ in range(4)], steps=4, repeats=3)
    assert list(report.categories) == [*profiling.CATEGORIES, profiling.OUTSIDE]
    assert all(ms >= 0 for ms in report.categories.values())
    assert sum(report.categories.values()) == pytest.approx(report.step_ms, rel=1e-6)
    assert report.categories["matrix products"] == max(report.categories.values())
    assert report.ops_per_step == pytest.approx(1.0)
    assert report.top_ops[0][0] == "aten::matmul" and report.top_ops[0][2] == pytest.approx(1.0)
    assert 0.0 < report.ops_share <= 1.0 and report.reads_per_step == 0


def test_python_work_lands_outside_and_reads_are_counted():
    x = torch.ones(3)

    def run():
        total = 0
        for i in range(20_000):  # pure Python: no operator at all
            total += i
        return [bool(x.sum() > 0) for _ in range(2)]  # two reads of a tensor's value

    report = profiling.profile_steps(run, steps=2, repeats=3)
    assert report.reads_per_step == 1
    assert report.categories[profiling.OUTSIDE] > report.ops_ms  # the loop is outside PyTorch's operators


def test_decoding_profile_and_table(tiny_model):
    model = tiny_model(src_vocab_size=40, tgt_vocab_size=40, max_len=32)
    src = torch.randint(3, 40, (4, 7))
    run = lambda: te.greedy_decode(model, src, max_len=16, min_len=16, bos_id=1, eos_id=2)  # noqa: E731
    report = profiling.profile_steps(run, steps=16, repeats=2, n_top=4)
    assert len(report.top_ops) == 4
    assert report.categories["attention kernel"] > 0 and report.categories["matrix products"] > 0
    assert report.reads_per_step < 1  # greedy decoding does not read the device at every step
    lines = report.table("cached greedy").splitlines()
    assert lines[0].startswith("cached greedy: ") and len(lines) == 1 + 5 + 1 + 4
    assert max(len(line) for line in lines) <= 80


@pytest.mark.parametrize("bad, error", [
    (dict(steps=0), ValueError), (dict(repeats=1.5), TypeError), (dict(warmup=-1), ValueError),
    (dict(run=3), TypeError),
])
def test_bad_arguments(bad, error):
    arguments = dict(run=lambda: None, steps=1) | bad
    with pytest.raises(error, match=next(iter(bad))):
        profiling.profile_steps(**arguments)


def _flop_counter_sees_inference_mode() -> bool:
    from torch.utils.flop_counter import FlopCounterMode

    with torch.inference_mode(), FlopCounterMode(display=False) as counter:
        torch.nn.functional.linear(torch.ones(2, 3), torch.ones(4, 3))
    return counter.get_total_flops() > 0


@pytest.mark.skipif(not _flop_counter_sees_inference_mode(), reason=(
    f"PyTorch {torch.__version__}: FlopCounterMode counts nothing under torch.inference_mode, "
    "where the decoding loops run"))
@pytest.mark.parametrize("use_cache", [True, False])
def test_decoding_macs_count_what_greedy_decoding_computes(use_cache, monkeypatch):
    from torch.utils.flop_counter import FlopCounterMode

    import transformer_edu.attention as attention

    torch.manual_seed(0)
    config = te.TransformerConfig(40, 30, d_model=16, n_heads=2, d_ff=24, n_layers=2, max_len=32)
    model = te.Transformer(config)
    src = torch.randint(4, 40, (3, 7))  # (B, S)
    attended = []  # multiply-adds of every fused attention call: Q·Kᵀ and the weighted sum of V
    fused = attention.F.scaled_dot_product_attention

    def counting(q, k, v, **kwargs):
        attended.append(2 * q.shape[0] * q.shape[1] * q.shape[2] * k.shape[2] * q.shape[3])
        return fused(q, k, v, **kwargs)

    monkeypatch.setattr(attention.F, "scaled_dot_product_attention", counting)
    with FlopCounterMode(display=False) as counter:  # counts the matrix products of the linear layers
        te.greedy_decode(model, src, max_len=6, min_len=6, bos_id=1, eos_id=2, use_cache=use_cache)
    macs = profiling.decoding_macs(config, batch=3, source_length=7, steps=6, use_cache=use_cache)
    counts = counter.get_flop_counts().get("Global", {})
    # PyTorch 2.15 and later also count the fused attention kernel on the CPU.
    fused_flops = sum(n for op, n in counts.items() if "scaled_dot_product" in str(op))
    assert 2 * macs["linear layers"] == counter.get_total_flops() - fused_flops
    assert macs["attention"] == sum(attended)
    assert fused_flops in (0, 2 * sum(attended))


def test_the_cache_saves_mostly_linear_layer_work():
    config = te.TransformerConfig(500, 500, d_model=128, n_heads=4, d_ff=512, n_layers=2, max_len=400)
    recompute, cached = (profiling.decoding_macs(config, 8, 20, 100, use_cache) for use_cache in (False, True))
    assert recompute["linear layers"] > 10 * recompute["attention"]  # at this size, the linears dominate
    assert 40 < sum(recompute.values()) / sum(cached.values()) < 50  # about (L + 1) / 2 for the linears
