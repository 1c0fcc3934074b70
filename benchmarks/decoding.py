"""Time decoding with and without the key/value cache, and beam search against a plain loop.

Every comparison runs side by side in one process (repetitions interleaved,
medians compared, so machine noise hits both sides alike) on an untrained model
of the given size, and the outputs of both sides must be identical. The book's
setting is two threads and wall-clock time, what a reader waits on a 2-core
machine (``--threads 1 --clock cpu`` gives steadier ratios on a busy shared CPU;
see ``_timing.py``):

1. greedy decoding of ``--steps`` new tokens (each value of the list) for a
   batch of ``--batch`` sources: the package with its cache against the
   package recomputing the whole prefix at every step (``use_cache=False``:
   the decoder runs on every position of the prefix, as in Chapter 8's
   ``greedy_by_hand``, and recomputes the cross-attention keys and values).
   Both sides call ``model.decode``: the model's own decoder (Chapter 6), the
   cached side with the :class:`~transformer_edu.KVCache` of Chapter 8, and
   both apply the output layer to the last position only, so the ratio
   measures the cache and nothing else;
2. beam search with K = ``--beam-size`` over ``--beam-steps`` steps: the
   package (all beams of all sources in one batch of B · K rows, with the
   cache) against :func:`plain_beam_search`, a plain loop that takes one source
   at a time and runs every live hypothesis through ``model.decode`` on its
   own, on its whole prefix, without a cache; it ranks the expansions by the
   same rule, so it returns the same translations;
3. the same beam search one source at a time (with the cache) against all
   sources in one batch;
4. a profile (``transformer_edu.profiling``) of the cached greedy step, at
   ``--d-model`` and at ``--profile-d-model``: time inside PyTorch's operators
   against time outside them (our Python, bookkeeping).

Next to each greedy speed-up it prints the ratio of multiply-adds
(``profiling.decoding_macs``: the linear layers and attention), what the
speed-up would be if time followed arithmetic; a cached step on a small model
falls short of it because its small operations cost more than their arithmetic.

EOS is forbidden until the last step (``min_len = max_len``), so every run
decodes exactly the same number of steps.

    python benchmarks/decoding.py                # the book's CPU setting
    python benchmarks/decoding.py --device cuda  # the paper's base model: d_model 512, 8 heads,
                                                 # 6+6 layers; greedy over 100 and 500 new tokens
    python benchmarks/decoding.py --json     # one JSON object, for the costs page
"""

from __future__ import annotations

import argparse
import functools
import json
import math

import torch
from _timing import CLOCKS, compare, device_defaults, peak_memory

import transformer_edu as te
from transformer_edu import profiling
from transformer_edu.decoding import beam_search, gnmt_length_penalty, greedy_decode

PAD, BOS, EOS = 0, 1, 2


