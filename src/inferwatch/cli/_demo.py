"""``inferwatch demo``: the model service, a load generator and the scripted story, live."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch._exceptions import InputError

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``demo``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run the demo model service with load and a scripted story",
        description="Start an instrumented demo model service (logistic regression behind "
        "Starlette) and a load generator on loopback, and play the story normal -> latency "
        "degradation -> outage (503s) -> drift on compressed time, showing live QPS, P99 and "
        "error ratio, with the alerts, notifications and actions; the outage's P0 page and "
        "scale-out go to loopback fakes of PagerDuty and the Kubernetes API. The web dashboard (the "
        "four dimensions, alerts by tier, silences, drift, explore) is served on loopback; its URL is "
        "printed first. Exits after --duration seconds.",
    )
    p.add_argument("--duration", type=float, default=90.0, metavar="SECONDS",
                   help="real seconds to run (default: 90)")
    p.add_argument("--speed", type=float, default=None, metavar="X",
                   help="time compression (default: fit the 32-minute story into --duration)")
    p.add_argument("--port", type=int, default=0, metavar="P",
                   help="port of the demo model service (default: a free port)")
    p.add_argument("--dashboard-port", type=int, default=0, metavar="P",
                   help="port of the API and web dashboard (default: a free port; the URL is printed first)")
    p.add_argument("--rate", type=float, default=40.0, metavar="RPS",
                   help="load generator's maximum requests per second (default: 40)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: fresh entropy)")
    p.add_argument("--slo", action="store_true",
                   help="declare availability and latency SLOs for the demo service: their burn-rate "
                   "alerts replace its static error and latency rules (docs/slo.md)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    for name, value, ok in (
        ("--duration", args.duration, args.duration > 0),
        ("--speed", args.speed, args.speed is None or args.speed > 0),
        ("--rate", args.rate, args.rate > 0),
        ("--port", args.port, 0 <= args.port <= 65535),
        ("--dashboard-port", args.dashboard_port, 0 <= args.dashboard_port <= 65535),
    ):
        if not ok:
            raise InputError(f"{name}: out of range: {value}")
    from inferwatch.demo import (
        AlertView,
        DashboardPart,
        DemoOptions,
        PipelineView,
        quality_components,
        run_demo,
    )

    components, drift = quality_components(seed=args.seed)
    pipeline = PipelineView()  # started before the server part, which forwards its alerts to it
    alerts = AlertView(forward=pipeline, slos=args.slo)
    try:
        dashboard = DashboardPart(alerts, pipeline, drift.drift, port=args.dashboard_port)
    except OSError as exc:
        raise InputError(f"cannot serve the dashboard on port {args.dashboard_port}: {exc}") from exc
    components.parts += [pipeline, alerts, dashboard]
    print(f"inferwatch demo: dashboard at {dashboard.url}  (API token for silences: "
          f"{dashboard.token.reveal()})", flush=True)
    print(f"inferwatch demo: traces at {dashboard.traces_url}/api/v1/traces; which stage got slow: "
          f"inferwatch diagnose latency --service demo --url {dashboard.traces_url} --window 30s "
          "--baseline 30s", flush=True)
    try:
        run_demo(DemoOptions(duration_s=args.duration, speed=args.speed, port=args.port,
                             rate=args.rate, seed=args.seed, traces_url=dashboard.traces_url), components)
    except OSError as exc:
        raise InputError(f"cannot start the demo service on port {args.port}: {exc}") from exc
    return 0
