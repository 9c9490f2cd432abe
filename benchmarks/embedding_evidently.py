"""The Evidently side of ``bench_embedding.py``; runs under Evidently's own interpreter, never the project's.

    /work/venv-evidently/bin/python benchmarks/embedding_evidently.py OUT.json

For each case of ``embedding_data.cases()`` it runs Evidently's two embedding drift methods
with the defaults its ``EmbeddingsDriftMetric`` uses: ``model()`` (SGD logistic regression on
a 50 % split, ROC AUC over 0.55, or over a bootstrap quantile when the reference has under
1000 rows) and ``mmd()`` (MMD² over a fixed 0.015), and writes scores, verdicts and seconds.
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evidently.legacy.metrics.data_drift.embedding_drift_methods import mmd, model

from embedding_data import cases, pair

warnings.filterwarnings("ignore")


def main() -> None:
    """Score every case, write the JSON named on the command line."""
    out = []
    for case in cases():
        ref, cur = pair(case)
        cols = [f"e{i}" for i in range(ref.shape[1])]
        row: dict[str, object] = {"name": case["name"]}
        small = ref.shape[0] < 1000  # EmbeddingsDriftMetric's default: bootstrap the AUC threshold when small
        for method, drift_method in (("model", model(bootstrap=small)), ("mmd", mmd())):
            r, c = pd.DataFrame(ref, columns=cols), pd.DataFrame(cur, columns=cols)
            t = time.perf_counter()
            score, drift, _ = drift_method(c, r)
            row[method] = {"score": float(score), "drift": bool(drift), "seconds": time.perf_counter() - t}
        out.append(row)
        print(row, file=sys.stderr, flush=True)
    Path(sys.argv[1]).write_text(json.dumps({"cases": out}, indent=1))


if __name__ == "__main__":
    main()
