"""Your own sentence pairs from a tab-separated file (Chapters 7 and 9)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ._types import Pair


_NOT_DECODED = re.compile("[\udc80-\udcff]")  # the bytes UTF-8 could not decode, kept by surrogateescape


def guess_encoding(raw: bytes) -> str | None:
    """The encoding that text which is not UTF-8 seems to be in: ``"utf-16"`` (with its byte-order
    mark), ``"cp949"`` (Korean Windows's, a superset of EUC-KR) if it reads as Korean that way, else ``None``."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        text = raw.decode("cp949")
    except UnicodeDecodeError as error:
        if error.start < len(raw) - 1:  # not a character cut off at the end of the sample
            return None
        text = raw[:error.start].decode("cp949")
    return "cp949" if any("\uac00" <= char <= "\ud7a3" for char in text) else None


def not_utf8(path: Path, number: int, raw: bytes) -> str:
    """What to say about line ``number`` of ``path`` that is not UTF-8, ``raw`` the file's first bytes."""
    converted = path.with_name(f"{path.stem}.utf8{path.suffix}")
    encoding = guess_encoding(raw)
    looks = {"cp949": "; it looks like CP949 (EUC-KR), which Korean Windows tools such as Excel write",
             "utf-16": "; it looks like UTF-16"}.get(encoding, "")
    unknown = "" if encoding else " (ENCODING: the one the file was saved in, e.g. cp1252)"
    return (f"{path}: line {number} is not UTF-8{looks}. Convert the file with: "
            f"iconv -f {encoding or 'ENCODING'} -t utf-8 {shlex.quote(str(path))} > "
            f"{shlex.quote(str(converted))}{unknown}")


def _columns(src_col: int, tgt_col: int, caller: str) -> int:
    """Check the column numbers; return the number of columns a line needs."""
    for name, value in (("src_col", src_col), ("tgt_col", tgt_col)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{caller}: {name}={value!r}; expected an integer >= 0")
    return max(src_col, tgt_col) + 1


def _lines(path: str | Path, src_col: int, tgt_col: int, skip_header: bool, caller: str):
    """Yield ``(line number, line, pair, why, columns)`` for every non-blank line: ``pair`` is
    ``None`` for a bad line, ``why`` says what is wrong with it, ``columns`` counts its
    tab-separated fields."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory; expected a file of source<TAB>target lines")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    needed = max(src_col, tgt_col) + 1  # checked by _columns
    # -sig: a byte-order mark is dropped; universal newlines: CRLF ends a line as LF does
    with path.open(encoding="utf-8-sig", errors="surrogateescape") as f:
        for number, line in enumerate(f, start=1):
            if _NOT_DECODED.search(line):
                with path.open("rb") as raw:
                    raise ValueError(not_utf8(path, number, raw.read(1 << 16)))
            if (number == 1 and skip_header) or not line.strip():
                continue
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < needed:
                yield number, line, None, f"{len(fields)} column(s), expected {needed} separated by tabs", len(fields)
                continue
            src, tgt = fields[src_col].strip(), fields[tgt_col].strip()
            if not src or not tgt:
                yield number, line, None, f"empty {'source' if not src else 'target'}", len(fields)
            else:
                yield number, line, (src, tgt), "", len(fields)


def load_tsv_pairs(path: str | Path, *, src_col: int = 0, tgt_col: int = 1,
                   skip_header: bool = False) -> list[Pair]:
    """Read ``(source, target)`` pairs from a UTF-8 tab-separated file.

    Args:
        path: the file (UTF-8, with or without a byte-order mark; LF or CRLF
            line ends); empty lines are skipped.
        src_col, tgt_col: the 0-based columns holding the source and the
            target; other columns are ignored.
        skip_header: ignore the first line.

    Returns:
        A list of ``(source, target)`` pairs with surrounding whitespace removed.

    Raises:
        FileNotFoundError: if ``path`` does not exist.
        ValueError: if a line has too few tab-separated columns or an empty field, or is
            not UTF-8; the message gives the line number (and for another encoding, the
            command that converts the file). (:func:`read_tsv_corpus` skips such lines instead.)
    """
    _columns(src_col, tgt_col, "load_tsv_pairs")
    pairs = []
    for number, line, pair, why, _ in _lines(path, src_col, tgt_col, skip_header, "load_tsv_pairs"):
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
        wide: the line numbers of the pairs whose line has more tab-separated
            columns than those read (the others are ignored: a tab inside a
            sentence cuts it short).
        columns: the number of columns read, ``max(src_col, tgt_col) + 1``.
    """

    path: Path
    pairs: list[Pair]
    lines: list[int]
    skipped: list[tuple[int, str]] = field(default_factory=list)
    wide: list[int] = field(default_factory=list)
    columns: int = 2

    def report(self, most: int = 5) -> str:
        """One paragraph on the skipped lines and those with extra columns, naming the first
        ``most`` of each; empty if there were none."""
        parts = []
        if self.skipped:
            shown = "; ".join(f"line {number}: {why}" for number, why in self.skipped[:most])
            more = f"; and {len(self.skipped) - most} more" if len(self.skipped) > most else ""
            parts.append(f"{len(self.skipped)} of {len(self.skipped) + len(self.pairs)} lines skipped "
                         f"({shown}{more})")
        if self.wide:
            shown = ", ".join(map(str, self.wide[:most])) + (", …" if len(self.wide) > most else "")
            lines = "1 line has" if len(self.wide) == 1 else f"{len(self.wide)} lines have"
            parts.append(f"{lines} more than {self.columns} tab-separated columns, the extra ones ignored "
                         f"(line{'s' if len(self.wide) > 1 else ''} {shown})")
        return f"{self.path}: {'; '.join(parts)}" if parts else ""


def read_tsv_corpus(path: str | Path, *, max_chars: int = 1000, src_col: int = 0, tgt_col: int = 1,
                    skip_header: bool = False) -> TsvCorpus:
    """Read a corpus of ``source<TAB>target`` lines, keeping the good lines and reporting the bad ones.

    Unlike :func:`load_tsv_pairs`, a bad line does not stop the reading: a
    line without a tab, with an empty side or with a side longer than
    ``max_chars`` characters is left out and listed in ``skipped`` with its
    line number (real corpora have such lines). Blank lines are ignored; a
    line with more columns than those read is kept and listed in ``wide``.

    Args:
        path: the file: UTF-8, with or without a byte-order mark, LF or CRLF line ends.
        max_chars: the longest side kept, in characters.
        src_col, tgt_col, skip_header: as for :func:`load_tsv_pairs`.

    Raises:
        FileNotFoundError: there is no file at ``path``.
        ValueError: no line of the file is usable (the message gives the first problems),
            or a line is not UTF-8 (the message names it, the encoding the file seems to be
            in and the command that converts it).
    """
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
        raise ValueError(f"read_tsv_corpus: max_chars={max_chars!r}; expected an integer >= 1")
    corpus = TsvCorpus(Path(path), [], [], columns=_columns(src_col, tgt_col, "read_tsv_corpus"))
    for number, _, pair, why, columns in _lines(path, src_col, tgt_col, skip_header, "read_tsv_corpus"):
        if pair is not None and max(map(len, pair)) > max_chars:
            pair, why = None, f"over {max_chars} characters"
        if pair is None:
            corpus.skipped.append((number, why))
        else:
            corpus.pairs.append(pair)
            corpus.lines.append(number)
            if columns > corpus.columns:
                corpus.wide.append(number)
    if not corpus.pairs:
        first = "; ".join(f"line {n}: {why}" for n, why in corpus.skipped[:3]) or "the file is empty"
        raise ValueError(f"{path} holds no usable source<TAB>target line ({first})")
    return corpus
