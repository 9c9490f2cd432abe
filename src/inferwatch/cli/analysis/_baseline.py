"""``inferwatch baseline score|promql``: score a CSV series, print the baseline as PromQL rules."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``baseline``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "baseline", help="dynamic baselines: score a CSV series, export PromQL rules",
        description="Seasonal forecast bands (the thresholds of rules with `threshold: dynamic`).",
    )
    verbs = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    score = verbs.add_parser(
        "score", help="score a CSV series and print its alert windows",
        description="Score each point against the history before it (streaming, as the server "
        "does) and print the alert windows: runs of anomalous points lasting at least the "
        "debounce, bridging up to merge_gap normal points; a run that only repeats the "
        "series' earlier excursions is held (baseline.recurrence).",
    )
    score.add_argument("--csv", required=True, metavar="FILE", help="CSV with a header row")
    score.add_argument("--timestamp-col", default="timestamp", metavar="NAME",
                       help="timestamp column: ISO 8601 or epoch seconds (default: timestamp)")
    score.add_argument("--value-col", default="value", metavar="NAME",
                       help="value column (default: value)")
    score.add_argument("--method", choices=("seasonal", "prophet"),
                       help="override baseline.method from the config")
    score.add_argument("--windows", type=_windows, metavar="N[,N...]",
                       help="also flag sustained shifts: window means of the last N samples "
                       "(overrides baseline.seasonal.windows, default 6,24; '' turns them off)")
    score.add_argument("--level-points", type=int, metavar="N",
                       help="samples in the median level (overrides baseline.seasonal.level_points)")
    score.add_argument("--recurrence", type=_count, metavar="N",
                       help="hold alerts within the N-th most extreme of the earlier excursions "
                       "(overrides baseline.recurrence; 0 turns the hold off)")
    score.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_config_arg(score)
    score.set_defaults(func=_score)
    promql = verbs.add_parser(
        "promql", help="print the baseline of a signal as Prometheus rules (YAML)",
        description="Recording rules for the expected value and band of EXPR, and an alert "
        "when EXPR leaves the band; check them with `promtool check rules`.",
    )
    promql.add_argument("name", help="name of the baseline (a metric name without colons)")
    promql.add_argument("expr", help="PromQL expression of the signal")
    promql.add_argument("--interval", default="1m", help="rule group evaluation interval")
    promql.add_argument("--fallback", type=float, help="static threshold while no band exists")
    add_config_arg(promql)
    promql.set_defaults(func=_promql)


def _windows(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected sample counts such as 6,24, got {text!r}") from None


def _count(text: str) -> int:
    if not text.isdigit() or int(text) > 16:
        raise argparse.ArgumentTypeError(f"expected a count 0..16, got {text!r}")
    return int(text)


def _score(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from inferwatch import ConfigError
    from inferwatch.baseline import (
        NoveltyScorer,
        ProphetBaseline,
        SeasonalBaseline,
        alert_windows,
        read_csv_series,
        recurrence_gate,
        score_series,
    )
    from inferwatch.config import load_config
    from inferwatch.server import baseline_settings

    config = load_config(args.config).baseline
    overrides = {k: v for k, v in (("windows", args.windows), ("level_points", args.level_points))
                 if v is not None}
    if overrides:
        try:
            config = config.model_copy(update={"seasonal": type(config.seasonal).model_validate(
                {**config.seasonal.model_dump(), **overrides})})
        except ValidationError as exc:
            raise ConfigError("; ".join(
                f"--{'-'.join(str(x) for x in e['loc']).replace('_', '-') or 'windows'}: {e['msg']}"
                for e in exc.errors())) from None
    cfg = baseline_settings(config)
    series = read_csv_series(args.csv, args.timestamp_col, args.value_col)
    if series.unordered:
        print(f"{args.csv}: {series.unordered} rows not after an earlier row's timestamp (repeated or "
              "out of order): kept in the output, skipped by the baseline", file=sys.stderr)
    method = args.method or cfg.method
    baseline = ProphetBaseline(cfg.prophet) if method == "prophet" else SeasonalBaseline(cfg.seasonal)
    gate = recurrence_gate(cfg, args.recurrence)
    novelty = NoveltyScorer(cfg.novelty) if cfg.novelty.enabled else None
    scored = score_series(series.times, series.values, baseline, cfg.direction, gate, novelty)
    windows = alert_windows(scored.anomalous, series.values, scored.expected,
                            debounce=cfg.debounce, merge_gap=cfg.merge_gap, released=scored.released)
    rows = [(series.stamps[w.start], series.stamps[w.end], w.peak) for w in windows]
    if args.json:
        print_json({"points": len(series.stamps),
                    "alerts": [{"start": s, "end": e, "peak": p} for s, e, p in rows]})
        return 0
    print(f"{args.csv}: {len(series.stamps)} points, {len(rows)} alerts ({method} baseline)")
    if rows:
        width = max(len(s) for s, _, _ in rows)
        print(f"{'start':<{width}}  {'end':<{width}}  peak")
        for s, e, p in rows:
            print(f"{s:<{width}}  {e:<{width}}  {p:g}")
    return 0


def _promql(args: argparse.Namespace) -> int:
    import yaml

    from inferwatch._exceptions import InputError
    from inferwatch.baseline import promql_rules
    from inferwatch.config import load_config
    from inferwatch.model import parse_duration
    from inferwatch.server import baseline_settings

    cfg = baseline_settings(load_config(args.config).baseline)
    try:
        interval = parse_duration(args.interval)
        rules = promql_rules(args.name, args.expr, config=cfg, interval=interval,
                             fallback=args.fallback)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    print(yaml.safe_dump(rules, sort_keys=False, width=100), end="")
    return 0
