"""The registry of the numbers the book's prose states, and where each comes from.

Every page has a module here: ``ch01`` ... ``ch09`` for the chapters
(``notebooks/NN_*.ipynb``) and ``pages`` for the pages of ``book/`` (intro,
costs, limits, family_tree, glossary). Each defines

``NUMBERS``
    a list of :class:`Number`: the text exactly as the Markdown writes it
    (``"35–46 %"``, ``"from −18 to +1"``) and a source that renders that text
    from where the number comes from: the seed sweep (:func:`sweep`), a stored
    output of the same notebook (:func:`output`), or a computation with the
    package or a committed data file (:func:`package`);
``EXEMPT``
    a list of :class:`Exempt`: numbers in the prose that nothing measures (the
    paper's base model, a definition, a chapter's number), each with its reason.

``tests/book/test_prose_numbers.py`` renders every source and fails when the
text it gives is not the registered text, when the registered text is not on
the page, when the Korean catalogue's message holding it does not carry the
same numbers, as written or as Korean writes the same value (1,890만 for
18.9 million; :func:`korean_lacks`), or has gone fuzzy because the English
changed, and when the
page has a measured-looking number (:func:`scan`) that no registered or exempt
text covers. A changed number is therefore changed in three places on purpose:
the data (by re-running what makes it), the registry's text, and the prose.

Texts are compared with runs of whitespace collapsed to one space, so a number
may be broken across lines of the Markdown source.

Example (a module ``chNN.py``)::

    from .framework import Exempt, Number, output, package, sweep

    NUMBERS = [
        # the range over the ten runs (five seeds, two kernel sets)
        Number("35–46 %", sweep("ch7.no_src_pos.test_exact", scale=100, template="{} %")),
        # the stored output of this notebook, printed as "split 97.0%"
        Number("97 % of the split", output(r"same_verb split (\\d+\\.\\d)%", fmt=".0f",
                                           template="{} % of the split")),
    ]
    EXEMPT = [Exempt("ε = 0.1", "the paper's label smoothing: a setting, not a measurement")]
"""

from __future__ import annotations

import functools
import importlib
import json
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BOOK = ROOT / "book"
NOTEBOOKS = ROOT / "notebooks"
CATALOGUES = ROOT / "locales" / "ko" / "LC_MESSAGES"
#: The seed sweep's files: the default kernels and PyTorch's AVX2 kernels.
SWEEP_FILES = {
    "default": BOOK / "_data" / "seed_sweep.json",
    "avx2": BOOK / "_data" / "seed_sweep_avx2.json",
}
BOTH = ("default", "avx2")
#: The registry's modules, one per page, in book order.
MODULES = (*(f"ch{n:02d}" for n in range(1, 11)), "pages")
#: The pages of book/ that ``pages.py`` covers.
BOOK_PAGES = ("intro", "costs", "limits", "family_tree", "glossary")
MINUS = "\u2212"  # the book writes negative numbers with a minus sign, not a hyphen


def normalize(text: str) -> str:
    """``text`` with every run of whitespace one space (as Markdown renders it)."""
    return re.sub(r"\s+", " ", text).strip()


def format_number(value: float, fmt: str = ".0f", scale: float = 1.0) -> str:
    """``value × scale`` formatted as the book writes numbers.

    ``fmt`` is a format spec (``".1f"``, ``"+.0f"``, ``","``); a negative number
    gets the minus sign (−), and ``","`` groups thousands with a space
    (``262 144``), as the pages do. A value that rounds to zero is never ``−0``.
    ``fmt="10^"`` writes the order of magnitude as a power of ten: 3.4e-4 is
    ``10⁻⁴`` (the largest power of ten not above it); ``fmt=".1e·"`` writes
    ``3.4 · 10⁻⁴``.
    """
    if scale != 1:
        value = value * scale
    if fmt == "10^":  # the power of ten of the number's order of magnitude: 3.4e-4 -> 10⁻⁴
        if value <= 0:
            raise ValueError(f"an order of magnitude needs a positive number, got {value!r}")
        exponent = str(math.floor(math.log10(value) + 1e-12))
        return "10" + exponent.translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    if fmt.endswith("e·"):  # 1.2 · 10⁻⁷
        mantissa, exponent = format(value, fmt[:-1]).split("e")
        return f"{mantissa} · 10" + str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    text = format(value, fmt)
    if re.fullmatch(r"[+-]?0(\.0*)?", text.lstrip("+-")) and text.startswith("-"):
        text = text[1:]  # -0.0 -> 0.0
    return text.replace("-", MINUS).replace(",", " ")


