"""Your own sentence pairs from a tab-separated file (Chapter 7)."""

from __future__ import annotations

from pathlib import Path

from ._types import Pair


def load_tsv_pairs(path: str | Path, *, src_col: int = 0, tgt_col: int = 1,
                   skip_header: bool = False) -> list[Pair]:
    """Read ``(source, target)`` pairs from a UTF-8 tab-separated file.

    Args:
        path: the file; empty lines are skipped.
        src_col, tgt_col: the 0-based columns holding the source and the target.
        skip_header: ignore the first line.

    Returns:
        A list of ``(source, target)`` pairs with surrounding whitespace removed.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if a line has too few tab-separated columns or an empty field; the
            message gives the line number.
    """
    for name, value in (("src_col", src_col), ("tgt_col", tgt_col)):
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"load_tsv_pairs: {name}={value!r}; expected an integer >= 0")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"load_tsv_pairs: no file at {str(path)!r}")
    needed = max(src_col, tgt_col) + 1
    pairs = []
    with path.open(encoding="utf-8-sig") as f:  # -sig: tolerate a byte-order mark
        for number, line in enumerate(f, start=1):
            if (number == 1 and skip_header) or not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < needed:
                raise ValueError(f"load_tsv_pairs: line {number} of {str(path)!r} has {len(fields)} "
                                 f"column(s); expected at least {needed} separated by tabs: "
                                 f"{line.strip()[:60]!r}")
            src, tgt = fields[src_col].strip(), fields[tgt_col].strip()
            if not src or not tgt:
                raise ValueError(f"load_tsv_pairs: line {number} of {str(path)!r} has an empty "
                                 f"{'source' if not src else 'target'}: {line.strip()[:60]!r}")
            pairs.append((src, tgt))
    return pairs
