"""``inferwatch performance estimate`` for a regressor: direct loss estimation per chunk."""

from __future__ import annotations

import argparse
import sys

from inferwatch.cli._common import print_json
from inferwatch.cli.analysis._performance_common import id_column, print_table

__all__ = ["estimate_regression"]

_METRICS = "mae,rmse"


def estimate_regression(args: argparse.Namespace) -> int:
    """Fit DLE on the reference, estimate (and with targets, realize) each analysis chunk."""
    from inferwatch._exceptions import InputError
    from inferwatch.quality import (
        DLE,
        default_features,
        estimate_regression_chunks,
        join_targets,
        numeric_column,
        read_table,
    )

    metrics = tuple(m.strip() for m in (args.metrics or _METRICS).split(",") if m.strip())
    settings = DLE(metrics=metrics, tune=args.tune)
    if args.analysis_targets and not args.id_col:
        raise InputError(
            "--analysis-targets needs --id-col COL, the column that joins targets to analysis rows"
        )
    names = (str(args.reference), str(args.analysis))
    reference, analysis = read_table(args.reference), read_table(args.analysis)
    exclude = [args.y_true, args.y_pred, *([args.id_col] if args.id_col else [])]
    if args.features:
        features = tuple(c.strip() for c in args.features.split(",") if c.strip())
        clash = [c for c in features if c in exclude]
        if clash:
            raise InputError(f"--features {clash[0]!r} is the truth, the prediction or the id column")
    else:
        features = default_features(reference, analysis, exclude)
    truth = None
    if args.analysis_targets:
        targets = read_table(args.analysis_targets)
        tname = str(args.analysis_targets)
        values = numeric_column(targets, args.y_true, tname)
        ids = id_column(targets, args.id_col, tname)
        truth = join_targets(id_column(analysis, args.id_col, names[1]), ids, values)
    chunks, fitted = estimate_regression_chunks(
        reference, analysis, features=features, y_pred=args.y_pred, y_true=args.y_true,
        chunk_size=args.chunk_size, settings=settings, truth=truth, names=names,
    )
    if fitted.cv is not None:
        print("\n".join(fitted.cv.lines()), file=sys.stderr)
    for c in chunks:
        for w in c.estimate.warnings:
            print(f"chunk {c.index} (rows {c.start}-{c.end}): {w}", file=sys.stderr)
    if args.json:
        print_json({"chunks": [c.to_json() for c in chunks]})
    else:
        print(f"features: {', '.join(features) or '(none: the prediction only)'}")
        print_table(chunks, list(metrics), digits=1)
    return 0
