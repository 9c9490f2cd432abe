"""Issue 36 #3 for regressors: `inferwatch performance estimate` without --y-pred-proba runs DLE."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as skm

from inferwatch.cli import main


def _write(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.write_text(",".join(header) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, object]:
    rng = np.random.default_rng(0)
    n_ref, n_ana = 3000, 2500
    n = n_ref + n_ana
    age = rng.integers(0, 20, size=n)
    fuel = rng.choice(["gas", "diesel"], size=n)
    pred = np.round(5000 - 150 * age + rng.normal(0, 300, size=n), 1)
    y = np.round(pred + rng.normal(size=n) * (100 + 20 * age + 200 * (fuel == "diesel")), 1)
    ref = [[i, age[i], fuel[i], pred[i], y[i]] for i in range(n_ref)]
    ana = [[i, age[i], fuel[i], pred[i]] for i in range(n_ref, n)]
    tgt = [[i, y[i]] for i in reversed(range(n_ref + 1, n))]  # another order; one row not labelled yet
    return {
        "ref": _write(tmp_path / "ref.csv", ["id", "age", "fuel", "price_pred", "price"], ref),
        "ana": _write(tmp_path / "ana.csv", ["id", "age", "fuel", "price_pred"], ana),
        "tgt": _write(tmp_path / "tgt.csv", ["id", "price"], tgt),
        "y": y[n_ref:],
        "pred": pred[n_ref:],
    }


def _args(f: dict[str, object], *extra: str) -> list[str]:
    return [
        "performance", "estimate", "--reference", str(f["ref"]), "--analysis", str(f["ana"]),
        "--y-pred", "price_pred", "--y-true", "price", "--id-col", "id", *extra,
    ]


def test_json_shape_and_realized_equal_to_scikit_learn(
    files: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    args = _args(files, "--chunk-size", "1000", "--json", "--analysis-targets", str(files["tgt"]))
    assert main(args) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert [(c["index"], c["start"], c["end"], c["rows"]) for c in chunks] == [(0, 0, 999, 1000),
                                                                               (1, 1000, 1999, 1000)]
    y, pred = np.asarray(files["y"]), np.asarray(files["pred"])
    for c in chunks:
        assert set(c) == {"index", "start", "end", "rows", "estimated", "lower", "upper", "realized"}
        assert list(c["estimated"]) == ["mae", "rmse"]
        for m in ("mae", "rmse"):
            assert c["lower"][m] < c["estimated"][m] < c["upper"][m]
        sl = slice(c["start"], c["end"] + 1)
        t, p = y[sl], pred[sl]
        keep = np.arange(c["start"], c["end"] + 1) != 0  # analysis row 0 has no target yet
        assert c["realized"]["mae"] == pytest.approx(skm.mean_absolute_error(t[keep], p[keep]), rel=1e-9)
        assert c["realized"]["rmse"] == pytest.approx(skm.root_mean_squared_error(t[keep], p[keep]), rel=1e-9)
        # The estimate is near the realized loss (2000 rows of a 3000-row reference).
        assert c["estimated"]["mae"] == pytest.approx(c["realized"]["mae"], rel=0.1)


def test_table_output_names_the_features_and_mape_on_request(
    files: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args(files, "--chunk-size", "2500", "--metrics", "mae,mape", "--problem", "regression")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "features: age, fuel"  # the id, the truth and the prediction are not inputs
    assert out[1].split() == ["chunk", "rows", "mae", "mape"]
    assert out[2].split()[:2] == ["0", "0-2499"]


def test_tune_reports_the_cross_validation_on_stderr(
    files: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args(files, "--chunk-size", "2500", "--tune", "--json")) == 0
    captured = capsys.readouterr()
    assert "3-fold CV on the reference" in captured.err and "chosen: " in captured.err
    assert len(json.loads(captured.out)["chunks"]) == 1


@pytest.mark.parametrize(
    ("change", "wanted"),
    [
        (["--y-true", "nope"], "ref.csv: no column named 'nope'"),
        (["--features", "age,colour"], "ref.csv: no column named 'colour'"),
        (["--features", "age,price"], "--features 'price' is the truth"),
        (["--y-true", "fuel"], "ref.csv: column 'fuel' must be numeric (found 'gas')"),
        (["--metrics", "mae,r2"], "unknown metric 'r2'"),
        (["--problem", "classification"], "--problem classification needs --y-pred-proba"),
        (["--problem", "regression", "--y-pred-proba", "p"], "--y-pred-proba is for classifiers"),
        (["--analysis-targets", "TGT_TEXT"], "tgt_text.csv: column 'price' must be numeric"),
        (["--chunk-size", "0"], "--chunk-size must be a positive number of rows"),
    ],
)
def test_bad_input_is_one_clear_line(
    files: dict[str, object],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: list[str],
    wanted: str,
) -> None:
    text = _write(tmp_path / "tgt_text.csv", ["id", "price"], [[3001, "high"], [3002, "low"]])
    args = _args(files, *[str(text) if c == "TGT_TEXT" else c for c in change])
    assert main(args) != 0
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err, err


def test_a_chunk_larger_than_the_analysis_is_a_clear_error(
    files: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    # 2,500 analysis rows hold no full chunk of 5,000: an empty table would look like no problem.
    assert main(_args(files, "--chunk-size", "5000")) != 0
    err = capsys.readouterr().err
    assert "ana.csv has 2500 rows, fewer than --chunk-size 5000" in err and "Traceback" not in err, err


def test_a_numeric_input_missing_on_every_analysis_row_is_estimated(
    files: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An empty column reads as text-typed; it holds no text, so it is the numeric input, all missing.
    lines = Path(str(files["ana"])).read_text().splitlines()
    blank = [lines[0]] + [",".join([r.split(",")[0], "", *r.split(",")[2:]]) for r in lines[1:]]
    ana = tmp_path / "ana_no_age.csv"
    ana.write_text("\n".join(blank) + "\n")
    args = _args(files, "--chunk-size", "1000", "--json")
    args[args.index(str(files["ana"]))] = str(ana)
    assert main(args) == 0, capsys.readouterr().err
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert len(chunks) == 2 and all(np.isfinite(c["estimated"]["mae"]) for c in chunks)
