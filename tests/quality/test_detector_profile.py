"""Detector shape (fit -> score), profiles and their JSON format with precise errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inferwatch import InputError
from inferwatch.quality import (
    DriftDetector,
    FeatureDrift,
    Verdict,
    build_profile,
    dump_profile,
    load_profile,
    profile_to_json,
    read_table,
)


def _table(rng: np.random.Generator, n: int, shift: float = 0.0) -> dict[str, np.ndarray]:
    country = rng.choice(["de", "fr", "it"], n).astype(object)
    return {"age": rng.normal(40 + shift, 10, n), "country": country, "conf": rng.uniform(0, 1, n)}


def test_fit_then_score_gives_frozen_scores_in_drift_order() -> None:
    rng = np.random.default_rng(1)
    fitted = DriftDetector().fit(_table(rng, 4000), confidence="conf")
    report = fitted.score(_table(rng, 3000, shift=15.0))
    assert [f.name for f in report.by_drift()] == ["age", "country"]
    age = report.by_drift()[0]
    assert isinstance(age, FeatureDrift) and age.verdict is Verdict.ROLLBACK
    with pytest.raises(AttributeError):
        age.psi = 0.0  # type: ignore[misc]
    assert report.features[1].chi2 is not None and report.features[1].ks is None
    assert report.ignored == ("conf",)


def test_small_window_noise_is_not_drift() -> None:
    # rule: a PSI above 0.1 but below the no-drift critical value is stable
    rng = np.random.default_rng(2)
    fitted = DriftDetector(bins=10).fit({"x": rng.normal(size=20000)})
    scores = [fitted.score({"x": rng.normal(size=30)}).features[0] for _ in range(30)]
    noisy = [s for s in scores if s.psi > 0.1]
    assert noisy, "a 30-row window should often exceed 0.1 by chance"
    assert all(s.verdict is Verdict.STABLE and not s.significant for s in noisy if s.psi < s.psi_critical)


def test_profile_fitted_detector_gives_same_psi_without_ecdf_stats(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    ref, cur = _table(rng, 2000), _table(rng, 2000, shift=3.0)
    raw = DriftDetector().fit(ref).score(cur)
    path = tmp_path / "p.json"
    dump_profile(build_profile(ref), path)
    stored = DriftDetector().fit(load_profile(path)).score(cur)
    for a, b in zip(raw.features, stored.features, strict=True):
        assert a.psi == pytest.approx(b.psi, rel=1e-9)
    assert stored.features[0].ks is None and raw.features[0].ks is not None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(version=2), r"version: Input should be 1"),
        (lambda d: d["features"][0].update(edges=[2.0, 1.0]), r"features\[0\]: Value error, edges must be"),
        (lambda d: d["features"][0].update(proportions=[1.0]), r"features\[0\]: .*len\(edges\) \+ 1"),
        (lambda d: d["features"][1].update(categories=["de", "de", "it"]), r"features\[1\]: .*unique"),
        (lambda d: d["features"][0].pop("count"), r"features\[0\]\.count: Field required"),
        (lambda d: d["features"][0].update(type="text"), r"features\[0\]: "),
    ],
)
def test_profile_validation_names_file_and_field(tmp_path: Path, edit: object, message: str) -> None:
    rng = np.random.default_rng(4)
    doc = profile_to_json(build_profile(_table(rng, 500)))
    edit(doc)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=rf"bad\.json: {message}"):
        load_profile(path)


def test_profile_roundtrip_keeps_bins_and_confidence(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    profile = build_profile(_table(rng, 1000), bins=8, confidence="conf")
    dump_profile(profile, tmp_path / "p.json")
    back = load_profile(tmp_path / "p.json")
    assert back.names == ("age", "country") and back.confidence is not None
    np.testing.assert_array_equal(back.features[0].counts, profile.features[0].counts)


def test_score_errors_name_the_problem() -> None:
    rng = np.random.default_rng(6)
    fitted = DriftDetector().fit(_table(rng, 200))
    with pytest.raises(InputError, match="lacks reference columns: age"):
        fitted.score({"country": np.array(["de"], dtype=object)})
    with pytest.raises(InputError, match="'age': no non-missing values"):
        fitted.score({"age": np.full(5, np.nan), "country": np.array(["de"] * 5, dtype=object),
                      "conf": np.zeros(5)})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_read_table_csv_and_parquet(tmp_path: Path, suffix: str) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    t = pa.table({"x": [1.0, None, 3.0], "c": ["a", None, "b"], "n": [1, 2, 3]})
    path = tmp_path / f"t{suffix}"
    (pq.write_table if suffix == ".parquet" else pcsv.write_csv)(t, path)
    cols = read_table(path, categorical=["n"])
    assert np.isnan(cols["x"][1]) and cols["c"].tolist() == ["a", None, "b"]
    assert cols["n"].tolist() == ["1", "2", "3"]


def test_read_table_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_table(tmp_path / "missing.csv")
    (tmp_path / "a.csv").write_text("x\n1\n")
    with pytest.raises(InputError, match="no column named 'y'"):
        read_table(tmp_path / "a.csv", categorical=["y"])
