"""The copy task and its reverse twin: the smallest problems that need attention (Chapter 7)."""

from __future__ import annotations

import random

from .. import _validate
from ._types import Pair


def copy_task_pairs(n: int, *, vocab_size: int = 10, min_len: int = 3, max_len: int = 8,
                    reverse: bool = False, seed: int = 0) -> list[Pair]:
    """``n`` distinct random digit sequences paired with their copy (or reverse).

    Args:
        n: number of pairs.
        vocab_size: number of symbols; the symbols are ``"0"`` … ``str(vocab_size - 1)``.
        min_len, max_len: each sequence has a uniformly drawn length in ``[min_len, max_len]``.
        reverse: if ``True``, the target is the source reversed.
        seed: seed of the random generator; the same seed gives the same pairs.

    Returns:
        A list of ``(source, target)`` pairs such as ``("7 3 9 1", "7 3 9 1")``.
    """
    for name, value, low in (("n", n, 0), ("vocab_size", vocab_size, 1), ("min_len", min_len, 1)):
        _validate.int_in_range(name, value, low, where="copy_task_pairs")
    _validate.int_in_range("max_len", max_len, min_len, where="copy_task_pairs", why=" (min_len)")
    possible = sum(vocab_size ** length for length in range(min_len, max_len + 1))
    if n > possible:
        raise ValueError(f"copy_task_pairs: n={n} but only {possible} distinct sequences exist "
                         f"with vocab_size={vocab_size}, lengths {min_len}..{max_len}")
    rng = random.Random(seed)
    sequences: dict[tuple[int, ...], None] = {}  # a dict keeps the order of drawing
    while len(sequences) < n:
        length = rng.randint(min_len, max_len)
        sequences.setdefault(tuple(rng.randrange(vocab_size) for _ in range(length)))
    pairs = []
    for seq in sequences:
        target = seq[::-1] if reverse else seq
        pairs.append((" ".join(map(str, seq)), " ".join(map(str, target))))
    return pairs


def copy_task_splits(seed: int = 0, *, n_train: int = 2000, n_valid: int = 200, n_test: int = 200,
                     **kwargs) -> dict[str, list[Pair]]:
    """Disjoint train / valid / test splits of :func:`copy_task_pairs`.

    Args:
        seed: seed of the random generator.
        n_train, n_valid, n_test: sizes of the splits.
        **kwargs: ``vocab_size``, ``min_len``, ``max_len``, ``reverse``, passed on.

    Returns:
        ``{"train": [...], "valid": [...], "test": [...]}``; no source occurs in two splits.
    """
    pairs = copy_task_pairs(n_train + n_valid + n_test, seed=seed, **kwargs)
    return {"train": pairs[:n_train],
            "valid": pairs[n_train:n_train + n_valid],
            "test": pairs[n_train + n_valid:]}
