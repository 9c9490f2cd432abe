"""Running diagnostic commands (``nvidia-smi ...``) through an injectable runner."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = ["CommandResult", "CommandRunner", "RecordedRunner", "SubprocessRunner"]

_MAX_OUTPUT = 64 * 1024


@dataclass(frozen=True)
class CommandResult:
    """What a command printed; ``returncode`` is None when the program is not installed."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str = ""
    stderr: str = ""

    @property
    def ok(self) -> bool:
        """Whether it ran and exited 0."""
        return self.returncode == 0

    @property
    def command(self) -> str:
        """The command line as typed."""
        return " ".join(self.argv)


@runtime_checkable
class CommandRunner(Protocol):
    """Runs one command with a timeout; never raises for a missing or failing program."""

    def run(self, argv: Sequence[str], *, timeout: float) -> CommandResult:
        """Run ``argv`` and return its output."""
        ...


class SubprocessRunner:
    """The real runner: ``subprocess.run`` with a timeout and bounded output."""

    def run(self, argv: Sequence[str], *, timeout: float) -> CommandResult:
        """Run ``argv``; a missing program gives ``returncode=None``, a timeout ``returncode=-1``."""
        args = tuple(argv)
        if shutil.which(args[0]) is None:
            return CommandResult(args, None, "", f"{args[0]}: not installed")
        try:
            done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return CommandResult(args, -1, "", f"timed out after {timeout:g}s")
        except OSError as exc:
            return CommandResult(args, None, "", str(exc))
        return CommandResult(args, done.returncode, done.stdout[:_MAX_OUTPUT], done.stderr[:_MAX_OUTPUT])


class RecordedRunner:
    """A runner answering from recorded outputs, for tests (unknown commands are "not installed").

    >>> r = RecordedRunner({"nvidia-smi topo -m": "GPU0\\tX"})
    >>> r.run(["nvidia-smi", "topo", "-m"], timeout=5).stdout
    'GPU0\\tX'
    >>> r.run(["nvidia-smi", "-q"], timeout=5).returncode is None
    True
    """

    def __init__(self, outputs: Mapping[str, str]) -> None:
        self.outputs = dict(outputs)
        self.calls: list[str] = []

    def run(self, argv: Sequence[str], *, timeout: float) -> CommandResult:
        """The recorded stdout of ``argv`` (joined with spaces)."""
        key = " ".join(argv)
        self.calls.append(key)
        if key not in self.outputs:
            return CommandResult(tuple(argv), None, "", f"{argv[0]}: not installed")
        return CommandResult(tuple(argv), 0, self.outputs[key])
