"""Embedding drift against Evidently: the same synthetic sets, verdicts side by side, and the time.

    python benchmarks/bench_embedding.py [--evidently-python PATH] [--record FIXTURE.json]

Evidently runs as a subprocess under its own interpreter (``benchmarks/embedding_evidently.py``;
it pins its own pandas and scikit-learn, so never the project's venv): ``--evidently-python`` or
``$INFERWATCH_BENCH_EVIDENTLY_PYTHON``, default ``/work/venv-evidently/bin/python``
(``python3 -m venv /work/venv-evidently && /work/venv-evidently/bin/pip install evidently 'pandas<3'``).
Cases (``embedding_data.py``): 1k and 5k vectors per side, dimension 64 and 384, no shift, a
small shift (0.1 sd on 16 of the components) and a large one (1 sd). inferwatch's
``embedding_drift`` runs with its defaults (MMD² on at most 1000 vectors per side with a
200-permutation critical value; the classifier's 2-fold AUC on everything). ``--record`` writes
Evidently's verdicts as ``tests/quality/reference/evidently_embedding.json``, which
``tests/quality/test_embedding_evidently.py`` replays.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _results  # noqa: E402
from embedding_data import cases, pair  # noqa: E402
from inferwatch.quality import embedding_drift  # noqa: E402

DEFAULT_PY = "/work/venv-evidently/bin/python"


def run_evidently(py: str) -> dict[str, dict]:
    """Evidently's scores per case name (its own interpreter, one subprocess)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "evidently.json"
        subprocess.run([py, str(HERE / "embedding_evidently.py"), str(out)], check=True,
                       stderr=subprocess.DEVNULL)
        return {c["name"]: c for c in json.loads(out.read_text())["cases"]}


def run_ours() -> dict[str, dict]:
    """inferwatch's scores and seconds per case name."""
    out = {}
    for case in cases():
        ref, cur = pair(case)
        t = time.perf_counter()
        d = embedding_drift(ref, cur)
        out[str(case["name"])] = {"drift": d, "seconds": time.perf_counter() - t, "kind": case["kind"]}
    return out


def main() -> None:
    """Print the side-by-side table and the totals."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--evidently-python",
                    default=os.environ.get("INFERWATCH_BENCH_EVIDENTLY_PYTHON", DEFAULT_PY))
    ap.add_argument("--record", type=Path, help="write Evidently's verdicts here (the test's fixture)")
    args = ap.parse_args()
    theirs = run_evidently(args.evidently_python)
    ours = run_ours()
    print(f"{'case':<18} {'ev AUC':>7} {'iw AUC':>7} {'crit':>5} {'ev MMD²':>8} {'iw MMD²':>8} {'crit':>8} "
          f"{'ev model/mmd':>12} {'iw clf/mmd':>10} {'ev s':>6} {'iw s':>6}")
    agree = {"model": 0, "mmd": 0}
    right = {"evidently": 0, "inferwatch": 0}
    ev_total = iw_total = 0.0
    for name, o in ours.items():
        e, d = theirs[name], o["drift"]
        ev_s = e["model"]["seconds"] + e["mmd"]["seconds"]
        ev_total += ev_s
        iw_total += o["seconds"]
        agree["model"] += e["model"]["drift"] == d.classifier_drift
        agree["mmd"] += e["mmd"]["drift"] == d.mmd_drift
        truth = o["kind"] != "none"
        right["evidently"] += (e["model"]["drift"] or e["mmd"]["drift"]) == truth
        right["inferwatch"] += (d.classifier_drift or d.mmd_drift) == truth

        def yn(flag: bool) -> str:
            return "D" if flag else "-"

        print(f"{name:<18} {e['model']['score']:7.3f} {d.auc:7.3f} {d.auc_critical:5.3f} "
              f"{e['mmd']['score']:8.5f} {d.mmd2:8.5f} {d.mmd2_critical:8.5f} "
              f"{yn(e['model']['drift']) + '/' + yn(e['mmd']['drift']):>12} "
              f"{yn(d.classifier_drift) + '/' + yn(d.mmd_drift):>10} {ev_s:6.2f} {o['seconds']:6.2f}")
    n = len(ours)
    print(f"verdicts agree: classifier {agree['model']}/{n}, MMD {agree['mmd']}/{n}; "
          f"right against the truth (drift = either method): evidently {right['evidently']}/{n}, "
          f"inferwatch {right['inferwatch']}/{n}")
    print(f"time: evidently {ev_total:.2f} s, inferwatch {iw_total:.2f} s, "
          f"ratio inferwatch/evidently {iw_total / ev_total:.2f}")
    _results.record("Model quality and estimated performance",
                    f"Embedding drift, {n} cases (1k/5k vectors, dim 64/384, no/small/large shift), "
                    "MMD² + classifier",
                    f"{iw_total:.1f} s; right {right['inferwatch']}/{n}",
                    f"Evidently 0.7.23 `mmd()` + `model()`: {ev_total:.1f} s; right {right['evidently']}/{n}",
                    f"time {iw_total / ev_total:.2f}; classifier verdicts agree {agree['model']}/{n}, "
                    f"MMD {agree['mmd']}/{n}")
    if args.record:
        args.record.write_text(json.dumps({n: {"model": e["model"]["drift"], "mmd": e["mmd"]["drift"],
                                               "auc": round(e["model"]["score"], 4),
                                               "mmd2": round(e["mmd"]["score"], 6)}
                                           for n, e in theirs.items()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
