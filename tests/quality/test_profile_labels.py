"""``inferwatch profile build --labels COL --score COL``: a labelled sample in the profile, fit from it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inferwatch.cli import main
from inferwatch.quality import CBPE, fit_from_profile, load_profile


def _write(path: Path, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=rows).round(4)
    y = (rng.random(rows) < p).astype(int)
    x = rng.normal(size=rows).round(3)
    lines = ["x,score,clicked", *(f"{a},{b},{c}" for a, b, c in zip(x, p, y, strict=True))]
    path.write_text("\n".join(lines) + "\n")
    return p, y


def test_the_profile_keeps_the_labelled_sample_and_fits_the_same_estimator(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    ref, prof = tmp_path / "ref.csv", tmp_path / "p.json"
    p, y = _write(ref, 3000, 1)
    argv = ["profile", "build", str(ref), "-o", str(prof), "--labels", "clicked", "--score", "score"]
    assert main(argv) == 0
    assert "3000 labelled scores kept" in capsys.readouterr().err
    doc = json.loads(prof.read_text())
    assert [f["name"] for f in doc["features"]] == ["x"]  # the label and score are not features
    profile = load_profile(prof)
    fitted = fit_from_profile(profile)
    direct = CBPE().fit(y, (p >= 0.5).astype(float), p)
    window = np.random.default_rng(2).uniform(size=500)
    pred = (window >= 0.5).astype(float)
    assert fitted.score(pred, window).estimated == direct.score(pred, window).estimated
    assert fitted.reference["accuracy"] == pytest.approx(float(np.mean((p >= 0.5) == y)))


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--labels", "clicked"], "--labels and --score go together"),
    (["--labels", "nope", "--score", "score"], "no column 'nope'"),
    (["--labels", "x", "--score", "score"], "must hold the true class, 0 or 1"),
])
def test_bad_label_options_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], fragment: str,
) -> None:
    ref = tmp_path / "ref.csv"
    _write(ref, 100, 3)
    assert main(["profile", "build", str(ref), "-o", str(tmp_path / "p.json"), *extra]) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


def test_a_profile_without_labels_says_how_to_get_them(tmp_path: Path) -> None:
    ref, prof = tmp_path / "ref.csv", tmp_path / "p.json"
    _write(ref, 100, 4)
    assert main(["profile", "build", str(ref), "-o", str(prof)]) == 0
    with pytest.raises(Exception, match="--labels COL --score COL"):
        fit_from_profile(load_profile(prof))
