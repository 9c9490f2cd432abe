"""Issue 38: `serve` with no arguments reads ./inferwatch.yaml; client verbs find its address and token."""

from __future__ import annotations

import os
import re
import select
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from inferwatch.cli import main

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """`inferwatch init` then `inferwatch serve` with no arguments, in tmp_path; yields the base URL."""
    monkeypatch.chdir(tmp_path)
    for name in ("INFERWATCH_CONFIG", "INFERWATCH_API_TOKEN", "INFERWATCH_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    listen = f"127.0.0.1:{_free_port()}"
    assert main(["init", "--receiver", "terminal", "--listen", listen]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "serve"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    lines: list[str] = []
    try:
        while not any("listening on" in line for line in lines):
            ready, _, _ = select.select([proc.stderr], [], [], 60)
            line = proc.stderr.readline() if ready else ""
            assert line, "".join(lines)
            lines.append(line)
        assert f"listening on http://{listen} " in lines[-1] and "(1 targets" in lines[-1]
        yield f"http://{listen}"
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in "".join(lines) + err


def test_client_verbs_read_address_and_token_from_the_config_and_data_dir(
        served: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert Path("data/api_token").is_file()  # generated at the first start; nobody typed it
    assert main(["silence", "add", "alertname=Quickstart", "-m", "try it", "-d", "1h"]) == 0
    sid = capsys.readouterr().out.strip()
    assert re.fullmatch(r"[0-9a-f-]{36}", sid)
    assert main(["silence", "list"]) == 0
    assert sid in capsys.readouterr().out
    assert main(["slo", "status"]) == 0
    assert "no SLOs" in capsys.readouterr().out
    # a wrong token: the server's whole message, one line, no traceback
    assert main(["silence", "--token", "wrong", "expire", sid]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"the server at {served} refused the write (401): " in err
    assert "(401): the token from --token is not the server's; use the server's API token" in err
    assert "else the api_token file in its data directory" in err and "wrong" not in err
    assert "[server: the bearer token is not one the server accepts: send 'Authorization: Bearer <token>'" \
        in err  # the server's words, whole
    # no token anywhere: the message names every place that was looked in
    Path("data/api_token").rename("api_token.kept")
    try:
        assert main(["silence", "expire", sid]) == 2
    finally:
        Path("api_token.kept").rename("data/api_token")
    err = capsys.readouterr().err
    assert "(401): no token was sent (none of --token, $INFERWATCH_API_TOKEN, server.api_token, " in err
    # Alertmanager's API answers its errors as a JSON string (what amtool and AM clients print)
    r = httpx.post(served + "/api/v2/silences", json={})
    assert r.status_code == 401 and isinstance(r.json(), str) and "Bearer" in r.json()


def test_config_and_server_flags_work_before_or_after_the_action(
        served: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "elsewhere.yaml"
    other.write_text(Path("inferwatch.yaml").read_text())
    Path("inferwatch.yaml").unlink()  # only the flag can find the server now
    for argv in (["silence", "--config", str(other), "list"], ["silence", "list", "--config", str(other)],
                 ["silence", "list", "--url", served]):
        assert main(argv) == 0, argv
        assert capsys.readouterr().out.startswith("ID ")


def test_serve_without_any_config_says_how_to_get_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "INFERWATCH_"))}
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "serve", "--listen", "127.0.0.1:0"],
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stderr is not None
    try:
        first = proc.stderr.readline()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert "no config" in first and "`inferwatch init` writes one" in first