# --------------------------------------------------------------------------- #
# Pages                                                                         #
# --------------------------------------------------------------------------- #


def page_path(page: str) -> Path:
    """The file of a page: ``"07"`` or ``"ch07"`` -> ``notebooks/07_*.ipynb``;
    ``"costs"`` -> ``book/costs.md``."""
    number = page.removeprefix("ch")
    if number.isdigit():
        found = sorted(NOTEBOOKS.glob(f"{int(number):02d}_*.ipynb"))
        if len(found) != 1:
            raise ValueError(f"page {page!r}: expected one notebook {int(number):02d}_*.ipynb, found {found}")
        return found[0]
    path = BOOK / f"{page}.md"
    if not path.is_file():
        raise ValueError(f"page {page!r}: no chapter notebook and no {path.relative_to(ROOT)}")
    return path


@functools.cache
def _notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    source = cell["source"]
    return "".join(source) if isinstance(source, list) else source


def markdown(page: str) -> str:
    """The page's Markdown, whitespace-normalised: a notebook's Markdown cells
    joined, or a ``book/`` page's file."""
    path = page_path(page)
    if path.suffix == ".ipynb":
        cells = [_source(c) for c in _notebook(path)["cells"] if c["cell_type"] == "markdown"]
        return normalize("\n\n".join(cells))
    return normalize(path.read_text(encoding="utf-8"))


def outputs(page: str) -> list[tuple[int, str]]:
    """``(cell index, text)`` of every stored text output of a notebook page
    (streams and ``text/plain`` results), cells counted from 0 over all cells."""
    path = page_path(page)
    if path.suffix != ".ipynb":
        raise ValueError(f"page {page!r} is not a notebook: it has no stored outputs")
    found = []
    for index, cell in enumerate(_notebook(path)["cells"]):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text = out["text"]
            else:
                text = out.get("data", {}).get("text/plain", "")
            found.append((index, "".join(text) if isinstance(text, list) else text))
    return found


def catalogue(page: str) -> Path:
    """The Korean catalogue of a page."""
    path = page_path(page)
    if path.suffix == ".ipynb":
        return CATALOGUES / "notebooks" / f"{path.stem}.po"
    return CATALOGUES / "book" / f"{path.stem}.po"


# --------------------------------------------------------------------------- #
# Sources                                                                       #
# --------------------------------------------------------------------------- #


class Source:
    """Where a number comes from: ``render(page)`` gives its text, ``describe()``
    says where it was read (for the test's messages)."""

    def render(self, page: str) -> str:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@functools.cache
def _sweep_file(name: str) -> dict:
    if name not in SWEEP_FILES:
        raise ValueError(f"sweep file {name!r}: expected one of {sorted(SWEEP_FILES)}")
    return json.loads(SWEEP_FILES[name].read_text(encoding="utf-8"))


def sweep_values(key: str, files: Sequence[str] = BOTH, seeds: Sequence[int] | None = None) -> list[float]:
    """Every run's value of ``key``: one per seed of each sweep file, in order
    (the default file's seeds, then the AVX2 file's)."""
    if isinstance(files, str):
        files = (files,)
    values = []
    for name in files:
        sweep = _sweep_file(name)
        for seed in sweep["seeds"]:
            if seeds is not None and int(seed) not in seeds:
                continue
            numbers = sweep["runs"][str(seed)]["numbers"]
            if key not in numbers:
                raise KeyError(f"{key!r} is not a number of {SWEEP_FILES[name].name} (seed {seed})")
            values.append(numbers[key])
    if not values:
        raise KeyError(f"no run of {key!r} in {files} for seeds {seeds}")
    return values


#: Statistics of :func:`sweep` by name: one number, or a (low, high) pair.
STATS: dict[str, Callable[[list[float]], float | tuple[float, float]]] = {
    "range": lambda v: (min(v), max(v)),
    "min": min,
    "max": max,
    "mean": statistics.fmean,
    "-min": lambda v: -min(v),
    "-max": lambda v: -max(v),
    "abs-range": lambda v: (min(abs(x) for x in v), max(abs(x) for x in v)),
    "runs": len,
}


