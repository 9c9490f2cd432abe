"""``inferwatch profile build --labels COL --score COL``: a labelled sample in the profile, fit from it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inferwatch._exceptions import InputError
from inferwatch.cli import main
from inferwatch.model import SimulatedClock
from inferwatch.quality import CBPE, EstimatedPerformance, fit_from_profile, load_profile
from inferwatch.sdk import Monitor


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


def _write_multiclass(path: Path, rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Three classes (names a, b, c): softmax probabilities, the true class drawn from them."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=2.0, size=(rows, 3))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    p = p.round(4)
    y = np.array([rng.choice(3, p=row / row.sum()) for row in p])
    names = np.array(["a", "b", "c"])
    lines = ["x,p_a,p_b,p_c,kind", *(f"{rng.normal():.3f},{r[0]},{r[1]},{r[2]},{names[k]}"
                                     for r, k in zip(p, y, strict=True))]
    path.write_text("\n".join(lines) + "\n")
    return p, y


def test_a_multiclass_profile_keeps_class_probabilities_and_the_sdk_estimates_with_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    ref, prof = tmp_path / "ref.csv", tmp_path / "p.json"
    p, y = _write_multiclass(ref, 3000, 5)
    argv = ["profile", "build", str(ref), "-o", str(prof), "--labels", "kind", "--score", "a=p_a,b=p_b,c=p_c"]
    assert main(argv) == 0
    assert "3000 labelled rows of 3 class probabilities kept" in capsys.readouterr().err
    doc = json.loads(prof.read_text())
    assert [f["name"] for f in doc["features"]] == ["x"]
    assert len(doc["labelled"]["scores"][0]) == 3 and set(doc["labelled"]["labels"]) == {0, 1, 2}
    fitted = fit_from_profile(load_profile(prof))
    assert fitted.classes == 3
    direct = CBPE().fit(y, p.argmax(axis=1), p)  # one calibrator per class, as `performance estimate`
    assert fitted.reference == pytest.approx(direct.reference)
    assert fitted.reference["accuracy"] == pytest.approx(float(np.mean(p.argmax(axis=1) == y)))
    # the SDK path: probabilities through a Monitor, scored at the window's close by the same estimator
    window, _ = _write_multiclass(tmp_path / "live.csv", 400, 6)
    clock = SimulatedClock(0.0)
    agg = EstimatedPerformance(fitted, service="svc", model="m", window=60.0, min_rows=100)
    with Monitor("svc", "m", clock=clock, aggregators=[agg]) as mon:
        for row in window:
            mon.observe_prediction({"x": 0.0}, probabilities=row.tolist())
        assert mon.flush(60.0)
        clock.advance(60.0)
        key = {"service": "svc", "model": "m", "metric": "accuracy", "bound": "estimate"}
        got = mon.get_sample_value("inferwatch_model_estimated", key)
    want = direct.score(window.argmax(axis=1).astype(float), window).estimated["accuracy"]
    assert got == pytest.approx(want)
    assert agg.invalid == 0


@pytest.mark.parametrize(("score", "fragment"), [
    ("a=p_a,b=p_b", "two classes are a binary model"),
    ("a=p_a,b=p_b,c=nope", "nope"),
    ("a=p_a,b=p_b,d=p_c", "is not one of the classes a, b, d"),
    ("a=p_a,=p_b,c=p_c", "--score 'a=p_a,=p_b,c=p_c': use COL, or LABEL=COL"),
])
def test_bad_multiclass_scores_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], score: str, fragment: str,
) -> None:
    ref = tmp_path / "ref.csv"
    _write_multiclass(ref, 100, 7)
    argv = ["profile", "build", str(ref), "-o", str(tmp_path / "p.json"), "--labels", "kind",
            "--score", score]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and "Traceback" not in err


@pytest.mark.parametrize(("labelled", "fragment"), [
    ({"scores": [[0.5, 0.5]] * 10, "labels": [0] * 10}, "k >= 3"),
    ({"scores": [[0.5]] * 10, "labels": [0] * 10}, "k >= 3"),  # rows of one: not the binary form
    ({"scores": [[0.2, 0.3, 0.5]] * 10, "labels": [3] * 10}, "class indices 0..2"),
    ({"scores": [0.5] * 10, "labels": [2] * 10}, "class indices 0..1"),
])
def test_a_bad_labelled_sample_in_a_profile_file_names_the_field(
    tmp_path: Path, labelled: dict[str, object], fragment: str,
) -> None:
    ref, prof = tmp_path / "ref.csv", tmp_path / "p.json"
    _write(ref, 100, 8)
    assert main(["profile", "build", str(ref), "-o", str(prof)]) == 0
    doc = json.loads(prof.read_text())
    doc["labelled"] = labelled
    prof.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="labelled") as exc:
        load_profile(prof)
    assert fragment in str(exc.value)
