"""Your own sentence pairs from a tab-separated file (Chapters 7 and 9)."""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class TsvCorpus:
    """The usable pairs of a tab-separated file, and the lines that were not.

    Attributes:
        pairs: ``(source, target)`` pairs, surrounding whitespace removed.
        lines: the 1-based line number of each pair in the file.
        skipped: ``(line number, why)`` for each line left out.
    """

    path: Path
    pairs: list[Pair]
    lines: list[int]
    skipped: list[tuple[int, str]] = field(default_factory=list)

    def report(self, most: int = 5) -> str:
        """One paragraph on the skipped lines, naming the first ``most``; empty if none was."""
        if not self.skipped:
            return ""
        shown = "; ".join(f"line {number}: {why}" for number, why in self.skipped[:most])
        more = f"; and {len(self.skipped) - most} more" if len(self.skipped) > most else ""
        return (f"{self.path}: {len(self.skipped)} of {len(self.skipped) + len(self.pairs)} lines skipped "
                f"({shown}{more})")


def read_tsv_corpus(path: str | Path, *, max_chars: int = 1000, src_col: int = 0, tgt_col: int = 1,
                    skip_header: bool = False) -> TsvCorpus:
    """Read a corpus of ``source<TAB>target`` lines, keeping the good lines and reporting the bad ones.

    Unlike :func:`load_tsv_pairs`, a bad line does not stop the reading: a
    line without a tab, with an empty side or with a side longer than
    ``max_chars`` characters is left out and listed in ``skipped`` with its
    line number (real corpora have such lines). Blank lines are ignored.

    Args:
        path: the UTF-8 file.
        max_chars: the longest side kept, in characters.
        src_col, tgt_col, skip_header: as for :func:`load_tsv_pairs`.

    Raises:
        FileNotFoundError: there is no file at ``path``.
        ValueError: no line of the file is usable (the message gives the first problems).
    """
    for name, value in (("src_col", src_col), ("tgt_col", tgt_col), ("max_chars", max_chars)):
        if isinstance(value, bool) or not isinstance(value, int) or value < (1 if name == "max_chars" else 0):
            raise ValueError(f"read_tsv_corpus: {name}={value!r}; expected an integer >= "
                             f"{1 if name == 'max_chars' else 0}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_tsv_corpus: no file at {str(path)!r}")
    needed = max(src_col, tgt_col) + 1
    corpus = TsvCorpus(path, [], [])
    with path.open(encoding="utf-8-sig") as f:
        for number, line in enumerate(f, start=1):
            if (number == 1 and skip_header) or not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < needed:
                corpus.skipped.append((number, f"{len(fields)} column(s), expected {needed} separated by tabs"))
                continue
            src, tgt = fields[src_col].strip(), fields[tgt_col].strip()
            if not src or not tgt:
                corpus.skipped.append((number, f"empty {'source' if not src else 'target'}"))
            elif max(len(src), len(tgt)) > max_chars:
                corpus.skipped.append((number, f"over {max_chars} characters"))
            else:
                corpus.pairs.append((src, tgt))
                corpus.lines.append(number)
    if not corpus.pairs:
        first = "; ".join(f"line {n}: {why}" for n, why in corpus.skipped[:3]) or "the file is empty"
        raise ValueError(f"read_tsv_corpus: {str(path)!r} holds no usable source<TAB>target line ({first})")
    return corpus
