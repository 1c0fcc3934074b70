"""How the short training runs of Chapters 7 and 8 spread over seeds.

A 2-epoch model, a 60-update warm-up trial or a 12-epoch reverse task comes
out a little differently for every seed (and on every machine). So that a
chapter does not present one run as the rule, ``scripts/seed_sweep.py``
reruns those experiments for seeds 0-4; every number, per seed, is stored in
the book (``book/_data/seed_sweep.json``), and the mean, minimum and maximum
of each in this package (``assets/seed_sweep.json``), so that a chapter run
anywhere, Colab included, can print its own run next to them.

Example::

    >>> from transformer_edu import seeds
    >>> seeds.spread("ch8.beam4.exact", scale=100, fmt=".1f")
    'seeds 0-4: mean 42.5, from 40.0 to 44.3'

See Chapters 7 and 8.
"""

from __future__ import annotations

import difflib
import functools
import json
from pathlib import Path

__all__ = ["SUMMARY_FILE", "spread", "summary"]

SUMMARY_FILE = Path(__file__).resolve().parent / "assets" / "seed_sweep.json"


@functools.cache
def summary() -> dict:
    """The stored summary: ``{"seeds": [...], "summary": {key: {"mean", "min", "max", ...}}}``."""
    return json.loads(SUMMARY_FILE.read_text(encoding="utf-8"))


def _seed_range(seeds: list[int]) -> str:
    if seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(map(str, seeds))


def spread(key: str, *, fmt: str = ".2f", scale: float = 1.0, short: bool = False) -> str:
    """One line: the mean and the range of ``key`` over the sweep's seeds.

    Args:
        key: a number of the sweep, e.g. ``"ch7.warmup.post_ln"`` (see
            ``summary()["summary"]`` for all of them).
        fmt: the format of the numbers, e.g. ``".1f"``.
        scale: multiplies every number first, e.g. 100 for a percentage.
        short: for a table: ``"M (A to B)"``, without naming the seeds.

    Returns:
        ``"seeds 0-4: mean M, from A to B"``.
    """
    if not isinstance(key, str):
        raise TypeError(f"key must be a str, got {type(key).__name__}")
    numbers = summary()["summary"]
    if key not in numbers:
        close = difflib.get_close_matches(key, list(numbers), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"key {key!r} is not a number of the seed sweep{hint}")
    entry = numbers[key]
    mean, low, high = (scale * entry[name] for name in ("mean", "min", "max"))
    if short:
        return f"{mean:{fmt}} ({low:{fmt}} to {high:{fmt}})"
    return f"seeds {_seed_range(summary()['seeds'])}: mean {mean:{fmt}}, from {low:{fmt}} to {high:{fmt}}"