@dataclass(frozen=True)
class _Sweep(Source):
    key: str
    stat: str | Callable
    scale: float
    fmt: str
    files: tuple[str, ...]
    seeds: tuple[int, ...] | None
    template: str
    sep: str

    def render(self, page: str) -> str:
        values = sweep_values(self.key, self.files, self.seeds)
        stat = STATS[self.stat] if isinstance(self.stat, str) else self.stat
        result = stat(values)
        if isinstance(result, tuple):
            low, high = (format_number(x, self.fmt, self.scale) for x in result)
            text = low if low == high else f"{low}{self.sep}{high}"
        else:
            text = format_number(result, self.fmt, self.scale)
        return self.template.format(text)

    def describe(self) -> str:
        stat = self.stat if isinstance(self.stat, str) else getattr(self.stat, "__name__", "a function")
        seeds = "" if self.seeds is None else f", seeds {list(self.seeds)}"
        scale = "" if self.scale == 1 else f" × {self.scale:g}"
        return f"sweep {self.key!r}: {stat}{scale} as {self.fmt!r} over {'+'.join(self.files)}{seeds}"


def sweep(
    key: str,
    stat: str | Callable = "range",
    *,
    scale: float = 1.0,
    fmt: str = ".0f",
    files: Sequence[str] | str = BOTH,
    seeds: Sequence[int] | None = None,
    template: str = "{}",
    sep: str = "–",
) -> Source:
    """A number of the seed sweep (``book/_data/seed_sweep*.json``).

    Args:
        key: the sweep's name of the number, e.g. ``"ch7.no_src_pos.test_exact"``
            (the key a notebook cell recorded with ``seeds.record``).
        stat: ``"range"`` (``"low–high"``, or one number when both round
            alike), ``"min"``, ``"max"``, ``"mean"``, ``"-min"``, ``"-max"``
            (negated), ``"abs-range"``, ``"runs"`` (how many), or a function of
            the list of values returning a number or a ``(low, high)`` pair.
        scale: multiplies every number first, e.g. 100 for a percentage.
        fmt: the format of each number (:func:`format_number`).
        files: ``"default"``, ``"avx2"`` or both (the ten runs; the default).
        seeds: only these seeds (default: every seed of each file).
        template: the text around the number, ``"{} %"``.
        sep: between the two ends of a range: ``"–"``, ``" to "``.
    """
    files = (files,) if isinstance(files, str) else tuple(files)
    if isinstance(stat, str) and stat not in STATS:
        raise ValueError(f"stat {stat!r}: expected one of {sorted(STATS)} or a function")
    return _Sweep(key, stat, scale, fmt, files, None if seeds is None else tuple(seeds), template, sep)


@dataclass(frozen=True)
class _Output(Source):
    pattern: str
    group: int | str | tuple
    fmt: str | None
    scale: float
    template: str
    stat: str | None

    def render(self, page: str) -> str:
        groups = self.group if isinstance(self.group, tuple) else (self.group,)
        found = []
        for index, text in outputs(page):
            for match in re.finditer(self.pattern, text, flags=re.MULTILINE):
                found.append((index, tuple(match.group(g) for g in groups)))
        if not found:
            raise LookupError(f"no stored output of {page} matches {self.pattern!r}")
        if self.stat is not None:  # a statistic over every match of one group
            values = [float(v) for _, (v, *_) in found]
            result = STATS[self.stat](values)
            parts = result if isinstance(result, tuple) else (result,)
            return self.template.format(*(format_number(v, self.fmt or "g", self.scale) for v in parts))
        values = {value for _, value in found}
        if len(values) > 1:
            raise LookupError(f"{self.pattern!r} matches outputs of {page} with different values: {found}")
        parts = found[0][1]
        if self.fmt is not None:
            parts = tuple(format_number(float(v), self.fmt, self.scale) for v in parts)
        return self.template.format(*parts)

    def describe(self) -> str:
        return f"stored output matching {self.pattern!r}"


def output(
    pattern: str,
    *,
    group: int | str | tuple = 1,
    fmt: str | None = None,
    scale: float = 1.0,
    template: str = "{}",
    stat: str | None = None,
) -> Source:
    """A number printed in a stored output of the same notebook.

    Args:
        pattern: a regular expression (``^`` and ``$`` match at lines)
            searched in every stored text output; every match must give the
            same value, unless ``stat`` is given.
        group: the group that holds the number (default 1), or a tuple of
            groups for a template with several ``{}``.
        fmt: reformat each number (:func:`format_number`), e.g. ``".0f"`` for a
            printed ``97.0`` written ``97`` in the prose; ``None`` keeps the text.
        scale: with ``fmt``, multiplies each number first.
        template: the text around the number, ``"{} % of the split"``.
        stat: a statistic of :data:`STATS` over every match of ``group``
            (``"min"``, ``"max"``, ``"range"``: a template with two ``{}``).
    """
    if stat is not None and stat not in STATS:
        raise ValueError(f"stat {stat!r}: expected one of {sorted(STATS)}")
    return _Output(pattern, group, fmt, scale, template, stat)


