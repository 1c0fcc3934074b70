"""Running the command lines as a user does, and what every refusal must look like (the CLI tests share it)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def environment(**extra: str) -> dict:
    """The environment of a command: this checkout's package first (not an installed copy)."""
    path = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", **extra}


def command(module: str, *args, stdin: str | bytes | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    """``python -m transformer_edu.<module> ARGS`` in a subprocess; stdout and stderr as text."""
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    done = subprocess.run([sys.executable, "-m", f"transformer_edu.{module}", *map(str, args)], input=data,
                          capture_output=True, env=environment(), timeout=timeout)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode("utf-8"),
                                       done.stderr.decode("utf-8"))


def assert_refused(process: subprocess.CompletedProcess, *parts: str) -> str:
    """Exit code 2, nothing on stdout, and one line on stderr, ``error: …``, holding each of ``parts``."""
    lines = process.stderr.splitlines()
    assert process.returncode == 2, (process.returncode, process.stderr[-3000:])
    assert "Traceback" not in process.stderr and process.stdout == "", process.stderr + process.stdout
    assert len(lines) == 1 and lines[0].startswith("error: "), process.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def snapshot(directory: Path) -> dict[str, tuple[str, int]]:
    """Every file under ``directory``: its content's hash and its modification time, to show nothing changed."""
    return {str(p.relative_to(directory)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*")) if p.is_file()}


def unwritable_directory(tmp_path: Path) -> Path | None:
    """A directory this process cannot create files in: a read-only one, or, for root (who may write
    anywhere on a disk), sysfs; ``None`` where neither exists."""
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        return locked
    sysfs = Path("/sys")
    return sysfs if sysfs.is_dir() and _refuses(sysfs) else None


def _refuses(directory: Path) -> bool:
    try:
        (directory / ".transformer_edu_probe").touch()
    except OSError:
        return True
    (directory / ".transformer_edu_probe").unlink()
    return False
