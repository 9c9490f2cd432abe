"""``inferwatch profile build``: a reference profile (bins, proportions, confidence) as JSON."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``profile``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "profile", help="build a reference profile for streaming drift",
        description="Reference profiles hold per-feature bin edges (at reference quantiles) and "
        "proportions, categories, and the reference confidence distribution, so that production "
        "drift needs only counts per bin.",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = verbs.add_parser("build", help="profile a CSV or Parquet reference file")
    build.add_argument("reference", metavar="REF", help="CSV or Parquet file")
    build.add_argument("-o", "--output", required=True, metavar="FILE", help="profile JSON to write")
    build.add_argument("--bins", type=int, default=None, help="bins per numeric feature (default 10)")
    build.add_argument("--confidence", metavar="COL", help="column with the model's confidence")
    build.add_argument("--labels", metavar="COL",
                       help="column with the true class (0/1, or a class name with LABEL=COL scores): keeps "
                       "a sample of scores and labels for the performance estimator (needs --score)")
    build.add_argument("--score", metavar="COL",
                       help="column with the model's P(class 1), or LABEL=COL,LABEL=COL,... (multiclass: "
                       "each class's probability column, in the order the model gives them; with --labels)")
    build.add_argument("--categorical", action="append", default=[], metavar="COL",
                       help="treat a numeric column as categorical (repeatable)")
    build.add_argument("--exclude", action="append", default=[], metavar="COL",
                       help="leave a column out (repeatable)")
    add_config_arg(build)
    build.set_defaults(func=_build)
    show = verbs.add_parser("check", help="validate a profile file")
    show.add_argument("file", metavar="FILE")
    show.set_defaults(func=_check)


def _build(args: argparse.Namespace) -> int:
    from inferwatch.config import load_config
    from inferwatch.quality import build_profile, dump_profile, labelled_reference, read_table

    bins = args.bins if args.bins is not None else load_config(args.config).quality.bins
    table = read_table(args.reference, categorical=args.categorical)
    if bool(args.labels) != bool(args.score):
        raise InputError("--labels and --score go together (the true class and the model's P(class 1))")
    labelled = labelled_reference(table, args.score, args.labels) if args.labels else None
    scores = [c.split("=", 1)[-1] for c in (args.score or "").split(",") if c]  # COL, or LABEL=COL,...
    exclude = [*args.exclude, *scores, *([args.labels] if args.labels else [])]
    profile = replace(build_profile(table, bins=bins, confidence=args.confidence, exclude=exclude),
                      labelled=labelled)
    dump_profile(profile, args.output)
    kinds = [f.type for f in profile.features]
    print(f"{args.output}: {len(kinds)} features ({kinds.count('numeric')} numeric, "
          f"{kinds.count('categorical')} categorical), {profile.rows} rows"
          + (", confidence profiled" if profile.confidence else "")
          + (_labelled_note(profile.labelled) if profile.labelled else ""),
          file=sys.stderr)
    return 0


def _labelled_note(labelled: tuple[Any, Any]) -> str:
    scores, labels = labelled
    if scores.ndim == 1:
        return f", {scores.size} labelled scores kept"
    return f", {labels.size} labelled rows of {scores.shape[1]} class probabilities kept"


def _check(args: argparse.Namespace) -> int:
    from inferwatch.quality import load_profile

    profile = load_profile(args.file)
    print(f"{args.file}: ok ({len(profile.features)} features, {profile.rows} rows)")
    return 0
