"""Sources read from a notebook's stored outputs, beyond :func:`framework.output`.

:func:`framework.output` renders one number that an output prints. The prose
sometimes states what several printed numbers give together: a range from two
rows of a table (``0.25 to 0.30``), a ratio of two printed values, a window
computed from a printed table. :func:`derived` renders such a text from the
numbers it reads with :func:`printed`, through a small function written next
to the entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import framework as fw


def printed(page: str, pattern: str, group: int | str = 1) -> str:
    """The text of ``group`` where ``pattern`` matches the page's stored
    outputs; every match must give the same text."""
    found = {m.group(group) for _, text in fw.outputs(page) for m in re.finditer(pattern, text)}
    if len(found) != 1:
        raise LookupError(f"{pattern!r} matches the stored outputs of {page} with {sorted(found) or 'nothing'}")
    return found.pop()


def value(page: str, pattern: str, group: int | str = 1) -> float:
    """:func:`printed` as a number (``"18,914,304"``, ``"2.2e+01"``, ``"58%"``)."""
    return float(printed(page, pattern, group).replace(",", "").rstrip("%"))


def derived(page: str, function: Callable[..., object], *patterns: str | tuple[str, int | str],
            fmt: str = "g", scale: float = 1.0, template: str = "{}") -> fw.Source:
    """A text computed by ``function`` from the numbers the page's stored
    outputs print where ``patterns`` match (one number per pattern, in order;
    a pattern is a regular expression, its group 1 the number, or a pair of a
    regular expression and the name or index of the group).

    ``function`` returns a number, a string, or a tuple of them for a template
    with several ``{}`` (:func:`framework.package` formats them).
    """

    def compute():
        return function(*(value(page, *p) if isinstance(p, tuple) else value(page, p) for p in patterns))

    name = getattr(function, "__name__", "a function")
    compute.__qualname__ = f"{name} of the stored outputs of {page} matching {patterns}"
    return fw.package(compute, fmt=fmt, scale=scale, template=template)


def both(low: float, high: float) -> tuple[float, float]:
    """The two numbers as they are: for a ``"{} to {}"`` template."""
    return low, high


def thousands(value: float, step: int = 100) -> str:
    """``value`` rounded to ``step`` and written with a comma, as the chapters
    write vocabulary sizes: ``40,900``."""
    return f"{round(value / step) * step:,}"
