"""``inferwatch diagnose latency``: which pipeline stage got slow, from the server's stored traces."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_latency_parser"]


def add_latency_parser(plays: Any) -> None:
    """Register ``diagnose latency`` under the ``diagnose`` playbooks."""
    p: argparse.ArgumentParser = plays.add_parser(
        "latency", help="P99 latency rose: name the stage whose P99 moved, with example trace ids",
        description="Compare each stage's P99 (from the traces `inferwatch serve` received) over the "
        "recent window against the baseline window just before it; name the stage that grew most.",
    )
    p.add_argument("--service", required=True, help="service.name of the traces")
    add_config_arg(p)
    p.add_argument("--url", help="the inferwatch server (default: http://<server.listen> from the config)")
    p.add_argument("--window", default="15m", help="recent window (default 15m)")
    p.add_argument("--baseline", default="1h", help="baseline window just before it (default 1h)")
    p.add_argument("--at", type=float, default=None, metavar="UNIX_SECONDS",
                   help="end of the recent window (default: now), e.g. when the alert fired")
    p.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    p.set_defaults(func=_latency)


def _stages(url: str, service: str, start: float, end: float) -> Any:
    import httpx

    from inferwatch._exceptions import InputError

    try:
        r = httpx.get(f"{url.rstrip('/')}/api/v1/traces/stages",
                      params={"service": service, "start": start, "end": end}, timeout=30)
        r.raise_for_status()
        return r.json()["data"]
    except (httpx.HTTPError, ValueError, KeyError) as exc:
        raise InputError(f"diagnose latency: cannot read stages from {url}: {exc}") from None


def _latency(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.model import SystemClock, parse_duration
    from inferwatch.tracing import StageStats, slowed_stages

    try:
        window, baseline = parse_duration(args.window), parse_duration(args.baseline)
    except ValueError as exc:
        raise InputError(f"--window/--baseline: {exc}") from None
    now = SystemClock().now() if args.at is None else args.at
    if args.url is None:
        from inferwatch.config import load_config

        args.url = f"http://{load_config(args.config).server.listen}"

    def stats(start: float, end: float) -> dict[str, StageStats]:
        raw = _stages(args.url, args.service, start, end)
        return {k: StageStats(v["count"], v["p50_s"], v["p99_s"], tuple(v["slowest_traces"]))
                for k, v in raw.items()}

    after = stats(now - window, now)
    if not after:
        raise InputError(f"diagnose latency: no stage spans of service {args.service!r} in the last "
                         f"{args.window} at {args.url}")
    shifts = slowed_stages(stats(now - window - baseline, now - window), after)
    if args.json:
        print_json({"service": args.service, "slowed_stage": shifts[0].stage, "stages": [
            {"stage": s.stage, "p99_before_s": s.before.p99_s if s.before else None,
             "p99_after_s": s.after.p99_s, "p99_increase_s": s.p99_increase_s,
             "example_traces": list(s.after.slowest_traces)} for s in shifts]})
        return 0
    print(f"diagnose latency: service {args.service}, last {args.window} against the {args.baseline} before")
    for i, s in enumerate(shifts):
        before = f"{s.before.p99_s:.3f}s" if s.before else "none"
        head = "slowed stage: " if i == 0 else "  other stage: "
        print(f"{head}{s.stage}  p99 {before} -> {s.after.p99_s:.3f}s ({s.p99_increase_s:+.3f}s, "
              f"{s.after.count} spans)")
        if i == 0:
            print(f"  example slow traces: {' '.join(s.after.slowest_traces)}")
    return 0
