"""``inferwatch performance estimate``: estimated (and realized) classifier performance per chunk."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inferwatch.cli._common import print_json

__all__ = ["add_parser"]

_METRICS = "roc_auc,accuracy,f1,precision,recall"


def add_parser(sub: Any) -> None:
    """Register ``performance``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "performance",
        help="estimate a classifier's performance on unlabelled data (CBPE)",
        description="Confidence-based performance estimation: calibrate the scores on a labelled reference, "
        "then estimate ROC AUC, accuracy, precision, recall and F1 per chunk of unlabelled analysis rows, "
        "with a ±3σ sampling-error band. Assumes calibrated scores carry over (no concept drift).",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    est = verbs.add_parser("estimate", help="estimate per chunk of the analysis file")
    est.add_argument("--reference", required=True, metavar="REF", help="CSV or Parquet file with labels")
    est.add_argument(
        "--analysis", required=True, metavar="ANALYSIS", help="CSV or Parquet file without labels"
    )
    est.add_argument(
        "--y-pred-proba",
        required=True,
        metavar="COL",
        help="score column (binary, labels 0/1) or LABEL=COL,LABEL=COL,... (multiclass)",
    )
    est.add_argument("--y-pred", required=True, metavar="COL", help="predicted class column")
    est.add_argument("--y-true", required=True, metavar="COL", help="true class column (in the reference)")
    est.add_argument(
        "--chunk-size",
        type=int,
        default=5000,
        metavar="N",
        help="rows per chunk, in file order; a last partial chunk is dropped (default 5000)",
    )
    est.add_argument(
        "--metrics", default=_METRICS, metavar="LIST", help=f"comma-separated (default {_METRICS})"
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

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
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
        ids = _id(targets, args.id_col, tname)
        truth = join_targets(_id(analysis, args.id_col, str(args.analysis)), ids, labels)
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
        _table(chunks, metrics)
    return 0


def _id(table: Any, column: str, where: str) -> Any:
    from inferwatch._exceptions import InputError

    if column not in table:
        raise InputError(f"{where}: no column named {column!r} (the --id-col)")
    return table[column]


def _table(chunks: list[Any], metrics: list[str]) -> None:
    head = f"{'chunk':>5} {'rows':>13}  " + "  ".join(f"{m:>22}" for m in metrics)
    print(head)
    for c in chunks:
        cells = []
        for m in metrics:
            v, lo, hi = c.estimate.estimated[m], c.estimate.lower[m], c.estimate.upper[m]
            real = "" if c.realized is None else f" ({c.realized[m]:.3f})"
            cells.append(f"{v:.3f} [{lo:.3f},{hi:.3f}]{real}".rjust(22))
        print(f"{c.index:>5} {f'{c.start}-{c.end}':>13}  " + "  ".join(cells))
