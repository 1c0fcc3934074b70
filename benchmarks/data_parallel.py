"""Time training updates in one process against two processes under ``torchrun`` (Chapter 9).

Each side trains the same updates of the same model on the same global
batches (``fit`` with ``max_steps``; two processes take half of every batch
and all-reduce their gradients through gloo on the CPU). The two sides run
alternately, several times, and the medians of their wall-clock times are
compared; wall clock, because two processes on two cores are the point (CPU
time would add both processes up). Start-up (imports, the process group) is
not timed: rank 0 times the updates only, after one warm-up update (the
second ``fit`` call, timed, wraps the model in DDP again, which broadcasts
the weights once).

Three sides: one process on one thread, one process on two threads (what a
single process can do with the same two cores), and two processes on one
thread each.

    python benchmarks/data_parallel.py            # the ko-en model, then a wider one
    python benchmarks/data_parallel.py --json     # one JSON object

Run it on an idle machine: a second process needs a second free core.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

SIZES = {  # name -> (d_model, n_heads, d_ff, n_layers, updates)
    "ko-en (d_model 64, 2+2 layers)": (64, 4, 256, 2, 60),
    "wider (d_model 256, 3+3 layers)": (256, 8, 1024, 3, 20),
}


def worker(d_model: int, n_heads: int, d_ff: int, n_layers: int, updates: int, threads: int) -> None:
    """One process of a run: train ``updates`` updates, rank 0 prints the seconds they took."""
    from dataclasses import replace

    from transformer_edu import data, training
    from transformer_edu.model import Transformer, TransformerConfig
    from transformer_edu.training.distributed import close, init_from_env
    from transformer_edu.training.scale import Updater, fit_at_scale

    torch.set_num_threads(threads)
    world = init_from_env("cpu")
    splits = data.toy_translation_splits(0)
    src = data.Vocab.build([s for s, _ in splits["train"]])
    tgt = data.Vocab.build([t for _, t in splits["train"]])
    torch.manual_seed(0)
    config = TransformerConfig(len(src), len(tgt), d_model=d_model, n_heads=n_heads, d_ff=d_ff, n_layers=n_layers,
                               dropout=0.0)
    model = Transformer(replace(config))
    optimizer = training.make_optimizer(model)
    loss_fn = training.LabelSmoothingLoss(len(tgt), 0.1)
    batches = list(data.make_batches(splits["train"], src, tgt, 64, shuffle=True, seed=0, sort_by_length=True))
    updater = Updater(model, optimizer, loss_fn, world=world)
    fit_at_scale(model, batches, epochs=1, updater=updater, max_steps=1, progress=False)  # warm-up: allocations, DDP's first buckets
    start = time.perf_counter()
    fit_at_scale(model, batches, epochs=1, updater=updater, max_steps=1 + updates, start_batch=1, progress=False)
    seconds = time.perf_counter() - start
    if world.is_main:
        print(json.dumps({"seconds": seconds}))
    close(world)


def run(size: tuple, processes: int, threads: int) -> float:
    """Seconds of the updates, with ``processes`` processes of ``threads`` threads."""
    args = [str(v) for v in (*size, threads)]
    launcher = ([sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={processes}"]
                if processes > 1 else [sys.executable])
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([*launcher, __file__, "--worker", *args], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs of each side (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--worker", nargs=6, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    results = {"cpu_cores": os.cpu_count(), "torch": str(torch.__version__), "settings": {}}
    for name, size in SIZES.items():
        sides = {(1, 1): [], (1, 2): [], (2, 1): []}  # (processes, threads each) -> seconds
        for _ in range(args.repeats):
            for processes, threads in sides:
                sides[processes, threads].append(run(size, processes, threads))
        one, threaded, two = (statistics.median(t) for t in sides.values())
        results["settings"][name] = {"updates": size[-1], "batch": 64, "one_process_s": one,
                                     "one_process_two_threads_s": threaded, "two_processes_s": two,
                                     "speedup_two_processes": one / two, "speedup_two_threads": one / threaded}
        if not args.json:
            print(f"{name}, {size[-1]} updates of 64 pairs (median of {args.repeats}, wall clock, "
                  f"{os.cpu_count()} cores):\n  1 process, 1 thread {one:.2f} s; 1 process, 2 threads "
                  f"{threaded:.2f} s ({one / threaded:.2f}× faster); 2 processes {two:.2f} s "
                  f"({one / two:.2f}× faster)")
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
