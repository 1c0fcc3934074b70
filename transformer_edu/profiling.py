"""Where the time of a decoding step goes (Chapter 8).

A decoding step on a small model is cheap arithmetic wrapped in a lot of
Python: argument checks, mask building, bookkeeping, small tensors created and
copied. :func:`profile_steps` runs a piece of decoding code under
:mod:`torch.profiler` and splits the time of one step into what PyTorch's
operators spent (matrix products, the attention kernel, copies, the rest) and
what happened outside them (our Python, and PyTorch's own Python layers).

Example::

    from transformer_edu import profiling
    def run():
        return te.greedy_decode(model, src, max_len=100, min_len=100,
                                bos_id=1, eos_id=2)

    report = profiling.profile_steps(run, steps=100)
    print(report.table())
    report.ops_share  # fraction of a step spent inside PyTorch operators

Timings vary from run to run and machine to machine: print them in a cell
marked ``# NBVAL_IGNORE_OUTPUT`` and assert only what is robust.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import warnings
from contextlib import contextmanager
from typing import Callable, Iterator, NamedTuple

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from . import _validate

__all__ = ["StepProfile", "profile_steps", "CATEGORIES", "decoding_macs"]

#: Operator categories, in the order :meth:`StepProfile.table` prints them,
#: each with the operators (matched by name prefix) it gathers.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "matrix products": ("aten::linear", "aten::addmm", "aten::mm", "aten::bmm", "aten::matmul",
                        "aten::baddbmm"),
    "attention kernel": ("aten::scaled_dot_product_attention", "aten::_scaled_dot_product"),
    "copies and concatenation": ("aten::cat", "aten::copy_", "aten::index_select", "aten::index_copy",
                                 "aten::clone", "aten::contiguous", "aten::to", "aten::_to_copy",
                                 "aten::repeat_interleave", "aten::index"),
    "other PyTorch operators": ("",),
}
OUTSIDE = "outside operators (Python, bookkeeping)"
_MARK = "transformer_edu.profiling.run"
_SYNC_OPS = ("aten::_local_scalar_dense",)


class StepProfile(NamedTuple):
    """The time of one decoding step, split by where it goes.

    Attributes:
        step_ms: wall time of one step, in milliseconds (median over the
            repetitions, measured without the profiler).
        categories: milliseconds per step for each name of :data:`CATEGORIES`,
            then the time outside PyTorch operators (``step_ms`` minus the
            operators' time, at least 0).
        top_ops: the ``n_top`` operators that took the most time, as
            ``(name, milliseconds per step, calls per step)``, most first.
        ops_per_step: calls of top-level PyTorch operators per step.
        reads_per_step: times per step that Python read one value out of a
            tensor (``.item()``, ``bool(t)``, ``int(t)``, ``float(t)``): each
            is a host–device synchronisation when the tensor is on a GPU.
            (``.tolist()`` synchronises too, but the profiler does not see
            it on a CPU.)
    """

    step_ms: float
    categories: dict[str, float]
    top_ops: list[tuple[str, float, float]]
    ops_per_step: float
    reads_per_step: float

    @property
    def ops_ms(self) -> float:
        """Milliseconds per step spent inside PyTorch operators."""
        return sum(ms for name, ms in self.categories.items() if name != OUTSIDE)

    @property
    def ops_share(self) -> float:
        """Fraction of the step spent inside PyTorch operators, in [0, 1]."""
        return min(1.0, self.ops_ms / self.step_ms)

    def table(self, title: str = "one decoding step") -> str:
        """A plain-text table of the breakdown (at most 72 columns wide)."""
        lines = [f"{title}: {self.step_ms:.3f} ms, {self.ops_per_step:.0f} operator calls, "
                 f"{self.reads_per_step:.0f} tensor reads"]
        for name, ms in self.categories.items():
            lines.append(f"  {name:41s} {ms:8.3f} ms {100 * ms / self.step_ms:5.1f} %")
        lines.append("  top operators (ms per step, calls per step):")
        for name, ms, calls in self.top_ops:
            lines.append(f"    {name[:45]:45s} {ms:8.3f} {calls:6.1f}")
        return "\n".join(lines)


@contextmanager
def _native_stderr_hidden() -> Iterator[None]:
    """Silence the process's standard error (file descriptor 2) for a moment.

    Some PyTorch builds log a line from C++ whenever the profiler starts or
    stops, which a notebook would show under the cell; only those two calls
    are wrapped, so nothing else is hidden.
    """
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _category(name: str) -> str:
    for category, prefixes in CATEGORIES.items():
        if any(name.startswith(prefix) for prefix in prefixes):
            return category
    raise AssertionError("the last category matches every name")


def _timed(run: Callable[[], object], device: torch.device | None) -> float:
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)
    start = time.perf_counter()
    run()
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)
    return time.perf_counter() - start


def profile_steps(
    run: Callable[[], object],
    steps: int = 1,
    *,
    repeats: int = 5,
    warmup: int = 1,
    n_top: int = 6,
    device: torch.device | str | None = None,
) -> StepProfile:
    """Profile ``run`` (which performs ``steps`` decoding steps) and break one step's time down.

    ``run`` is timed ``repeats`` times without the profiler (the median gives
    ``step_ms``), then once more under :mod:`torch.profiler`, which measures
    the time of every top-level PyTorch operator (an operator called by
    another one counts in its caller). All times are divided by ``steps``:
    for a whole decoding call (e.g. ``greedy_decode`` with ``min_len =
    max_len = steps``) the encoder and the set-up are spread over the steps.

    Args:
        run: a function without arguments that runs the code to profile.
        steps: how many decoding steps one call of ``run`` performs (≥ 1).
        repeats: timed calls for the wall time (≥ 1).
        warmup: untimed calls first, so that allocations and lazy
            initialisation do not count.
        n_top: how many operators to list in ``top_ops``.
        device: the device ``run`` computes on; on a CUDA device the timer
            waits for the GPU. The operators' times are then the host's
            time to launch them, not the GPU's time to run them.

    Returns:
        A :class:`StepProfile`.

    See Chapter 8.
    """
    for name, value in (("steps", steps), ("repeats", repeats), ("n_top", n_top)):
        _validate.positive_int(name, value)
    _validate.int_in_range("warmup", warmup, 0)
    _validate.function("run", run, "a function without arguments")
    device = None if device is None else torch.device(device)
    for _ in range(warmup):
        run()
    step_ms = 1000 * statistics.median(_timed(run, device) for _ in range(repeats)) / steps

    prof = profile(activities=[ProfilerActivity.CPU])
    with _native_stderr_hidden(), warnings.catch_warnings():
        # Some PyTorch versions warn, once per process, that a profiler keeps only its last
        # cycle's events; this one runs a single cycle, so the warning says nothing here.
        warnings.filterwarnings("ignore", message=".*Profiler clears events")
        prof.start()
    try:
        with record_function(_MARK):
            run()
    finally:
        with _native_stderr_hidden():
            prof.stop()
    events = prof.events()
    mark = next(e for e in events if e.name == _MARK)
    top_level = [e for e in events if e.cpu_parent is not None and e.cpu_parent.id == mark.id]
    reads = sum(1 for e in events if e.name in _SYNC_OPS)

    # The profiler slows every operator call a little, so shares are taken within
    # the profiled run and applied to the wall time measured without it.
    scale = step_ms / mark.cpu_time_total  # ms per step, per profiled microsecond
    categories = {name: 0.0 for name in CATEGORIES}
    per_op: dict[str, list[float]] = {}
    for event in top_level:
        ms = event.cpu_time_total * scale
        categories[_category(event.name)] += ms
        per_op.setdefault(event.name, []).append(ms)
    categories[OUTSIDE] = max(0.0, step_ms - sum(categories.values()))
    ranked = sorted(per_op.items(), key=lambda item: -sum(item[1]))[:n_top]
    top_ops = [(name, sum(times), len(times) / steps) for name, times in ranked]
    return StepProfile(step_ms, categories, top_ops, len(top_level) / steps, reads / steps)


def decoding_macs(config, batch: int, source_length: int, steps: int, use_cache: bool) -> dict[str, int]:
    """Multiply–adds of greedy decoding ``steps`` tokens, as the package computes them.

    Counts the linear layers as well as attention, as the decoding loops
    compute them (:mod:`~transformer_edu.decoding`):
    without the cache, step t runs the decoder's linear layers (the
    projections, the feed-forward network) on all t positions of the prefix
    and recomputes the cross-attention keys and values of the memory, so
    their cost grows like L²/2 over L steps, and self-attention's like L³/3;
    with the cache, step t runs them on one position and attends over t
    cached keys (L and L²/2). Either way the output layer runs on the last
    position only, and the encoder once.

    Args:
        config: the model's :class:`~transformer_edu.TransformerConfig`
            (D, d_ff, N layers, target vocabulary V).
        batch: sentences B.
        source_length: source positions S.
        steps: generated tokens L.
        use_cache: count the cached decoding (``True``) or the recomputation.

    Returns:
        ``{"linear layers": …, "attention": …}``, multiply–adds for the batch
        (a floating-point operation count is twice these).
    """
    d, d_ff, n, vocab, s = config.d_model, config.d_ff, config.n_layers, config.tgt_vocab_size, source_length
    encoder_row = 4 * d * d + 2 * d * d_ff  # W_Q, W_K, W_V, W_O and the FFN for one position, one layer
    decoder_row = 6 * d * d + 2 * d * d_ff  # self W_Q|W_K|W_V and W_O, cross W_Q and W_O, the FFN
    memory_kv = 2 * s * d * d  # the cross-attention keys and values of the memory, one layer
    linear = n * (s * encoder_row) + (n * memory_kv if use_cache else 0)
    attention = n * 2 * s * s * d  # the encoder: scores Q·K and the weighted sum of V
    for t in range(1, steps + 1):  # step t has a prefix of t positions (BOS included)
        rows = 1 if use_cache else t  # positions that go through the linear layers
        linear += rows * n * decoder_row + d * vocab + (0 if use_cache else n * memory_kv)
        self_keys = t if use_cache else t * t  # query-key pairs: the kernel scores the masked ones too
        attention += n * 2 * d * (self_keys + rows * s)  # self- and cross-attention
    return {"linear layers": batch * linear, "attention": batch * attention}