@dataclass(frozen=True)
class _Package(Source):
    function: Callable
    fmt: str | None
    scale: float
    template: str

    def render(self, page: str) -> str:
        value = self.function()
        if isinstance(value, tuple):
            parts = [v if isinstance(v, str) else format_number(v, self.fmt or "g", self.scale) for v in value]
            return self.template.format(*parts)
        if not isinstance(value, str):
            value = format_number(value, self.fmt or "g", self.scale)
        return self.template.format(value)

    def describe(self) -> str:
        name = getattr(self.function, "__qualname__", repr(self.function))
        return f"computed by {name}"


def package(function: Callable, *, fmt: str | None = None, scale: float = 1.0, template: str = "{}") -> Source:
    """A number computed with the package or from a committed data file.

    ``function()`` returns a string (used as it is), a number (formatted with
    ``fmt``, default ``"g"``, and ``scale``), or a tuple of them for a
    template with several ``{}``.
    """
    return _Package(function, fmt, scale, template)


# --------------------------------------------------------------------------- #
# Entries                                                                       #
# --------------------------------------------------------------------------- #


@dataclass(frozen=True)
class Number:
    """A number of the prose: its ``text`` as the Markdown writes it, and its
    ``source``, which must render exactly that text. ``page`` is the module's
    page unless given (``pages.py`` names it: ``page="costs"``)."""

    text: str
    source: Source
    page: str | None = None


@dataclass(frozen=True)
class Exempt:
    """A number of the prose that nothing measures, and why (``reason``)."""

    text: str
    reason: str
    page: str | None = None


@dataclass
class Entry:
    """A registry entry with its page resolved (what the tests iterate over)."""

    module: str
    index: int
    page: str
    item: Number | Exempt = field(repr=False)

    @property
    def id(self) -> str:
        return f"{self.module}[{self.index}]:{self.item.text[:40]}"


def module_page(module: str) -> str | None:
    """The page a registry module covers (``"ch07"`` -> ``"07"``), None for ``pages``."""
    return module[2:] if module.startswith("ch") else None


def load(module: str):
    """Import a registry module (``"ch07"``, ``"pages"``)."""
    return importlib.import_module(f"{__package__}.{module}")


def present_modules() -> list[str]:
    """The registry modules that exist, in book order."""
    here = Path(__file__).parent
    return [name for name in MODULES if (here / f"{name}.py").is_file()]


def entries(kind: type = Number) -> list[Entry]:
    """Every :class:`Number` (or :class:`Exempt`) of every present module."""
    found = []
    for name in present_modules():
        module = load(name)
        items = module.NUMBERS if kind is Number else module.EXEMPT
        for index, item in enumerate(items):
            if not isinstance(item, kind):
                raise TypeError(f"{name}.{'NUMBERS' if kind is Number else 'EXEMPT'}[{index}] is {item!r}")
            page = item.page or module_page(name)
            if page is None:
                raise ValueError(f"{name}: entry {item.text!r} names no page (page=...)")
            found.append(Entry(name, index, page, item))
    return found


def pages_of(module: str) -> list[str]:
    """The pages a registry module covers."""
    page = module_page(module)
    return [page] if page is not None else list(BOOK_PAGES)


# --------------------------------------------------------------------------- #
# The scanner and the Korean check                                              #
# --------------------------------------------------------------------------- #

