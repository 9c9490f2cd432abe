"""The ``inferwatch`` command: one verb per capability, ``--help`` on each."""

from inferwatch.cli._main import main

__all__ = ["main"]
