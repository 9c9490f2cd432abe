"""``inferwatch drift``: batch drift between two CSV/Parquet files (or a profile and a file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_parser"]

_BIG = 1_000_000  # values; above this a progress bar is drawn (stderr, TTY only)


def add_parser(sub: Any) -> None:
    """Register ``drift``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "drift", help="drift between a reference and a current data file",
        description="Per-feature drift of CURRENT against REFERENCE: PSI (bins at reference quantiles, "
        "with its no-drift critical value), Kolmogorov-Smirnov, Jensen-Shannon distance (natural log), "
        "Wasserstein distance, chi-square for categorical features, and a verdict "
        "(stable / warning > 0.1 / review > 0.25 / rollback > 0.5). REFERENCE may be a profile JSON "
        "from `inferwatch profile build` (then KS and Wasserstein are not available).",
    )
    p.add_argument("--reference", "-r", required=True, metavar="REF", help="CSV, Parquet or profile JSON")
    p.add_argument("--current", required=True, metavar="CUR", help="CSV or Parquet")
    p.add_argument("--bins", type=int, default=None, help="PSI bins (default: quality.bins, 10)")
    p.add_argument("--format", choices=("table", "json", "html"), default="table")
    p.add_argument("-o", "--output", metavar="FILE", help="write the report here instead of stdout")
    p.add_argument("--categorical", action="append", default=[], metavar="COL",
                   help="treat a numeric column as categorical (repeatable)")
    p.add_argument("--exclude", action="append", default=[], metavar="COL",
                   help="leave a column out, e.g. an id (repeatable)")
    p.add_argument("--statistics", default="psi,ks,js,wasserstein",
                   help="comma-separated subset of psi,ks,js,wasserstein (psi is always computed)")
    p.add_argument("--jobs", "-j", type=int, default=1, help="threads over features (default 1)")
    add_config_arg(p)
    p.set_defaults(func=_run)


def _progress(label: str) -> Any:
    def draw(done: int, total: int) -> None:
        width = 30
        filled = width * done // max(total, 1)
        end = "\n" if done >= total else ""
        print(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} features",
              end=end, file=sys.stderr, flush=True)

    return draw


def _detector(args: argparse.Namespace) -> Any:
    from inferwatch._exceptions import InputError
    from inferwatch.config import load_config
    from inferwatch.quality import STATISTICS, DriftDetector, Thresholds

    q = load_config(args.config).quality
    wanted = frozenset(s.strip() for s in args.statistics.split(",") if s.strip()) | {"psi"}
    if not wanted <= STATISTICS:
        raise InputError(f"--statistics: unknown {', '.join(sorted(wanted - STATISTICS))} "
                         f"(choose from {', '.join(sorted(STATISTICS))})")
    bins = args.bins if args.bins is not None else q.bins
    if bins < 2:
        raise InputError(f"--bins must be at least 2, got {bins}")
    return DriftDetector(bins=bins, epsilon=q.psi_epsilon, alpha=q.alpha, statistics=wanted,
                         thresholds=Thresholds(q.psi_warning, q.psi_review, q.psi_rollback))


def _checked(path: Path, table: dict[str, Any]) -> dict[str, Any]:
    """Refuse what would make the statistics meaningless; count the missing values (skipped)."""
    import numpy as np

    from inferwatch._exceptions import InputError

    rows = len(next(iter(table.values())))
    if rows < 2:
        raise InputError(f"{path}: {rows} data row{'s' if rows != 1 else ''}; drift needs at least 2")
    missing = 0
    for name, col in table.items():
        if col.dtype.kind != "f":
            continue
        inf = np.flatnonzero(np.isinf(col))
        if inf.size:
            row = int(inf[0])
            raise InputError(f"{path}: row {row + 1} (line {row + 2}), column {name!r}: "
                             f"{col[row]} is not a finite number")
        missing += int(np.isnan(col).sum())
    if missing:
        print(f"{path}: {missing} missing values (empty or NaN) skipped", file=sys.stderr)
    return table


def _run(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.quality import load_profile, read_table, render_html

    detector = _detector(args)
    ref_path, cur_path = Path(args.reference), Path(args.current)
    if ref_path.suffix.lower() == ".json":
        fitted = detector.fit(load_profile(ref_path))
    else:
        ref = _checked(ref_path, read_table(ref_path, categorical=args.categorical))
        for col in args.exclude:
            ref.pop(col, None)
        fitted = detector.fit(ref)
    cur = _checked(cur_path, read_table(cur_path, categorical=[c for c in args.categorical
                                                               if c in fitted.profile.names]))
    extra = [c for c in cur if c not in fitted.profile.names and c not in args.exclude]
    if extra:
        raise InputError(f"{cur_path}: column {', '.join(map(repr, extra))} not in the reference "
                         f"{ref_path} (leave it out with --exclude)")
    rows = len(next(iter(cur.values())))
    big = sys.stderr.isatty() and rows * len(fitted.profile.features) >= _BIG
    report = fitted.score(cur, jobs=args.jobs, progress=_progress("scoring") if big else None)
    if args.format == "json":
        text = None
        doc = report.to_json()
        doc["reference"], doc["current"] = str(ref_path), str(cur_path)
        if args.output:
            import json

            Path(args.output).write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        else:
            print_json(doc)
        return 0
    text = render_html(report, reference=str(ref_path), current=str(cur_path)) if args.format == "html" \
        else _table(report)
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _cell(v: float | None, digits: int = 4) -> str:
    return "-" if v is None else f"{v:.{digits}g}"


def _table(report: Any) -> str:
    head = ("feature", "type", "psi", "psi_crit", "ks", "ks_p", "js", "wasserstein", "verdict")
    rows = [head]
    for f in report.by_drift():
        rows.append((f.name, f.type, _cell(f.psi), _cell(f.psi_critical), _cell(f.ks),
                     _cell(f.ks_p_value, 3), _cell(f.js), _cell(f.wasserstein), f.verdict.value))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 2 or i == 8 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(r, widths, strict=True))).rstrip() for r in rows]
    summary = (f"\n{len(report.features)} features, {report.rows_reference} reference rows, "
               f"{report.rows_current} current rows: overall {report.verdict.value}\n")
    return "\n".join(lines) + "\n" + summary
