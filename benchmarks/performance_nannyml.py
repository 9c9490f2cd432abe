"""The NannyML side of ``bench_performance.py``; runs under NannyML's own interpreter, never the project's.

Classifiers run NannyML's CBPE; the regressor (``car_price``) its direct loss
estimation (DLE, LightGBM). NannyML 0.13.1's DLE fails on pandas 3 (it imputes
a categorical column into a numpy array and assigns it back, which pandas 3
turns into a string array that cannot be reshaped), so DLE runs with pandas'
``future.infer_string`` off: its categorical columns stay Python objects, as
NannyML expects, and are encoded by NannyML itself.

    /path/to/venv-nannyml/bin/python benchmarks/performance_nannyml.py OUT_DIR [REPEATS]

For each dataset it writes the exact inputs both tools see (``NAME.reference.parquet``,
``NAME.analysis.parquet``, ``NAME.targets.parquet``, with standard column names) and
``nannyml.json``: NannyML's per-chunk estimates and its best time over REPEATS runs of
``fit(reference)`` + ``estimate(analysis)``. Titanic ships without a model, so a logistic
regression is fitted on the reference here (the same scores go to both tools).
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path

os.environ["NML_DISABLE_USAGE_LOGGING"] = "1"  # no analytics calls: no network here, and never timed
os.environ["NML_DISABLE_USER_ANALYTICS"] = "1"

import nannyml as nml
import numpy as np
import pandas as pd

warnings.filterwarnings("ignore")
METRICS = ["roc_auc", "accuracy", "f1", "precision", "recall"]
REGRESSION_METRICS = ["mae", "rmse"]
CAR_PRICE_FEATURES = [
    "car_age", "km_driven", "price_new", "accident_count", "door_count", "fuel", "transmission",
]


def _titanic() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    from sklearn.linear_model import LogisticRegression

    ref, ana, tgt = nml.load_titanic_dataset()

    def features(df: pd.DataFrame) -> np.ndarray:
        x = pd.DataFrame(
            {
                "pclass": df["Pclass"],
                "male": (df["Sex"] == "male").astype(float),
                "age": df["Age"].fillna(ref["Age"].median()),
                "sibsp": df["SibSp"],
                "parch": df["Parch"],
                "fare": np.log1p(df["Fare"].fillna(ref["Fare"].median())),
            }
        )
        return x.to_numpy(dtype=float)

    model = LogisticRegression(max_iter=1000).fit(features(ref), ref["Survived"])
    for df in (ref, ana):
        df["y_pred_proba"] = model.predict_proba(features(df))[:, 1].round(4)
        df["y_pred"] = (df["y_pred_proba"] > 0.5).astype(int)
    return ref, ana, tgt


def _small_chunks() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Calibrated scores, labels drawn from them (seeded): many 100-row chunks show each estimator's bias."""
    rng = np.random.default_rng(36)
    p = rng.beta(1.2, 1.2, size=40000).round(4)
    y = (rng.random(40000) < p).astype(int)
    df = pd.DataFrame({"id": np.arange(40000), "y_pred_proba": p, "y_pred": (p > 0.5).astype(int), "y": y})
    ref, ana = df.iloc[:20000].copy(), df.iloc[20000:].copy()
    return ref, ana.drop(columns=["y"]), ana[["id", "y"]]


def datasets() -> list[dict]:
    """name, problem, frames, columns, chunk size."""
    car = nml.load_synthetic_car_loan_dataset()
    binary = nml.load_synthetic_binary_classification_dataset()
    multi = nml.load_synthetic_multiclass_classification_dataset()
    classes = ["prepaid_card", "highstreet_card", "upmarket_card"]
    return [
        {
            "name": "car_loan",
            "frames": car,
            "id": "id",
            "y_true": "repaid",
            "proba": "y_pred_proba",
            "chunk": 5000,
        },
        {
            "name": "synthetic_binary",
            "frames": binary,
            "id": "id",
            "y_true": "work_home_actual",
            "proba": "y_pred_proba",
            "chunk": 5000,
        },
        {
            "name": "synthetic_multiclass",
            "frames": multi,
            "id": "id",
            "y_true": "y_true",
            "proba": {c: f"y_pred_proba_{c}" for c in classes},
            "chunk": 6000,
        },
        {
            "name": "calibrated_100_row_chunks",
            "frames": _small_chunks(),
            "id": "id",
            "y_true": "y",
            "proba": "y_pred_proba",
            "chunk": 100,
        },
        {
            "name": "car_price",
            "problem": "regression",
            "frames": nml.load_synthetic_car_price_dataset(),
            "id": "id",
            "y_true": "y_true",
            "y_pred": "y_pred",
            "features": CAR_PRICE_FEATURES,
            "chunk": 6000,
        },
        {
            "name": "titanic",
            "frames": _titanic(),
            "id": "PassengerId",
            "y_true": "Survived",
            "proba": "y_pred_proba",
            "chunk": 100,
        },
    ]


def _run_dle(d: dict, ref: pd.DataFrame, ana: pd.DataFrame) -> pd.DataFrame:
    chunker = nml.chunk.SizeBasedChunker(chunk_size=d["chunk"], incomplete="drop")
    with pd.option_context("future.infer_string", False):
        est = nml.DLE(
            feature_column_names=d["features"],
            y_pred=d["y_pred"],
            y_true=d["y_true"],
            metrics=REGRESSION_METRICS,
            chunker=chunker,
            hyperparameters={"verbose": -1},  # LGBMRegressor()'s defaults without its [Info] lines
        )
        est.fit(ref)
        return est.estimate(ana).filter(period="analysis").to_df()


def _run(d: dict, ref: pd.DataFrame, ana: pd.DataFrame) -> pd.DataFrame:
    if d.get("problem") == "regression":
        return _run_dle(d, ref, ana)
    chunker = nml.chunk.SizeBasedChunker(chunk_size=d["chunk"], incomplete="drop")
    multi = isinstance(d["proba"], dict)
    est = nml.CBPE(
        y_pred_proba=d["proba"],
        y_pred="y_pred",
        y_true=d["y_true"],
        metrics=METRICS,
        chunker=chunker,
        problem_type="classification_multiclass" if multi else "classification_binary",
    )
    est.fit(ref)
    return est.estimate(ana).filter(period="analysis").to_df()


def main(out: Path, repeats: int) -> None:
    results = {}
    for d in datasets():
        ref, ana, tgt = d["frames"]
        ana = ana.drop(columns=[d["y_true"]], errors="ignore")
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            df = _run(d, ref, ana)
            best = min(best, time.perf_counter() - t)
        metrics = REGRESSION_METRICS if d.get("problem") == "regression" else METRICS
        chunks = [{m: float(df[(m, "value")].iloc[i]) for m in metrics} for i in range(len(df))]
        edges = ("lower_confidence_boundary", "upper_confidence_boundary")
        bands = [{m: [float(df[(m, b)].iloc[i]) for b in edges] for m in metrics} for i in range(len(df))]
        results[d["name"]] = {
            "seconds": best,
            "chunks": chunks,
            "bands": bands,
            **{k: v for k, v in d.items() if k != "frames"},
        }
        for part, frame in (("reference", ref), ("analysis", ana), ("targets", tgt)):
            frame.drop(columns=["timestamp"], errors="ignore").to_parquet(out / f"{d['name']}.{part}.parquet")
        print(f"nannyml {d['name']}: {len(chunks)} chunks, {best:.3f} s", file=sys.stderr, flush=True)
    (out / "nannyml.json").write_text(json.dumps(results))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 3)
