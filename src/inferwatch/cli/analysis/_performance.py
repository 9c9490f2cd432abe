"""``inferwatch performance estimate``: estimated (and realized) performance per chunk.

A classifier (``--y-pred-proba`` given): confidence-based performance estimation
(CBPE). A regressor (no ``--y-pred-proba``, or ``--problem regression``): direct
loss estimation (DLE), which needs the ``regression`` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inferwatch.cli._common import print_json
from inferwatch.cli.analysis._performance_common import id_column, print_table

__all__ = ["add_parser"]

_METRICS = "roc_auc,accuracy,f1,precision,recall"
_REGRESSION_METRICS = "mae,rmse"


def add_parser(sub: Any) -> None:
    """Register ``performance``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "performance",
        help="estimate a model's performance on unlabelled data (CBPE, DLE)",
        description="Classifiers: confidence-based performance estimation (CBPE) calibrates the scores on a "
        "labelled reference, then estimates ROC AUC, accuracy, precision, recall and F1 per chunk of "
        "unlabelled analysis rows. Regressors (no --y-pred-proba): direct loss estimation (DLE) fits a model "
        "of the loss on the reference and estimates MAE, RMSE and MAPE per chunk (needs "
        "pip install 'inferwatch[regression]'). Each estimate has a ±3σ sampling-error band. "
        "Assumes P(y | x) carries over from the reference (no concept drift).",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    est = verbs.add_parser("estimate", help="estimate per chunk of the analysis file")
    est.add_argument("--reference", required=True, metavar="REF", help="CSV or Parquet file with labels")
    est.add_argument(
        "--analysis", required=True, metavar="ANALYSIS", help="CSV or Parquet file without labels"
    )
    est.add_argument(
        "--y-pred-proba",
        metavar="COL",
        help="score column (binary, labels 0/1) or LABEL=COL,LABEL=COL,... (multiclass); "
        "absent for a regressor",
    )
    est.add_argument("--y-pred", required=True, metavar="COL", help="predicted class (or value) column")
    est.add_argument(
        "--y-true", required=True, metavar="COL", help="true class (or value) column (in the reference)"
    )
    est.add_argument(
        "--problem",
        choices=("classification", "regression"),
        help="default: classification with --y-pred-proba, regression without",
    )
    est.add_argument(
        "--features",
        metavar="LIST",
        help="regression: the model's input columns, comma-separated (default: every reference column "
        "also in the analysis, except --y-true, --y-pred and --id-col)",
    )
    est.add_argument(
        "--tune",
        action="store_true",
        help="regression: choose the loss model's hyper-parameters by cross-validation on the reference "
        "(slower; the report goes to stderr)",
    )
    est.add_argument(
        "--chunk-size",
        type=int,
        default=5000,
        metavar="N",
        help="rows per chunk, in file order; a last partial chunk is dropped (default 5000)",
    )
    est.add_argument(
        "--metrics",
        metavar="LIST",
        help=f"comma-separated (default {_METRICS}; regression: {_REGRESSION_METRICS}, or mape)",
    )
    est.add_argument(
        "--analysis-targets", metavar="FILE", help="labels of the analysis rows: adds 'realized'"
    )
    est.add_argument("--id-col", metavar="COL", help="column joining --analysis-targets to the analysis rows")
    est.add_argument("--json", action="store_true", help="print JSON")
    est.set_defaults(func=_estimate)


def _estimate(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.quality import ColumnSpec, estimate_chunks, join_targets, read_table

    problem = args.problem or ("classification" if args.y_pred_proba else "regression")
    if problem == "classification" and not args.y_pred_proba:
        raise InputError("--problem classification needs --y-pred-proba COL (the scores)")
    if problem == "regression" and args.y_pred_proba:
        raise InputError("--y-pred-proba is for classifiers: drop it, or drop --problem regression")
    if problem == "regression":
        from inferwatch.cli.analysis._performance_regression import estimate_regression

        return estimate_regression(args)
    metrics = [m.strip() for m in (args.metrics or _METRICS).split(",") if m.strip()]
    spec = ColumnSpec.parse(args.y_pred_proba, args.y_pred, args.y_true)
    if args.analysis_targets and not args.id_col:
        raise InputError(
            "--analysis-targets needs --id-col COL, the column that joins targets to analysis rows"
        )
    reference = read_table(args.reference)
    analysis = read_table(args.analysis)
    truth = None
    if args.analysis_targets:
        targets = read_table(args.analysis_targets)
        tname = str(args.analysis_targets)
        labels = spec.labels(targets, spec.y_true, tname)
        ids = id_column(targets, args.id_col, tname)
        truth = join_targets(id_column(analysis, args.id_col, str(args.analysis)), ids, labels)
    chunks = estimate_chunks(
        reference,
        analysis,
        spec,
        chunk_size=args.chunk_size,
        metrics=metrics,
        truth=truth,
        names=(str(args.reference), str(args.analysis)),
    )
    for c in chunks:
        for w in c.estimate.warnings:
            print(f"chunk {c.index} (rows {c.start}-{c.end}): {w}", file=sys.stderr)
    if args.json:
        print_json({"chunks": [c.to_json() for c in chunks]})
    else:
        print_table(chunks, metrics)
    return 0
