"""Your own sentence pairs from a tab-separated file (Chapters 7 and 9)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ._types import Pair


def _lines(path: str | Path, src_col: int, tgt_col: int, skip_header: bool, caller: str):
    """Check the arguments, then yield ``(line number, line, pair, why)`` for every non-blank
    line: ``pair`` is ``None`` for a bad line, and ``why`` says what is wrong with it."""
    for name, value in (("src_col", src_col), ("tgt_col", tgt_col)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{caller}: {name}={value!r}; expected an integer >= 0")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{caller}: no file at {str(path)!r}")
    needed = max(src_col, tgt_col) + 1
    with path.open(encoding="utf-8-sig") as f:  # -sig: tolerate a byte-order mark
        for number, line in enumerate(f, start=1):
            if (number == 1 and skip_header) or not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < needed:
                yield number, line, None, f"{len(fields)} column(s), expected {needed} separated by tabs"
                continue
            src, tgt = fields[src_col].strip(), fields[tgt_col].strip()
            if not src or not tgt:
                yield number, line, None, f"empty {'source' if not src else 'target'}"
            else:
                yield number, line, (src, tgt), ""


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
            message gives the line number. (:func:`read_tsv_corpus` skips such lines instead.)
    """
    pairs = []
    for number, line, pair, why in _lines(path, src_col, tgt_col, skip_header, "load_tsv_pairs"):
        if pair is None:
            raise ValueError(f"load_tsv_pairs: line {number} of {str(path)!r}: {why}: {line.strip()[:60]!r}")
        pairs.append(pair)
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
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f"read_tsv_corpus: max_chars={max_chars!r}; expected an integer >= 1")
    corpus = TsvCorpus(Path(path), [], [])
    for number, _, pair, why in _lines(path, src_col, tgt_col, skip_header, "read_tsv_corpus"):
        if pair is not None and max(map(len, pair)) > max_chars:
            pair, why = None, f"over {max_chars} characters"
        if pair is None:
            corpus.skipped.append((number, why))
        else:
            corpus.pairs.append(pair)
            corpus.lines.append(number)
    if not corpus.pairs:
        first = "; ".join(f"line {n}: {why}" for n, why in corpus.skipped[:3]) or "the file is empty"
        raise ValueError(f"read_tsv_corpus: {str(path)!r} holds no usable source<TAB>target line ({first})")
    return corpus
