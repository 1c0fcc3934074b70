"""What the command lines share: a mistake of the user's gets one line, ``error: …``, and exit code 2.

The commands themselves are the modules users type, ``python -m
transformer_edu.train``, ``.translate`` and ``.export``; this module is
theirs alone.
"""

from __future__ import annotations

import argparse
import sys

EXIT_USAGE = 2
"""The exit code of a mistake in the command line or its input, as argparse's."""


class CommandLineError(Exception):
    """A mistake of the user's: the message says which option, file or line, and what to do."""


class Parser(argparse.ArgumentParser):
    """``argparse`` with its errors on one line, ``error: …``, as every other error of the commands."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"error: {message}\n")


def report(message: str, kind: str = "error") -> None:
    """Print ``kind: message`` on standard error."""
    print(f"{kind}: {message}", file=sys.stderr)


def os_message(error: Exception) -> str:
    """An error as one line naming its file: ``x.tsv: Permission denied`` rather than ``[Errno 13] …``."""
    if isinstance(error, OSError) and error.strerror and error.filename is not None:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def defaults_by_task(values: dict[str, object]) -> str:
    """``"64 for copy, ko-en and reverse; 256 for tsv"``: a recipe setting's default, task by task."""
    groups: dict[str, list[str]] = {}
    for task, value in sorted(values.items()):
        groups.setdefault(str(value), []).append(task)
    if len(groups) == 1:
        return next(iter(groups))

    def listing(tasks: list[str]) -> str:
        return tasks[0] if len(tasks) == 1 else f"{', '.join(tasks[:-1])} and {tasks[-1]}"

    return "; ".join(f"{value} for {listing(tasks)}" for value, tasks in groups.items())