#: A number: 0.54, 37,000, or thousands grouped with a space (32 000).
_NUM = r"\d{1,3}(?:[ \u202f]\d{3})+(?!\d)|\d+(?:[.,]\d+)*"
_SUP = "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"
#: What looks like a measured number, by kind.
MEASURED = {
    "percentage": rf"(?:{_NUM})\s?%",
    "decimal": r"(?<![\w.])\d+\.\d+(?!\w|\.\d)",
    "range": rf"[−+-]?(?:{_NUM})\s?[–-]\s?[−+-]?(?:{_NUM})|[−+-]?(?:{_NUM}) to [−+-]?(?:{_NUM})",
    "n of m": rf"(?:{_NUM}) of (?:the |its |their |all |his |her )?(?:{_NUM})",
    "time": rf"(?:{_NUM})\s?(?:ms|s|min|h|seconds?|minutes?|hours?|days?)\b",
    "size": rf"(?:{_NUM})\s?(?:bytes?|[kKMGT]i?B)\b",
    "ratio": rf"(?:{_NUM})\s?×",
    "power": rf"10[{_SUP}]+|(?:{_NUM})e[−-]?\d+",
}
#: Not a number of its own: one that continues a word or a name (UTF-8, P100s, x2).
_NOT_AFTER = r"(?<![\w\-.])"
_SCANNERS = [re.compile(_NOT_AFTER + f"(?:{pattern})") for pattern in MEASURED.values()]
#: Spans of the Markdown that are not prose: code, math, link targets, HTML
#: tags and attributes, dates, and references to chapters (``Chapters 1 to 6``).
_NOT_PROSE = re.compile(
    r"`[^`]*`"
    r"|\$\$.*?\$\$|\$[^$]+\$"
    r"|\]\([^)]*\)"
    r"|</?[a-zA-Z][\w-]*(?:\s[^<>]*)?/?>"
    r"|\b\d{4}-\d{2}(?:-\d{2})?\b"
    r"|\bChapters? \d+(?:(?:–| to | and |, )\d+)*"
    r"|\bExercises? \d+(?:(?:–| to | and |, )\d+)*"
)


def scan(text: str) -> list[tuple[int, int, str]]:
    """Every measured-looking number of whitespace-normalised Markdown, as
    ``(start, end, matched text)``, outside code, math, link targets, dates
    and chapter references. Matches of several kinds that overlap are one
    number (``35–46 %``: a range and a percentage)."""
    masked = [(m.start(), m.end()) for m in _NOT_PROSE.finditer(text)]
    found = sorted(
        match.span()
        for scanner in _SCANNERS
        for match in scanner.finditer(text)
        if not any(a < match.end() and match.start() < b for a, b in masked)
    )
    merged: list[list[int]] = []  # overlapping matches of several kinds: one number
    for start, end in found:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end, text[start:end]) for start, end in merged]


def spans(text: str, needle: str) -> list[tuple[int, int]]:
    """Every occurrence of ``needle`` (whitespace-normalised) in ``text``."""
    needle = normalize(needle)
    return [(m.start(), m.start() + len(needle)) for m in re.finditer(re.escape(needle), text)]


def uncovered(page: str, texts: Sequence[str]) -> list[str]:
    """The measured-looking numbers of a page that no text of ``texts`` covers,
    each with some context."""
    text = markdown(page)
    covered = [span for needle in texts for span in spans(text, needle)]
    missing = []
    for start, end, found in scan(text):
        if not any(a <= start and end <= b for a, b in covered):
            missing.append(f"{found!r} in …{text[max(0, start - 50):end + 30]}…")
    return missing


def digits(text: str) -> list[str]:
    """The numbers of a text as strings of digits (``"35–46 %"`` -> ``["35", "46"]``),
    signs and grouping spaces left out, a decimal point kept."""
    return re.findall(rf"\d+(?:\.\d+)?[{_SUP}]*", text)


def holds_number_text(haystack: str, needle: str) -> bool:
    """Whether ``haystack`` holds ``needle`` (both whitespace-normalised) where
    a number of it is not part of a longer number: "3×" is not in "3.3×", "8 MiB"
    is not in "48 MiB", "0.5" is not in "0.54"."""
    needle, haystack = normalize(needle), normalize(haystack)
    for match in re.finditer(re.escape(needle), haystack):
        before, after = haystack[: match.start()], haystack[match.end() :]
        if needle[:1].isdigit() and re.search(r"\d[.,]?$", before):
            continue
        if needle[-1:].isdigit() and re.match(r"[.,]?\d", after):
            continue
        return True
    return False


#: A number as the prose writes it: grouped by thousands with a comma or a
#: space (37,000, 1 050 624), a decimal, or a float in e-notation (5e-05).
_VALUE = r"(?<![\d.,])(?:\d{1,3}(?:[, \u202f]\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:e[−-]?\d+)?(?![\d" + _SUP + "])"
#: English words that multiply the number before them (and a number joined to
#: it: "63.1 and 214.3 million" is two numbers of millions).
_ENGLISH_UNITS = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
#: Korean units: 1,890만 is 18 900 000, 2억 1430만 is 214 300 000.
_KOREAN_UNITS = {"천": 1e3, "만": 1e4, "억": 1e8, "조": 1e12}


