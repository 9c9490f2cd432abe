"""Issue 38: the README's quickstart, run from the README's own text (the docs cannot drift).

The blocks under "## Quickstart: your own model server" are extracted and executed:
the app (FastAPI, then Flask), the shell lines (the app's server, ``init``, ``serve``).
Only what a test must change is changed, each named here: free ports instead of
8000 and 9464, ``python -m`` for the console scripts, and ``--speed 60`` on ``serve``
(compressed time: the README's "about two minutes" are two seconds). Then: a request
is scraped into the server, the app is stopped, the P0 page ``TargetDown`` is printed.
"""

from __future__ import annotations

import os
import queue
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import httpx
import pytest
from tests._require import require_module

README = Path(__file__).parent.parent / "README.md"
HEADING = "## Quickstart: your own model server"


def quickstart() -> str:
    """The README's quickstart section."""
    text = README.read_text(encoding="utf-8")
    start = text.index(HEADING)
    end = text.index("\n## ", start + len(HEADING))
    return text[start:end]


def app_source(framework: str) -> str:
    """The ``app.py`` block for ``framework`` (its first line is ``# app.py (FRAMEWORK)``)."""
    (block,) = re.findall(rf"```python\n(# app\.py \({framework}\)\n.*?)```", quickstart(), re.S)
    return str(block)


def shell_lines() -> list[str]:
    """The shell block's commands, in order, comments kept (the Flask server is in one)."""
    (block,) = re.findall(r"```sh\n(.*?)```", quickstart(), re.S)
    return [line for line in block.splitlines() if line.strip()]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _argv(command: str, ports: dict[str, str]) -> list[str]:
    """A README command as argv: ports swapped, ``&`` dropped, console scripts as ``python -m``."""
    command = re.sub(r"\b(8000|9464)\b", lambda m: ports[m.group(1)], command)
    words = shlex.split(command.strip().removesuffix("&"))
    return [sys.executable, "-m", *words]


def test_the_quickstart_has_an_app_per_framework_and_three_commands() -> None:
    for framework in ("FastAPI", "Flask"):
        assert "from inferwatch import Monitor" in app_source(framework)
    lines = shell_lines()
    assert [line.split()[0] for line in lines] == ["uvicorn", "inferwatch", "inferwatch"]
    assert lines[1].startswith("inferwatch init ") and lines[2].split("#")[0].strip() == "inferwatch serve"
    assert "# Flask: gunicorn " in lines[0]


@contextmanager
def _started(argv: list[str], cwd: Path, **kw: object) -> Iterator[subprocess.Popen[str]]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OTEL_", "INFERWATCH_"))} | {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    proc = subprocess.Popen(argv, cwd=cwd, env=env, text=True, **kw)  # type: ignore[call-overload]
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


def _read_until(stream: IO[str], needle: str, seen: list[str], timeout: float = 60.0) -> bool:
    """Read lines of a child's pipe until one contains ``needle`` (False when it said nothing in time).

    A reader thread hands the lines over: a text pipe buffers lines that ``select`` cannot see.
    """
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        try:
            for line in stream:
                lines.put(line)
        except (ValueError, OSError):  # the test closed the pipe (it stopped the child): nothing more
            pass

    threading.Thread(target=pump, daemon=True).start()
    while True:
        try:
            line = lines.get(timeout=timeout)
        except queue.Empty:
            return False
        seen.append(line)
        if needle in line:
            return True


def _answers(c: httpx.Client, url: str) -> bool:
    try:
        return c.post(url).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize(("framework", "module"), [("FastAPI", "fastapi"), ("Flask", "flask")])
def test_readme_quickstart_scrapes_the_app_and_pages_when_it_stops(
        framework: str, module: str, tmp_path: Path) -> None:
    require_module(module)
    (tmp_path / "app.py").write_text(app_source(framework))
    app_port, server_port = str(_free_port()), str(_free_port())
    ports = {"8000": app_port, "9464": server_port}
    run_app, init, serve = shell_lines()
    if framework == "Flask":
        run_app = run_app.split("# Flask: ", 1)[1]
    init_argv = [*_argv(init.split("#")[0], ports), "--listen", f"127.0.0.1:{server_port}"]
    done = subprocess.run(init_argv, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=os.environ | {"PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stderr
    base = f"http://127.0.0.1:{server_port}"
    app_url = f"http://127.0.0.1:{app_port}"
    app_log = (tmp_path / "app.log").open("w")
    with app_log, _started(_argv(run_app.split("#")[0], ports), tmp_path, stdout=app_log,
                           stderr=subprocess.STDOUT) as app, \
         _started([*_argv(serve.split("#")[0], ports), "--speed", "60"], tmp_path,
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE) as server:
        seen: list[str] = []
        assert _read_until(server.stderr, "listening on", seen), "".join(seen)  # type: ignore[arg-type]
        deadline = time.monotonic() + 90
        with httpx.Client(timeout=10) as c:
            while not _answers(c, f"{app_url}/predict"):  # the app starts: answers once bound
                assert time.monotonic() < deadline and app.poll() is None, (tmp_path / "app.log").read_text()
                c.get(f"{base}/-/healthy")  # a round trip instead of a sleep
            query = 'inferwatch_requests_total{job="app",route="/predict",code="200"}'
            while not c.get(f"{base}/api/v1/query", params={"query": query}).json()["data"]["result"]:
                # scrapes come every second of compressed time
                assert time.monotonic() < deadline, "the server never scraped the app's request"
        app.send_signal(signal.SIGTERM)
        app.communicate(timeout=30)
        page: list[str] = []
        assert _read_until(server.stdout, "[FIRING:1] [P0] TargetDown", page,  # type: ignore[arg-type]
                           timeout=120), "".join(page)
