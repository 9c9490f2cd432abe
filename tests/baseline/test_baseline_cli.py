"""``inferwatch baseline score`` and ``baseline promql``."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import yaml

from inferwatch.cli import main


def _write_csv(path: Path, t: np.ndarray, v: np.ndarray, header: str = "timestamp,value") -> None:
    from datetime import UTC, datetime

    rows = [f"{datetime.fromtimestamp(ti + 1.4e9, UTC):%Y-%m-%d %H:%M:%S},{vi:.4f}"
            for ti, vi in zip(t, v, strict=True)]
    path.write_text(header + "\n" + "\n".join(rows) + "\n")


def test_score_json_has_exactly_the_documented_shape(
        tmp_path: Path, daily: Callable[..., tuple], capsys: pytest.CaptureFixture[str]) -> None:
    # rule: {"points": N, "alerts": [{"start", "end", "peak"}]} with timestamps as in the file
    t, v = daily(3, seed=7)
    at = int(2.5 * 288)
    v[at : at + 6] += 10.0
    csv = tmp_path / "s.csv"
    _write_csv(csv, t, v)
    assert main(["baseline", "score", "--csv", str(csv), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"points", "alerts"} and out["points"] == t.size
    assert len(out["alerts"]) == 1
    alert = out["alerts"][0]
    assert set(alert) == {"start", "end", "peak"}
    stamps = [line.split(",")[0] for line in csv.read_text().splitlines()[1:]]
    assert alert["start"] in stamps[at : at + 3] and alert["end"] in stamps
    assert alert["peak"] == pytest.approx(float(np.max(v[at : at + 6])), abs=1e-3)


def test_score_table_and_custom_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rule: --timestamp-col / --value-col pick the columns; epoch seconds are timestamps too
    csv = tmp_path / "c.csv"
    csv.write_text("when,latency\n" + "\n".join(f"{i * 300},{1.0}" for i in range(10)) + "\n")
    assert main(["baseline", "score", "--csv", str(csv), "--timestamp-col", "when",
                 "--value-col", "latency"]) == 0
    assert "10 points, 0 alerts" in capsys.readouterr().out


@pytest.mark.parametrize(("content", "message"), [
    ("time,value\n1,2\n", "no column 'timestamp'"),                  # wrong header
    ("timestamp,value\nyesterday,2\n", ":2: timestamp: not a timestamp"),  # names the line
    ("timestamp,value\n300,abc\n", ":2: value: not a number: 'abc'"),
    ("timestamp,value\n", "no data rows"),
])
def test_bad_csv_is_one_line_without_traceback(tmp_path: Path, content: str, message: str) -> None:
    csv = tmp_path / "bad.csv"
    csv.write_text(content)
    out = subprocess.run([sys.executable, "-m", "inferwatch", "baseline", "score", "--csv", str(csv)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_promql_verb_prints_a_rule_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["baseline", "promql", "api_p99", "job:latency_p99:5m", "--fallback", "0.5"]) == 0
    rules = yaml.safe_load(capsys.readouterr().out)
    alert = rules["groups"][0]["rules"][-1]
    assert alert["alert"] == "api_p99_outside_baseline" and "0.5" in alert["expr"]


def test_score_windows_flag_catches_a_sustained_shift(
        tmp_path: Path, daily: Callable[..., tuple], capsys: pytest.CaptureFixture[str]) -> None:
    # rule: --windows/--level-points override the config: a 2-sigma shift held for 3 hours is
    # one alert with window means (the default) and none with `--windows '' --level-points 12`
    t, v = daily(5, seed=3)  # noise sigma 0.5
    at = 4 * 288
    v[at : at + 36] += 1.0
    csv = tmp_path / "s.csv"
    _write_csv(csv, t, v)
    assert main(["baseline", "score", "--csv", str(csv), "--json", "--windows", "",
                 "--level-points", "12"]) == 0
    plain = json.loads(capsys.readouterr().out)["alerts"]
    assert main(["baseline", "score", "--csv", str(csv), "--json"]) == 0
    default = json.loads(capsys.readouterr().out)["alerts"]
    assert main(["baseline", "score", "--csv", str(csv), "--json", "--windows", "6,24",
                 "--level-points", "144"]) == 0
    windowed = json.loads(capsys.readouterr().out)["alerts"]
    assert plain == [] and len(windowed) >= 1 and default == windowed


@pytest.mark.parametrize(("flags", "msg"), [
    (["--windows", "1"], "--windows: Value error, windows must each be 2..1024 samples"),
    (["--level-points", "2"], "--level-points: Input should be greater than or equal to 3"),
])
def test_score_bad_overrides_are_named(tmp_path: Path, daily: Callable[..., tuple], flags: list[str],
                                       msg: str, capsys: pytest.CaptureFixture[str]) -> None:
    t, v = daily(1, seed=1)
    csv = tmp_path / "s.csv"
    _write_csv(csv, t, v)
    assert main(["baseline", "score", "--csv", str(csv), *flags]) == 2
    assert msg in capsys.readouterr().err


def test_score_recurrence_flag_holds_repeated_bursts(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    # rule: by default the third and later bursts to the same height are held (baseline.recurrence
    # 2); --recurrence 0 alerts on every one
    rng = np.random.default_rng(5)
    n = int(16 * 86400 / 300)
    t = np.arange(n) * 300.0
    v = 30.0 + rng.normal(0.0, 1.0, n)
    for k in range(5):
        start = int((2.5 + 2.6 * k) * 288)
        v[start : start + 6] = 100.0
    csv = tmp_path / "cpu.csv"
    _write_csv(csv, t, v)
    assert main(["baseline", "score", "--csv", str(csv), "--json"]) == 0
    held = json.loads(capsys.readouterr().out)["alerts"]
    assert main(["baseline", "score", "--csv", str(csv), "--json", "--recurrence", "0"]) == 0
    every = json.loads(capsys.readouterr().out)["alerts"]
    assert len(every) == 5 and held == every[:2]


def test_score_bad_recurrence_is_named(tmp_path: Path, daily: Callable[..., tuple],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    t, v = daily(1, seed=1)
    csv = tmp_path / "s.csv"
    _write_csv(csv, t, v)
    with pytest.raises(SystemExit) as exc:
        main(["baseline", "score", "--csv", str(csv), "--recurrence", "-1"])
    assert exc.value.code == 2
    assert "--recurrence: expected a count 0..16, got '-1'" in capsys.readouterr().err
