"""Time a training step of our Transformer against one built on ``torch.nn.Transformer``.

Both models have the same sizes, embeddings, positional encoding and output
layer; only the encoder/decoder differ. Steps (forward, loss, backward, Adam)
alternate between the two models in one process, and the ratio of the
medians is printed, so machine noise hits both sides alike (CPU time on one
thread by default on a CPU, see ``_timing.py``).

    python benchmarks/training_step.py                # the book's CPU setting
    python benchmarks/training_step.py --device cuda  # the paper's base model: d_model 512, 8 heads,
                                                      # 6+6 layers; batch 64, length 128
    python benchmarks/training_step.py --json         # one JSON object, for the costs page

On a GPU it also compares the two models under bfloat16 autocast, and
reports each side's peak GPU memory during a step (``torch.cuda.max_memory_allocated``).
"""

from __future__ import annotations

import argparse
import json
import math

import torch
from _timing import CLOCKS, compare, default_clock, device_defaults, peak_memory
import torch.nn.functional as F
from torch import nn

import transformer_edu as te
from transformer_edu.training.scale import autocast


class TorchTransformer(nn.Module):
    """The same model as ``te.Transformer`` with PyTorch's ``nn.Transformer`` inside."""

    def __init__(self, config: te.TransformerConfig) -> None:
        super().__init__()
        c = config
        self.config = c
        self.src_embed = nn.Embedding(c.src_vocab_size, c.d_model)
        self.tgt_embed = nn.Embedding(c.tgt_vocab_size, c.d_model)
        self.positional = te.SinusoidalPositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.transformer = nn.Transformer(
            c.d_model, c.n_heads, c.n_layers, c.n_layers, c.d_ff, c.dropout, batch_first=True, norm_first=c.norm_first
        )
        self.output = nn.Linear(c.d_model, c.tgt_vocab_size)
        self.scale = math.sqrt(c.d_model)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        pad = self.config.pad_id
        causal = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], device=tgt.device, dtype=torch.bool)
        x = self.transformer(
            self.positional(self.src_embed(src) * self.scale),
            self.positional(self.tgt_embed(tgt) * self.scale),
            tgt_mask=causal,
            src_key_padding_mask=src == pad,
            tgt_key_padding_mask=tgt == pad,
            memory_key_padding_mask=src == pad,
        )
        return self.output(x)


def make_step(model: nn.Module, src: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor,
              amp: str | None = None):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with autocast(src.device, amp):  # amp None: float32
            logits = model(src, tgt_in)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tgt_out.reshape(-1),
                                   ignore_index=0)
        loss.backward()
        optimizer.step()

    return step


def step_peak_memory(step, device: torch.device) -> int:
    """Bytes of GPU memory allocated at the peak of one training step, its state already made."""
    step()  # Adam's moments and the gradients exist from the first step on
    return peak_memory(step, device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # Defaults: None, filled in per device below (CPU: a small model; CUDA: the paper's base model).
    parser.add_argument("--d-model", type=int, default=None, help="default 256 on a CPU, 512 on a GPU")
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--layers", type=int, default=None, help="encoder and decoder layers each: 3 / 6")
    parser.add_argument("--batch", type=int, default=None, help="default 32 / 64")
    parser.add_argument("--length", type=int, default=None, help="default 32 / 128")
    parser.add_argument("--vocab", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (default 1: on a shared CPU, more make timings erratic)")
    parser.add_argument("--clock", choices=sorted(CLOCKS),
                        help="wall or cpu time (see benchmarks/_timing.py); default cpu on a CPU, wall on a GPU")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = parser.parse_args()
    device = torch.device(args.device)
    gpu = device.type == "cuda"
    device_defaults(args, device, {"d_model": (256, 512), "layers": (3, 6), "batch": (32, 64), "length": (32, 128)})

    torch.set_num_threads(args.threads)
    clock = args.clock or default_clock(device)
    config = te.TransformerConfig(
        args.vocab, args.vocab, d_model=args.d_model, n_heads=args.heads, d_ff=4 * args.d_model,
        n_layers=args.layers, max_len=max(512, args.length),
    )
    torch.manual_seed(0)
    ours = te.Transformer(config).to(device).train()
    theirs = TorchTransformer(config).to(device).train()
    g = torch.Generator().manual_seed(0)
    src = torch.randint(1, args.vocab, (args.batch, args.length), generator=g)
    tgt = torch.randint(1, args.vocab, (args.batch, args.length + 1), generator=g)
    src[: args.batch // 4, -args.length // 4:] = 0  # a quarter of the rows padded
    src, tgt = src.to(device), tgt.to(device)
    steps = {"ours": make_step(ours, src, tgt[:, :-1], tgt[:, 1:]),
             "torch.nn.Transformer": make_step(theirs, src, tgt[:, :-1], tgt[:, 1:])}
    median, _ = compare(steps, args.repeats, device, clock, warmup=3)
    ratio = median["ours"] / median["torch.nn.Transformer"]
    ratios = {"ours / torch.nn.Transformer (training step)": round(ratio, 3)}
    extra: dict = {}
    if gpu:
        bf16 = {name: make_step(model, src, tgt[:, :-1], tgt[:, 1:], "bf16")
                for name, model in [("ours", ours), ("torch.nn.Transformer", theirs)]}
        median_bf16, _ = compare(bf16, args.repeats, device, clock, warmup=3)
        ratios["ours / torch.nn.Transformer (training step, bfloat16 autocast)"] = round(
            median_bf16["ours"] / median_bf16["torch.nn.Transformer"], 3)
        ratios["float32 / bfloat16 autocast (our training step)"] = round(
            median["ours"] / median_bf16["ours"], 3)
        peaks = {f"{name}, {kind}": step_peak_memory(step, device)
                 for kind, group in [("float32", steps), ("bfloat16 autocast", bf16)] for name, step in group.items()}
        ratios["ours / torch.nn.Transformer (peak GPU memory, float32)"] = round(
            peaks["ours, float32"] / peaks["torch.nn.Transformer, float32"], 3)
        extra = {"median_ms_bf16": {name: round(1000 * t, 2) for name, t in median_bf16.items()},
                 "peak_memory_mib": {name: round(b / 2**20, 1) for name, b in peaks.items()},
                 "tf32_matmul": torch.backends.cuda.matmul.allow_tf32}
    setting = (f"d_model {args.d_model}, {args.heads} heads, d_ff {4 * args.d_model}, {args.layers}+{args.layers} "
               f"layers, vocabulary {args.vocab}, batch {args.batch}, length {args.length}, "
               f"{torch.get_num_threads()} thread(s), {clock} time")
    result = {
        "name": "training_step",
        "description": f"{setting}: a training step (forward, backward, Adam) of te.Transformer vs the same "
                       "model on torch.nn.Transformer; below 1 means ours is faster",
        "ratios": ratios,
        "details": {
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "threads": torch.get_num_threads(),
            "clock": clock,
            "setting": setting,
            "median_ms": {name: round(1000 * t, 2) for name, t in median.items()},
            "repeats": args.repeats,
            **extra,
        },
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"training step, {result['details']['setting']}, device {result['details']['device']}")
    for name, t in median.items():
        print(f"  {name:22s} {1000 * t:8.2f} ms (median of {args.repeats})")
    for name, value in ratios.items():
        print(f"  {name}: {value:.3f}x")
    for name, mib in extra.get("peak_memory_mib", {}).items():
        print(f"  peak GPU memory, {name}: {mib:.0f} MiB")


if __name__ == "__main__":
    main()