@torch.no_grad()
def plain_beam_search(model: te.Transformer, src: torch.Tensor, *, beam_size: int, max_len: int,
                      min_len: int, length_penalty: float = 0.6) -> tuple[list[int], float]:
    """Beam search on one source (1, S), each hypothesis decoded on its own, without a cache.

    The rule of ``transformer_edu.decoding.beam_search``: of the K · V
    expansions, EOS among the K best ends a hypothesis, the K best others live
    on; a source is done when no live beam can beat its best finished
    hypothesis; after ``max_len`` steps the live beams compete, unfinished.
    Returns the best hypothesis (tokens, score).
    """
    model.eval()
    src_mask = te.padding_mask(src, PAD)  # (1, 1, 1, S)
    memory = model.encode(src, src_mask)  # (1, S, D)
    beams: list[tuple[list[int], float]] = [([], 0.0)]  # (tokens without BOS, summed log-probability)
    finished: list[tuple[list[int], float]] = []
    score = lambda tokens, log_prob: log_prob / gnmt_length_penalty(len(tokens), length_penalty)  # noqa: E731
    for step in range(max_len):
        rows = []
        for tokens, log_prob in beams:  # one hypothesis at a time, its whole prefix
            prefix = torch.tensor([[BOS] + tokens], device=src.device)  # (1, t)
            log_p = model.decode(prefix, memory, src_mask)[0, -1].float().log_softmax(dim=-1)  # (V,)
            log_p[[PAD, BOS]] = float("-inf")  # never generated, as in the package
            if step < min_len:
                log_p[EOS] = float("-inf")
            rows.append(log_prob + log_p)
        top = torch.stack(rows).flatten().topk(2 * beam_size)  # the 2K best of the k · V expansions
        vocab = rows[0].shape[0]
        next_beams = []
        for rank, (total, index) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            origin, token = divmod(index, vocab)
            tokens = beams[origin][0] + [token]
            if token == EOS:
                if rank < beam_size and math.isfinite(total):
                    finished.append((tokens, total))
            elif len(next_beams) < beam_size:
                next_beams.append((tokens, total))
        beams = next_beams
        bound = max(total for _, total in beams) / gnmt_length_penalty(max_len, length_penalty)
        done = bool(finished) and max(score(*h) for h in finished) >= bound
        if step == max_len - 1:
            finished += [b for b in beams if math.isfinite(b[1])]
            done = True
        if done:
            break
    best = max(finished, key=lambda h: score(*h))
    return best[0], score(*best)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Defaults of None are filled in per device below (CPU: a small model; CUDA: the paper's base model).
    parser.add_argument("--d-model", type=int, default=None, help="default 128 on a CPU, 512 on a GPU")
    parser.add_argument("--heads", type=int, default=None, help="default 4 / 8")
    parser.add_argument("--layers", type=int, default=None, help="encoder and decoder layers each: 2 / 6")
    parser.add_argument("--vocab", type=int, default=500)
    parser.add_argument("--batch", type=int, default=8, help="source sentences")
    parser.add_argument("--source-length", type=int, default=20)
    parser.add_argument("--steps", default=None,
                        help="new tokens for greedy decoding, comma-separated (default 100,400 / 100,500)")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--beam-steps", type=int, default=40, help="new tokens for beam search")
    parser.add_argument("--profile-d-model", type=int, default=512,
                        help="d_model of the profiled model (heads 8, d_ff 4 · d_model, the other sizes as above)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs of each side (greedy settings shorter than the longest: proportionally more)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch.set_num_threads (default 2, the book's setting; 1 is steadier on a busy CPU)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall (default: what a reader waits) or cpu time (see benchmarks/_timing.py)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    device = torch.device(args.device)
    gpu = device.type == "cuda"
    device_defaults(args, device, {"d_model": (128, 512), "heads": (4, 8), "layers": (2, 6),
                                   "steps": ("100,400", "100,500")})
    steps = [int(s) for s in args.steps.split(",")]

    torch.set_num_threads(args.threads)
    clock = args.clock if device.type == "cpu" else "wall"  # CPU time does not see a GPU's work

    def make_model(d_model: int, heads: int) -> te.Transformer:
        config = te.TransformerConfig(
            args.vocab, args.vocab, d_model=d_model, n_heads=heads, d_ff=4 * d_model, n_layers=args.layers,
            max_len=max(*steps, args.beam_steps, args.source_length),
        )
        torch.manual_seed(0)
        return te.Transformer(config).to(device).eval()

    model = make_model(args.d_model, args.heads)
    g = torch.Generator().manual_seed(0)
    src = torch.randint(4, args.vocab, (args.batch, args.source_length), generator=g)  # (B, S)
    src[: args.batch // 2, -args.source_length // 4:] = PAD  # half the sources padded
    src = src.to(device)
    rows = [row[row != PAD][None] for row in src]  # each source alone, without padding: (1, S_i)

    median: dict[str, float] = {}
    ratios: dict[str, float] = {}
    identical: dict[str, bool] = {}
    arithmetic: dict[str, float] = {}  # the same ratio in multiply-adds (linear layers and attention)
    repeat_counts: dict[str, int] = {"beam": args.repeats, "profile": args.repeats}
    for n in steps:
        greedy = dict(max_len=n, min_len=n, bos_id=BOS, eos_id=EOS)
        repeats = args.repeats * max(1, max(steps) // n)  # shorter settings more often: their medians steady sooner
        repeat_counts[f"greedy {n}"] = repeats
        m, out = compare({
            "cache": lambda: greedy_decode(model, src, **greedy),
            "recompute": lambda: greedy_decode(model, src, use_cache=False, **greedy),
        }, repeats, device, clock)
        identical[f"greedy, {n} tokens"] = torch.equal(out["cache"], out["recompute"])
        median |= {f"greedy {n}, {name}": t for name, t in m.items()}
        ratios[f"greedy, {n} new tokens: recompute / cache"] = m["recompute"] / m["cache"]
        macs = {use_cache: sum(profiling.decoding_macs(model.config, args.batch, args.source_length, n,
                                                       use_cache).values()) for use_cache in (False, True)}
        arithmetic[f"greedy, {n} new tokens: recompute / cache"] = macs[False] / macs[True]

    beam = dict(max_len=args.beam_steps, min_len=args.beam_steps, beam_size=args.beam_size)

    def one_by_one():
        results = [beam_search(model, row, bos_id=BOS, eos_id=EOS, **beam) for row in rows]
        return [tokens[0].tolist() for tokens, _ in results], [float(s) for _, s in results]

    m, out = compare({
        "batched": lambda: beam_search(model, src, bos_id=BOS, eos_id=EOS, **beam),
        "one by one": one_by_one,
        "plain": lambda: [plain_beam_search(model, row, **beam) for row in rows],
    }, args.repeats, device, clock)
    batched_tokens = [[t for t in row if t != PAD] for row in out["batched"][0].tolist()]
    batched_scores = out["batched"][1].tolist()
    identical["beam, batched vs one source at a time"] = batched_tokens == out["one by one"][0]
    identical["beam, batched vs plain loop"] = (
        batched_tokens == [tokens for tokens, _ in out["plain"]]
        and all(math.isclose(a, b, abs_tol=1e-4) for a, b in zip(batched_scores, [s for _, s in out["plain"]]))
    )
    median |= {f"beam, {name}": t for name, t in m.items()}
    ratios[f"beam K = {args.beam_size}, {args.beam_steps} tokens: plain loop, no cache / batched, cache"] = (
        m["plain"] / m["batched"])
    ratios[f"beam K = {args.beam_size}: one source at a time / all sources in one batch"] = (
        m["one by one"] / m["batched"])
    if not all(identical.values()):
        raise SystemExit(f"outputs differ: {identical}")

    peaks: dict[str, float] = {}
    if gpu:  # the memory each greedy side holds at its peak, over the longest setting
        n = max(steps)
        for name, use_cache in [("cache", True), ("recompute", False)]:
            run = functools.partial(greedy_decode, model, src, max_len=n, min_len=n, bos_id=BOS, eos_id=EOS,
                                    use_cache=use_cache)
            peaks[f"greedy {n} new tokens, {name}"] = peak_memory(run, device) / 2**20

    n = steps[0]

    def profile(m: te.Transformer) -> profiling.StepProfile:
        return profiling.profile_steps(lambda: greedy_decode(m, src, max_len=n, min_len=n, bos_id=BOS, eos_id=EOS),
                                       steps=n, repeats=args.repeats, device=device)

    small = profile(model)  # the greedy setting's own model
    report = profile(make_model(args.profile_d_model, 8))
    outside = report.categories[profiling.OUTSIDE]
    ratios[f"cached greedy step at d_model {args.profile_d_model}: inside / outside PyTorch operators"] = (
        report.ops_ms / max(outside, 1e-9))

    setting = (f"d_model {args.d_model}, {args.heads} heads, d_ff {4 * args.d_model}, "
               f"{args.layers}+{args.layers} layers, vocabulary {args.vocab}, batch {args.batch}, "
               f"source length {args.source_length}, {torch.get_num_threads()} thread(s), {clock} time")
    result = {
        "name": "decoding",
        "description": f"{setting}: speed-ups of the key/value cache and of batched beam search (above 1: "
                       "the package is faster; outputs identical), and the profile of a cached step",
        "ratios": {name: round(r, 2) for name, r in ratios.items()},
        "details": {
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "threads": torch.get_num_threads(),
            "clock": clock,
            "setting": setting,
            "median_ms": {name: round(1000 * t, 1) for name, t in median.items()},
            "repeats": repeat_counts,
            "outputs_identical": identical,
            "multiply_adds_ratio": {name: round(r, 1) for name, r in arithmetic.items()},
            **({"peak_memory_mib": {name: round(m, 1) for name, m in peaks.items()}} if peaks else {}),
            "profile": {"setting": f"d_model {args.profile_d_model}, 8 heads, otherwise as above, {n} tokens",
                        "step_ms": round(report.step_ms, 3), "ops_share": round(report.ops_share, 3),
                        "reads_per_step": report.reads_per_step,
                        "categories_ms": {k: round(v, 3) for k, v in report.categories.items()}},
            "profile_greedy_setting": {"setting": f"the greedy setting's model, {n} tokens",
                                       "step_ms": round(small.step_ms, 3), "ops_share": round(small.ops_share, 3),
                                       "ops_per_step": round(small.ops_per_step, 1),
                                       "categories_ms": {k: round(v, 3) for k, v in small.categories.items()}},
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"decoding, {setting}, device {result['details']['device']}")
    for name, t in median.items():
        runs = repeat_counts["beam" if name.startswith("beam") else " ".join(name.split()[:2]).rstrip(",")]
        print(f"  {name:28s} {1000 * t:9.1f} ms (median of {runs})")
    for name, r in ratios.items():
        macs = f" (multiply-adds: {arithmetic[name]:.1f}x)" if name in arithmetic else ""
        print(f"  {name}: {r:.2f}x{macs}")
    print(small.table(f"cached greedy step, d_model {args.d_model}, {args.heads} heads"))
    print(report.table(f"cached greedy step, d_model {args.profile_d_model}, 8 heads"))


if __name__ == "__main__":
    main()
