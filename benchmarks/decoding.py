"""Time decoding with and without the key/value cache, and batched against one-by-one beam search.

Three comparisons, each run side by side in one process (repetitions
interleaved, medians compared, so machine noise hits both sides alike) on an
untrained model of realistic size; the outputs of both sides are checked to
be identical:

1. greedy decoding of ``--steps`` new tokens for a batch of ``--batch``
   sources, with the cache against recomputing the whole prefix every step;
2. beam search with K = ``--beam-size``: all beams of all sources in one batch
   of B · K rows against one call per source;
3. beam search with the cache against without it.

EOS is forbidden until the last step (``min_len = max_len``), so every run
decodes exactly the same number of steps.

    python benchmarks/decoding.py            # the book's CPU setting
    python benchmarks/decoding.py --device cuda --d-model 512 --layers 6
    python benchmarks/decoding.py --json     # one JSON object, for the costs page
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Callable

import torch

import transformer_edu as te
from transformer_edu.decoding import beam_search, greedy_decode

BOS, EOS = 1, 2


def timed(run: Callable[[], object], device: torch.device) -> tuple[float, object]:
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    result = run()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, result


def compare(runs: dict[str, Callable[[], object]], repeats: int, device: torch.device) -> tuple[dict, dict]:
    """Median seconds of each run (interleaved) and each run's output of the last repetition."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    outputs: dict[str, object] = {}
    for _ in range(repeats):
        for name, run in runs.items():
            seconds, outputs[name] = timed(run, device)
            times[name].append(seconds)
    return {name: statistics.median(t) for name, t in times.items()}, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=8, help="source sentences")
    parser.add_argument("--source-length", type=int, default=20)
    parser.add_argument("--steps", type=int, default=100, help="new tokens for greedy decoding")
    parser.add_argument("--beam-size", type=int, default=4)
    parser.add_argument("--beam-steps", type=int, default=40, help="new tokens for beam search")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (default 1: on a shared CPU, more make timings erratic)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    config = te.TransformerConfig(
        args.vocab, args.vocab, d_model=args.d_model, n_heads=args.heads, d_ff=4 * args.d_model,
        n_layers=args.layers, max_len=max(args.steps, args.beam_steps, args.source_length) + 1,
    )
    torch.manual_seed(0)
    model = te.Transformer(config).to(device).eval()
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, args.vocab, (args.batch, args.source_length), generator=g)  # (B, S)
    src[: args.batch // 2, -args.source_length // 4:] = 0  # half the sources padded
    src = src.to(device)

    greedy = dict(max_len=args.steps, min_len=args.steps, bos_id=BOS, eos_id=EOS)
    beam = dict(max_len=args.beam_steps, min_len=args.beam_steps, bos_id=BOS, eos_id=EOS, beam_size=args.beam_size)

    def one_by_one():
        results = [beam_search(model, row[row != 0][None], **beam) for row in src]
        return torch.cat([tokens for tokens, _ in results]), torch.cat([scores for _, scores in results])

    runs = {
        "greedy, cache": lambda: greedy_decode(model, src, **greedy),
        "greedy, no cache": lambda: greedy_decode(model, src, use_cache=False, **greedy),
        "beam, batched, cache": lambda: beam_search(model, src, **beam),
        "beam, one by one, cache": one_by_one,
        "beam, batched, no cache": lambda: beam_search(model, src, use_cache=False, **beam),
    }
    for name in ("greedy, cache", "beam, batched, cache"):  # warm up: the first calls pay for allocations
        runs[name]()
    median, out = compare(runs, args.repeats, device)

    identical = {
        "greedy": torch.equal(out["greedy, cache"], out["greedy, no cache"]),
        "beam batched vs one by one": torch.equal(out["beam, batched, cache"][0],
                                                  out["beam, one by one, cache"][0]),
        "beam cache vs no cache": torch.equal(out["beam, batched, cache"][0], out["beam, batched, no cache"][0]),
    }
    if not all(identical.values()):
        raise SystemExit(f"outputs differ: {identical}")
    ratios = {
        f"greedy, no cache / cache ({args.steps} tokens)": median["greedy, no cache"] / median["greedy, cache"],
        "beam, one by one / batched": median["beam, one by one, cache"] / median["beam, batched, cache"],
        f"beam, no cache / cache ({args.beam_steps} tokens)": median["beam, batched, no cache"]
        / median["beam, batched, cache"],
    }
    result = {
        "name": "decoding",
        "description": "speed-ups of the key/value cache and of batching all beams of all sources; "
                       "above 1 means the cache (or batching) is faster; outputs identical",
        "ratios": {name: round(r, 2) for name, r in ratios.items()},
        "details": {
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "threads": torch.get_num_threads(),
            "setting": f"d_model {args.d_model}, {args.heads} heads, {args.layers}+{args.layers} layers, "
                       f"vocabulary {args.vocab}, batch {args.batch}, source length {args.source_length}, "
                       f"beam size {args.beam_size}",
            "median_ms": {name: round(1000 * t, 1) for name, t in median.items()},
            "repeats": args.repeats,
            "outputs_identical": identical,
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"decoding, {result['details']['setting']}, device {result['details']['device']}, "
          f"{result['details']['threads']} threads")
    for name, t in median.items():
        print(f"  {name:26s} {1000 * t:9.1f} ms (median of {args.repeats})")
    for name, r in ratios.items():
        print(f"  {name}: {r:.2f}x")


if __name__ == "__main__":
    main()
