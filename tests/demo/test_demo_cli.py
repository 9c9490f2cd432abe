"""``inferwatch demo``: bounded by --duration, clean exit, one-line errors."""

from __future__ import annotations

import pytest

from inferwatch.cli import main


def test_demo_verb_runs_the_whole_story_and_exits(capsys: pytest.CaptureFixture[str]) -> None:
    # 25 story minutes in 2.5 s (speed fitted to the duration): every phase shows up.
    assert main(["demo", "--duration", "2.5", "--rate", "30", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("inferwatch demo: dashboard at http://127.0.0.1:")  # the URL comes first
    for phase in ("normal", "latency", "outage", "drift"):
        assert f"phase {phase}" in out
    assert "x600 compressed time" in out or "at x600" in out
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
