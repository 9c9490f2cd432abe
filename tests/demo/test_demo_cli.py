"""``inferwatch demo``: bounded by --duration, clean exit, one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from inferwatch.cli import main


def test_demo_verb_runs_the_whole_story_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    # 32 story minutes in 2.5 s (speed fitted to the duration): every phase shows up.
    assert main(["demo", "--duration", "2.5", "--rate", "30", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("inferwatch demo: dashboard at http://127.0.0.1:")  # the URL comes first
    for phase in ("normal", "latency", "outage", "drift", "narrow", "fallback"):
        assert f"phase {phase}" in out
    assert "x768 compressed time" in out or "at x768" in out
    assert "load generator:" in out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["demo", "--duration", "0"], "--duration: out of range"),   # must be positive
        (["demo", "--speed", "-2"], "--speed: out of range"),        # must be positive
        (["demo", "--port", "70000"], "--port: out of range"),       # not a TCP port
    ],
)
def test_bad_arguments_are_one_line(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err and err.count("\n") == 1


@pytest.mark.slow
def test_demo_ends_with_the_summary_and_no_exporter_errors() -> None:
    # stderr merged into stdout as a terminal shows them: the exporters stop before their collector
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    r = subprocess.run([sys.executable, "-m", "inferwatch", "demo", "--duration", "3", "--rate", "30",
                        "--seed", "3"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stdout
    lines = r.stdout.rstrip("\n").splitlines()
    header = max(i for i, line in enumerate(lines) if line.startswith("phase      requests"))
    assert [line.split()[0] for line in lines[header + 1:-1]] == ["normal", "latency", "outage", "drift",
                                                                   "narrow", "fallback"]
    assert lines[-1].startswith("load generator: ")  # nothing after the table
    assert "opentelemetry" not in r.stdout and "Failed to export" not in r.stdout, r.stdout[-3000:]
