"""Short training runs over seeds: recording a run, checking a claim, the spread.

A 2-epoch model, a 60-update warm-up trial or a 20-update comparison of one
and two processes comes out a little differently for every seed and on every
CPU. So that a chapter does not present one run as the rule, the seed sweep
(``scripts/seed_sweep.py``) executes the chapters themselves under
``TRANSFORMER_EDU_SEED`` = 0 ... 4, on two sets of CPU kernels, ten runs in
all. The cells that train record their numbers and check their claims
through this module:

* :func:`record` returns the value it is given; in a sweep it also writes it
  down, under its key, for the sweep to collect.
* :func:`check` asserts a claim by its margin (how far the measured number is
  from breaking the claim: positive when it holds); in a sweep it writes the
  margin down instead of stopping, so that one failing seed reports every
  claim of the chapter.
* :func:`spread` prints the mean and range of a number over the ten runs,
  from the summary this package ships (``assets/seed_sweep.json``), so that a
  chapter run anywhere, Colab included, can print its own run next to them.

Example::

    >>> from transformer_edu import seeds
    >>> loss = seeds.record("ch7.warmup.pre_ln", 1.30)  # returns 1.30
    >>> seeds.check("pre-LN learns without warm-up", 2.39 - 0.5 - loss)
    0.59...
    >>> seeds.spread("ch7.warmup.pre_ln")  # doctest: +SKIP
    '10 runs: mean 1.28, from 1.16 to 1.43'

Outside a sweep (the variable :data:`RECORD_VARIABLE` unset) nothing is
written anywhere. See Chapters 7, 8 and 9.
"""

from __future__ import annotations

import difflib
import functools
import json
import numbers
import os
from pathlib import Path

__all__ = ["RECORD_VARIABLE", "SUMMARY_FILE", "check", "record", "spread", "summary"]

SUMMARY_FILE = Path(__file__).resolve().parent / "assets" / "seed_sweep.json"
#: Set by the seed sweep to the file (JSON lines) that a run's records go to.
RECORD_VARIABLE = "TRANSFORMER_EDU_SWEEP_RECORDS"


def _write(entry: dict) -> None:
    path = os.environ.get(RECORD_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as file:
            file.write(json.dumps(entry, ensure_ascii=False) + "\n")


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        try:  # a one-element tensor or array
            value = value.item()
        except AttributeError:
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    return float(value)


def _name(what: str, value) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{what} must not be empty")
    return value


def record(key: str, value):
    """Return ``value``; in a seed sweep, also record it under ``key``.

    Args:
        key: the sweep's name of the number, ``"chN.experiment.quantity"``
            (the names :func:`spread` and the book's registry of prose numbers
            use).
        value: a real number (a float, an int, a one-element tensor).

    Returns:
        ``value``, unchanged.

    Raises:
        TypeError: ``key`` is not a str or ``value`` is not a real number.
        ValueError: ``key`` is empty.
    """
    _write({"key": _name("key", key), "value": _number("value", value)})
    return value


def check(claim: str, margin, *, inclusive: bool = False) -> float:
    """Assert a claim by its margin: ``margin > 0`` (``>= 0`` if ``inclusive``).

    Write the margin as the distance from breaking the claim: for "pre-LN ends
    at least 0.5 below post-LN", ``post - 0.5 - pre``. In a seed sweep the
    margin is recorded and nothing is raised, so the sweep learns every
    claim's margin for every seed; the sweep fails afterwards if one did not
    hold.

    Args:
        claim: what is claimed, in words (the sweep's name of the claim).
        margin: a real number; the claim holds when it is positive.
        inclusive: the claim also holds at a margin of exactly 0 (a count
            that may reach its bound, a structural equality).

    Returns:
        The margin, as a float.

    Raises:
        AssertionError: the claim does not hold (outside a sweep).
        TypeError: ``claim`` is not a str or ``margin`` not a real number.
    """
    claim, margin = _name("claim", claim), _number("margin", margin)
    holds = margin >= 0 if inclusive else margin > 0  # NaN: never
    if os.environ.get(RECORD_VARIABLE):
        _write({"claim": claim, "margin": margin, "inclusive": inclusive})
        return margin
    if not holds:
        bound = ">= 0" if inclusive else "> 0"
        raise AssertionError(f"claim does not hold: {claim} (margin {margin:.4g}, needs {bound})")
    return margin


@functools.cache
def summary() -> dict:
    """The shipped summary: ``{"runs", "seeds", "kernels", "summary": {key: {"mean", "min", "max", "runs"}}}``."""
    return json.loads(SUMMARY_FILE.read_text(encoding="utf-8"))


def spread(key: str, *, fmt: str = ".2f", scale: float = 1.0, short: bool = False) -> str:
    """One line: the mean and the range of ``key`` over the sweep's runs.

    Args:
        key: a number of the sweep, e.g. ``"ch7.warmup.post_ln"`` (see
            ``summary()["summary"]`` for all of them).
        fmt: the format of the numbers, e.g. ``".1f"``.
        scale: multiplies every number first, e.g. 100 for a percentage.
        short: for a table: ``"M (A to B)"``, without the number of runs.

    Returns:
        ``"10 runs: mean M, from A to B"``.

    Raises:
        TypeError: ``key`` is not a str.
        ValueError: ``key`` is not a number of the sweep (the message names the
            closest keys). In a seed sweep, which is making the summary, such a
            key gives a line that says so instead.
    """
    _name("key", key)
    numbers_ = summary()["summary"]
    if key not in numbers_:
        if os.environ.get(RECORD_VARIABLE):  # a new number, in the sweep that makes it
            return f"{key}: not in the shipped summary yet (the seed sweep is running)"
        close = difflib.get_close_matches(key, list(numbers_), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise ValueError(f"key {key!r} is not a number of the seed sweep{hint}")
    entry = numbers_[key]
    mean, low, high = (_format(scale * entry[name], fmt) for name in ("mean", "min", "max"))
    if short:
        return f"{mean} ({low} to {high})"
    return f"{entry['runs']} runs: mean {mean}, from {low} to {high}"


def _format(value: float, fmt: str) -> str:
    """``value`` formatted, never as a negative zero (``-0.00``)."""
    text = format(value, fmt)
    if text.startswith("-") and not any(c in "123456789" for c in text):
        text = text[1:]
    return text
