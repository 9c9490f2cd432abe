"""Compute drift statistics with Evidently 0.7.23 and store them next to this script.

Run with a separate environment (never the project's .venv; Evidently pins pandas<3):

    python3 -m venv /work/venv-evidently
    /work/venv-evidently/bin/pip install "evidently==0.7.23" "pandas<3"
    /work/venv-evidently/bin/python tests/quality/reference/make_evidently_reference.py

It writes ``evidently_reference.json``: the samples themselves (so the test needs
no random generator to agree across numpy versions), the bin edges Evidently
used (``np.histogram_bin_edges(reference + current, "sturges")``), and
Evidently's PSI, Jensen-Shannon, normed Wasserstein and KS p-value per feature.
"""

from __future__ import annotations

import json
from pathlib import Path

import evidently
import numpy as np
import pandas as pd
from evidently.legacy.calculations.stattests.jensenshannon import _jensenshannon
from evidently.legacy.calculations.stattests.ks_stattest import _ks_stat_test
from evidently.legacy.calculations.stattests.psi import _psi
from evidently.legacy.calculations.stattests.wasserstein_distance_norm import _wasserstein_distance_norm
from evidently.legacy.core import ColumnType

OUT = Path(__file__).with_name("evidently_reference.json")


def main() -> None:
    rng = np.random.default_rng(20260)
    n = 1000
    numeric = {
        "normal_shift": (rng.normal(0, 1, n), rng.normal(0.3, 1, n)),
        "lognormal_scale": (rng.lognormal(0, 0.5, n), rng.lognormal(0, 0.8, n)),
        "uniform_same": (rng.uniform(0, 1, n), rng.uniform(0, 1, n)),
    }
    out = {"evidently": evidently.__version__, "numeric": {}, "categorical": {}}
    for name, (ref, cur) in numeric.items():
        ref, cur = np.round(ref, 6), np.round(cur, 6)
        r, c = pd.Series(ref), pd.Series(cur)
        edges = np.histogram_bin_edges(np.r_[ref, cur], bins="sturges")
        out["numeric"][name] = {
            "reference": ref.tolist(), "current": cur.tolist(), "edges": edges.tolist(),
            "psi": float(_psi(r, c, ColumnType.Numerical, 0.1)[0]),
            "js": float(_jensenshannon(r, c, ColumnType.Numerical, 0.1)[0]),
            "wasserstein_norm": float(_wasserstein_distance_norm(r, c, ColumnType.Numerical, 0.1)[0]),
            "ks_p_value": float(_ks_stat_test(r, c, ColumnType.Numerical, 0.05)[0]),
        }
    ref_cat = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    cur_cat = rng.choice(["a", "b", "c", "new"], n, p=[0.4, 0.3, 0.2, 0.1])
    r, c = pd.Series(ref_cat), pd.Series(cur_cat)
    out["categorical"]["with_unseen"] = {
        "reference": ref_cat.tolist(), "current": cur_cat.tolist(),
        "psi": float(_psi(r, c, ColumnType.Categorical, 0.1)[0]),
        "js": float(_jensenshannon(r, c, ColumnType.Categorical, 0.1)[0]),
    }
    OUT.write_text(json.dumps(out) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
