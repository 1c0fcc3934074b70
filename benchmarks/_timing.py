"""Side-by-side timing shared by the benchmarks (not a benchmark itself: the leading ``_``).

Two clocks:

* ``wall``: ``time.perf_counter``, what a reader waits; on a CUDA device the
  timer waits for the GPU first. On a machine shared with other work it also
  counts the time the process waited for a free core.
* ``cpu``: ``time.process_time``, the CPU time of this process only (all its
  threads together), so time spent waiting for a core does not count. On a
  busy shared CPU it gives far steadier ratios; it is meaningless on a GPU,
  whose work it does not see.

Runs are interleaved (A, B, A, B, …) and medians compared, so slow periods
hit every side alike.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def default_clock(device: torch.device) -> str:
    return "wall" if device.type == "cuda" else "cpu"


def timed(run: Callable[[], object], device: torch.device, clock: str) -> tuple[float, object]:
    """Seconds that ``run()`` took on ``clock``, and what it returned."""
    now = CLOCKS[clock]
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = now()
    result = run()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return now() - start, result


def compare(runs: dict[str, Callable[[], object]], repeats: int, device: torch.device, clock: str,
            warmup: int = 1) -> tuple[dict[str, float], dict[str, object]]:
    """Median seconds of each run (interleaved) and each run's output of the last repetition."""
    for run in runs.values():
        for _ in range(warmup):  # the first calls pay for allocations
            run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    outputs: dict[str, object] = {}
    for _ in range(repeats):
        for name, run in runs.items():
            seconds, outputs[name] = timed(run, device, clock)
            times[name].append(seconds)
    return {name: statistics.median(t) for name, t in times.items()}, outputs


def device_defaults(args, device: torch.device, defaults: dict[str, tuple[object, object]]) -> None:
    """Fill in every argument left at ``None``: ``defaults[name] = (on a CPU, on a GPU)``."""
    for name, (cpu_value, gpu_value) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, gpu_value if device.type == "cuda" else cpu_value)


def peak_memory(run: Callable[[], object], device: torch.device) -> int:
    """Bytes of GPU memory allocated at the peak of one call of ``run()`` (a CUDA device)."""
    torch.cuda.synchronize(device)
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats(device)
    run()
    torch.cuda.synchronize(device)
    return torch.cuda.max_memory_allocated(device)