def _value(number: str) -> float:
    return float(re.sub(r"[, \u202f]", "", number).replace("−", "-"))


def english_numbers(text: str) -> list[tuple[str, set[float]]]:
    """The numbers of an English text, each as ``(its text, the values it may
    mean)``: "18.9 million" is 18 900 000 (and 18.9), "63.1 and 214.3 million"
    gives 63.1 or 63 100 000 for the first."""
    found = []
    for match in re.finditer(_VALUE, text):
        value = _value(match.group(0))
        values = {value}
        unit = re.match(rf"\s?(?:(?:and|to|or|–|-|,)\s?(?:{_VALUE})\s?)?({'|'.join(_ENGLISH_UNITS)})\b", text[match.end() :])
        if unit:
            values.add(value * _ENGLISH_UNITS[unit.group(1)])
        found.append((match.group(0), values))
    return found


def korean_values(text: str) -> set[float]:
    """Every value a Korean text writes, as written (0.54, 40,900, 1 050 624)
    and with its Korean unit (1,890만 = 18 900 000; 2억 1430만 = 214 300 000)."""
    values: set[float] = set()
    total, last_unit = 0.0, None
    end = -1
    for match in re.finditer(rf"({_VALUE})\s?([{''.join(_KOREAN_UNITS)}])?", text):
        value = _value(match.group(1))
        values.add(value)
        unit = _KOREAN_UNITS.get(match.group(2) or "", 1.0)
        scaled = value * unit
        values.add(scaled)
        # a larger unit followed by a smaller one, only a space between: 2억 1430만
        if last_unit is not None and unit < last_unit and text[end : match.start()].strip() == "":
            total += scaled
            values.add(total)
        else:
            total = scaled
        last_unit = unit if match.group(2) else None
        end = match.end()
    return values


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def korean_lacks(english: str, korean: str) -> list[str]:
    """The numbers of ``english`` that ``korean`` does not write: neither the
    same digits (10⁻⁷, 5e-05) nor the same value, Korean's way (1,890만 for
    18.9 million, 40,900 for 40 900). A number that is part of a longer one does
    not count: 3 is not in 3.3, 8 is not in 48."""
    korean_digits = digits(korean)
    values = korean_values(korean)
    lacking = []
    for number, candidates in english_numbers(english):
        if all(d in korean_digits for d in digits(number)):
            continue
        if any(_same(v, k) for v in candidates for k in values):
            continue
        lacking.append(number)
    # numbers with a power of ten (10⁻⁷) are compared as written
    lacking += [n for n in digits(english) if re.search(f"[{_SUP}]", n) and n not in korean_digits]
    return lacking


def korean_problem(page: str, text: str) -> str | None:
    """Why the Korean catalogue does not carry ``text``'s numbers, or None.

    The messages whose (whitespace-normalised) English holds ``text``, its
    numbers not part of longer ones (:func:`holds_number_text`), are found;
    each must be translated, not fuzzy, and its translation must hold every
    number of ``text``, as written or as Korean writes the same value
    (:func:`korean_lacks`).
    """
    import polib

    path = catalogue(page)
    if not path.is_file():
        return f"no Korean catalogue {path.relative_to(ROOT)}"
    needle = normalize(text)
    messages = [e for e in polib.pofile(str(path)) if not e.obsolete and holds_number_text(e.msgid, needle)]
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    if not messages:
        return (
            f"no message of {where} holds {text!r}: the English changed since the catalogue was updated; "
            "run `sphinx-intl update` (the message then goes fuzzy) and have it translated again"
        )
    for entry in messages:
        if "fuzzy" in entry.flags:
            return (
                f"the Korean message holding {text!r} in {where} is fuzzy: its English changed "
                f"(previous: {normalize(entry.previous_msgid or '')[:120]!r}); translate it again "
                "with the new number"
            )
        if not entry.msgstr:
            return f"the message holding {text!r} in {where} is not translated"
        lacking = korean_lacks(text, entry.msgstr)
        if lacking:
            return (
                f"the Korean translation of the message holding {text!r} in {where} lacks {lacking}: "
                f"{normalize(entry.msgstr)[:200]!r}"
            )
    return None
