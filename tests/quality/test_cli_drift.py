"""``inferwatch drift`` and ``inferwatch profile``: outputs, errors, and the HTML report in Chromium."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from inferwatch.cli._main import main


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(9)
    n = 2000

    def write(path: Path, shift: float) -> None:
        cols = {"age": rng.normal(40 + 8 * shift, 10, n), "score": rng.uniform(0, 1, n),
                "income": rng.lognormal(10 + 0.3 * shift, 0.5, n)}
        country = rng.choice(["de", "fr", "it"], n)
        lines = ["age,score,income,country"] + [
            f"{a},{s},{i},{c}" for a, s, i, c in zip(*cols.values(), country, strict=True)]
        path.write_text("\n".join(lines) + "\n")

    ref, cur = tmp_path / "ref.csv", tmp_path / "cur.csv"
    write(ref, 0.0)
    write(cur, 1.0)
    return ref, cur


def test_json_has_the_issue_shape_sorted_by_drift(files: tuple[Path, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    ref, cur = files
    assert main(["drift", "--reference", str(ref), "--current", str(cur), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    keys = {"name", "type", "psi", "ks", "ks_p_value", "js", "wasserstein", "verdict"}
    assert all(keys <= f.keys() for f in doc["features"])
    psis = [f["psi"] for f in doc["features"]]
    assert doc["features"][0]["name"] == "age" and doc["features"][0]["verdict"] == "rollback"
    assert {f["type"] for f in doc["features"]} == {"numeric", "categorical"}
    assert psis[:2] == sorted(psis[:2], reverse=True)


def test_table_and_errors(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
                          tmp_path: Path) -> None:
    ref, cur = files
    assert main(["drift", "-r", str(ref), "--current", str(cur), "--bins", "5"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^age\s+numeric\s+[\d.]+", out, re.M) and "overall rollback" in out
    assert main(["drift", "-r", str(ref), "--current", str(tmp_path / "nope.csv")]) == 2
    assert "nope.csv: no such file" in capsys.readouterr().err
    assert main(["drift", "-r", str(ref), "--current", str(cur), "--statistics", "psi,foo"]) == 2
    assert "unknown foo" in capsys.readouterr().err


def test_profile_build_then_drift_against_it(files: tuple[Path, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    ref, cur = files
    prof = tmp_path / "p.json"
    assert main(["profile", "build", str(ref), "-o", str(prof)]) == 0
    assert json.loads(prof.read_text())["format"] == "inferwatch-profile"
    capsys.readouterr()
    assert main(["drift", "-r", str(prof), "--current", str(cur), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["features"][0]["name"] == "age" and doc["features"][0]["ks"] is None


def test_html_report_renders_in_chromium_in_drift_order(
    files: tuple[Path, Path], tmp_path: Path, require_tool: Callable[..., str]
) -> None:
    chromium = require_tool("chromium", "chromium-browser", "google-chrome")
    ref, cur = files
    html = tmp_path / "report.html"
    assert main(["drift", "-r", str(ref), "--current", str(cur), "--format", "html", "-o", str(html)]) == 0
    text = html.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")  # no network needed
    with tempfile.TemporaryDirectory() as profile_dir:
        dom = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run",
             f"--user-data-dir={profile_dir}", "--dump-dom", html.as_uri()],
            capture_output=True, text=True, timeout=120, check=True,
        ).stdout
    rows = re.findall(r'<tr class="feature" data-feature="([^"]+)"', dom)
    plots = re.findall(r'<svg class="plot" data-feature="([^"]+)"', dom)
    assert rows == plots and rows[0] == "age" and set(rows) == {"age", "score", "income", "country"}
    assert dom.count("<rect") >= 2 * 3 * 3  # reference and current bars per bin
