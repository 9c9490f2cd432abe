"""Issue 36 #3: `inferwatch performance estimate` on CSV and Parquet files, the JSON shape, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as skm
from tests._require import require_module

from inferwatch.cli import main

METRICS = ["roc_auc", "accuracy", "f1", "precision", "recall"]


def _write(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.write_text(",".join(header) + "\n" + "".join(",".join(map(str, r)) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    n_ref, n_ana = 4000, 2500
    p = np.round(rng.beta(2, 2, size=n_ref + n_ana), 4)
    y = (rng.random(n_ref + n_ana) < p).astype(int)
    pred = (p > 0.5).astype(int)
    ref = [[i, p[i], pred[i], y[i]] for i in range(n_ref)]
    ana = [[i, p[i], pred[i]] for i in range(n_ref, n_ref + n_ana)]
    # Targets in another order, one analysis row without a label yet.
    tgt = [[i, y[i]] for i in reversed(range(n_ref + 1, n_ref + n_ana))]
    return {
        "ref": _write(tmp_path / "ref.csv", ["id", "score", "pred", "label"], ref),
        "ana": _write(tmp_path / "ana.csv", ["id", "score", "pred"], ana),
        "tgt": _write(tmp_path / "tgt.csv", ["id", "label"], tgt),
        "y": y,
        "p": p,
        "pred": pred,  # type: ignore[dict-item]
    }


def _args(f: dict[str, Path], *extra: str) -> list[str]:
    return [
        "performance",
        "estimate",
        "--reference",
        str(f["ref"]),
        "--analysis",
        str(f["ana"]),
        "--y-pred-proba",
        "score",
        "--y-pred",
        "pred",
        "--y-true",
        "label",
        *extra,
    ]


def test_json_shape_chunks_in_file_order_last_partial_dropped(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_args(files, "--chunk-size", "1000", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["chunks"]
    assert [(c["index"], c["start"], c["end"], c["rows"]) for c in doc["chunks"]] == [
        (0, 0, 999, 1000),
        (1, 1000, 1999, 1000),
    ]  # rows 2000..2499 form a partial chunk: dropped
    for c in doc["chunks"]:
        assert list(c) == ["index", "start", "end", "rows", "estimated", "lower", "upper"]
        assert list(c["estimated"]) == METRICS
        for m in METRICS:
            assert c["lower"][m] <= c["estimated"][m] <= c["upper"][m]


def test_targets_add_realized_equal_to_scikit_learn(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = _args(
        files,
        "--chunk-size",
        "1000",
        "--metrics",
        "accuracy,roc_auc",
        "--analysis-targets",
        str(files["tgt"]),
        "--id-col",
        "id",
        "--json",
    )
    assert main(args) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    y, p, pred = files["y"], files["p"], files["pred"]  # type: ignore[misc]
    first = slice(4001, 5000)  # row 4000 of the analysis has no label: left out of the realized values
    assert chunks[0]["realized"]["accuracy"] == pytest.approx(skm.accuracy_score(y[first], pred[first]))
    assert chunks[0]["realized"]["roc_auc"] == pytest.approx(skm.roc_auc_score(y[first], p[first]))
    second = slice(5000, 6000)
    assert chunks[1]["realized"]["roc_auc"] == pytest.approx(skm.roc_auc_score(y[second], p[second]))
    assert list(chunks[1]["estimated"]) == ["accuracy", "roc_auc"]
    assert abs(chunks[1]["estimated"]["accuracy"] - chunks[1]["realized"]["accuracy"]) < 0.06


def test_parquet_and_multiclass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pa = require_module("pyarrow")  # a dev dependency: CI has it
    import pyarrow.parquet as pq

    rng = np.random.default_rng(1)
    logits = rng.normal(size=(3000, 3)) * 2
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    names = np.array(["cat", "dog", "emu"])
    y = names[(rng.random((3000, 1)) > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)]
    pred = names[p.argmax(axis=1)]
    cols = {f"p_{c}": p[:, i] for i, c in enumerate(names)}
    pq.write_table(
        pa.table({**{k: v[:2000] for k, v in cols.items()}, "pred": pred[:2000], "truth": y[:2000]}),
        tmp_path / "ref.parquet",
    )
    pq.write_table(
        pa.table({**{k: v[2000:] for k, v in cols.items()}, "pred": pred[2000:]}), tmp_path / "ana.pq"
    )
    args = [
        "performance",
        "estimate",
        "--reference",
        str(tmp_path / "ref.parquet"),
        "--analysis",
        str(tmp_path / "ana.pq"),
        "--y-pred-proba",
        "cat=p_cat,dog=p_dog,emu=p_emu",
        "--y-pred",
        "pred",
        "--y-true",
        "truth",
        "--chunk-size",
        "500",
        "--json",
    ]
    assert main(args) == 0
    chunks = json.loads(capsys.readouterr().out)["chunks"]
    assert len(chunks) == 2
    real = skm.accuracy_score(y[2000:2500], pred[2000:2500])
    assert abs(chunks[0]["estimated"]["accuracy"] - real) < 0.08


@pytest.mark.parametrize(
    ("change", "wanted"),
    [
        (["--y-pred-proba", "nope"], "ref.csv: no column named 'nope'"),
        (["--y-true", "pred2"], "ref.csv: no column named 'pred2'"),
        (["--chunk-size", "0"], "--chunk-size must be a positive number of rows, not 0"),
        (["--chunk-size", "5000"], "ana.csv has 2500 rows, fewer than --chunk-size 5000"),
        (["--metrics", "auc"], "unknown metric 'auc'"),
        (["--analysis-targets", "x.csv"], "--analysis-targets needs --id-col COL"),
        (["--y-pred-proba", "a=score"], "LABEL=COL,LABEL=COL for multiclass"),
    ],
)
def test_bad_input_is_one_clear_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], change: list[str], wanted: str
) -> None:
    args = _args(files)
    for i in range(0, len(change), 2):
        if change[i] in args:
            args[args.index(change[i]) + 1] = change[i + 1]
        else:
            args += change[i : i + 2]
    assert main(args) != 0
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err, err


def test_labels_must_be_binary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ref = _write(tmp_path / "ref.csv", ["score", "pred", "label"], [[0.2, 0, 0], [0.7, 1, 2]] * 20)
    args = [
        "performance",
        "estimate",
        "--reference",
        str(ref),
        "--analysis",
        str(ref),
        "--y-pred-proba",
        "score",
        "--y-pred",
        "pred",
        "--y-true",
        "label",
    ]
    assert main(args) != 0
    assert "ref.csv: column 'label' must hold 0/1 labels, found 2.0" in capsys.readouterr().err


def test_table_output(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_args(files, "--chunk-size", "2500")) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:3] == ["chunk", "rows", "roc_auc"]
    assert out[1].split()[:2] == ["0", "0-2499"] and out[1].index("0-2499") + 6 == out[0].index("rows") + 4


@pytest.mark.parametrize(("pred", "wanted"), [
    ("2", None),  # numeric labels compare as numbers with the class names "0", "1", "2"
    ("7", "ref.csv: column 'pred': value 7.0 is not one of the classes 0, 1, 2"),
])
def test_multiclass_numeric_labels(tmp_path: Path, capsys: pytest.CaptureFixture[str], pred: str,
                                   wanted: str | None) -> None:
    rows = [[0.8, 0.1, 0.1, 0, 0], [0.1, 0.8, 0.1, 1, 1], [0.1, 0.1, 0.8, pred, 2], [0.3, 0.4, 0.3, 1, 0]]
    rows *= 10
    ref = _write(tmp_path / "ref.csv", ["a", "b", "c", "pred", "label"], rows)
    args = ["performance", "estimate", "--reference", str(ref), "--analysis", str(ref), "--y-pred-proba",
            "0=a,1=b,2=c", "--y-pred", "pred", "--y-true", "label", "--chunk-size", "20", "--json"]
    rc = main(args)
    out = capsys.readouterr()
    if wanted is None:
        assert rc == 0 and len(json.loads(out.out)["chunks"]) == 2
    else:
        assert rc != 0 and wanted in out.err, out.err
