"""``inferwatch edge``: the edge agent, and ``edge simulate`` (what the deadband would save)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``edge`` and ``edge simulate``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "edge", help="the edge agent: collect, deadband, durable spool, upload",
        description="Run the edge agent of a device: read its sources (host, GPU, local /metrics "
        "scrapes, a loopback push endpoint), send a sample only when it moved more than the "
        "deadband (or a heartbeat is due), keep everything in a durable SQLite spool (24 h by "
        "default) and upload in order to the inferwatch server's ingest endpoint or to a "
        "Prometheus remote-write receiver. The token comes from $INFERWATCH_EDGE_TOKEN or "
        "upload.token_file. 'inferwatch edge simulate --help' shows what a deadband would save.",
    )
    p.add_argument("--config", "-c", metavar="FILE", help="the agent's YAML config (required to run)")
    p.add_argument("--events", action="store_true",
                   help="print one line per upload (ok/retry/reject, batch id, samples) to stderr")
    p.set_defaults(func=_run, until_stopped=True)
    verbs = p.add_subparsers(dest="edge_verb", metavar="{simulate}")
    s: argparse.ArgumentParser = verbs.add_parser(
        "simulate", help="replay a recorded series or device through the deadband and the encoder",
        description="Replay a CSV series, or a whole device recorded as OpenMetrics text with "
        "timestamps (counters as counters, histograms and summaries as units, all series batched "
        "together), through the real deadband and the real encoder (format 3, gzip'ed batches, "
        "one per --batch-interval of sample time) and print the points, the samples sent, bytes "
        "of the naive upload (every point, same batching, encoder and compression), bytes sent, "
        "the reduction 1 - sent/naive, the same against every point as Prometheus remote-write "
        "(snappy protobuf, the same batches), and the largest reconstruction errors (gauges relative: "
        "|true - reconstructed| / max(|reconstructed|, floor), at most the deadband; counters: "
        "the increase over every 5-minute window), in total and per type.",
    )
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--csv", metavar="FILE", help="one recorded series (CSV with a header)")
    src.add_argument("--openmetrics", metavar="FILE",
                     help="a recorded device: OpenMetrics text with timestamps in seconds (# TYPE "
                     "lines, # EOF; .gz read through gzip), as promtool tsdb create-blocks-from reads")
    s.add_argument("--timestamp-col", default="timestamp", help="time column: Unix seconds or ISO 8601")
    s.add_argument("--value-col", default="value", help="value column (default value)")
    s.add_argument("--deadband", type=float, default=0.1, help="relative band (default 0.1 = 10 %%)")
    s.add_argument("--floor", type=float, default=0.01,
                   help="absolute floor: near zero the band is deadband x floor (default 0.01)")
    s.add_argument("--heartbeat", default="5m", help="send a quiet series this often (default 5m)")
    s.add_argument("--heartbeat-max", default="30m",
                   help="back a series that never moves off up to this heartbeat (default 30m, the "
                   "agent's for format-3 uploads; = --heartbeat: no back-off)")
    s.add_argument("--interval", default=None,
                   help="replay the points at this step (e.g. 15s, a device's collection interval) "
                   "instead of the file's timestamps")
    s.add_argument("--batch-interval", default="1m", help="one upload batch per this much time (default 1m)")
    s.add_argument("--json", action="store_true", help="print JSON (default: a short table)")
    s.set_defaults(func=_simulate, until_stopped=False)


def _duration(flag: str, text: str) -> float:
    from inferwatch._exceptions import InputError
    from inferwatch.model import parse_duration

    try:
        secs = parse_duration(text)
    except ValueError:
        raise InputError(f"{flag} {text!r}: not a duration (expected e.g. 15s, 5m)") from None
    if secs <= 0:
        raise InputError(f"{flag} {text!r}: must be positive")
    return secs


def _simulate(args: argparse.Namespace) -> int:
    import json

    from inferwatch._exceptions import InputError
    from inferwatch.edge import DeadbandSettings

    heartbeat = _duration("--heartbeat", args.heartbeat)
    top = max(_duration("--heartbeat-max", args.heartbeat_max), heartbeat)
    try:
        settings = DeadbandSettings(args.deadband, args.floor, heartbeat, top)
    except ValueError as exc:
        raise InputError(f"--deadband/--floor/--heartbeat-max: {exc}") from None
    batch = _duration("--batch-interval", args.batch_interval)
    if args.openmetrics:
        from inferwatch.edge import read_openmetrics, replay

        if args.interval is not None:
            raise InputError("--interval: only with --csv (an OpenMetrics file has its own timestamps)")
        samples, kinds = read_openmetrics(Path(args.openmetrics))
        result = replay(samples, kinds, settings, batch_interval=batch)
        name = args.openmetrics
    else:
        from inferwatch.edge import read_series_csv, simulate

        points = read_series_csv(Path(args.csv), timestamp_col=args.timestamp_col, value_col=args.value_col)
        if args.interval is not None:
            step = _duration("--interval", args.interval)
            points = [(points[0][0] + i * step, v) for i, (_, v) in enumerate(points)]
        result = simulate(points, settings, batch_interval=batch)
        name = args.csv
    if args.json:
        print(json.dumps(result.to_json()))
        return 0
    r = result
    print(f"{name}: {r.points} points, {r.sent} sent ({r.sent / r.points:.1%}); "
          f"{r.bytes_naive} -> {r.bytes_sent} bytes ({r.reduction:.1%} fewer; every point as Prometheus "
          f"remote-write {r.bytes_remote_write}: {r.reduction_vs_remote_write:.1%} fewer); "
          f"max error {r.max_rel_error:.4f} relative, {r.max_abs_error:.6g} absolute"
          + (f", counters' 5-minute rate {r.max_rate_rel_error:.4f}" if "counter" in r.by_type else "")
          + (f", histograms' quantiles {r.max_quantile_rel_error:.4f} (rank {r.max_quantile_rank_error:.4f})"
             if "histogram" in r.by_type else ""))
    if len(r.by_type) > 1:
        print(f"  {'type':<10} {'series':>6} {'points':>7} {'sent':>6} {'naive B':>8} {'sent B':>7} "
              f"{'fewer':>6} {'max rel':>7} {'max 5m rate':>11} {'max 5m q':>8} {'q rank':>6}")
        for kind, f in r.by_type.items():
            print(f"  {kind:<10} {f['series']:>6} {f['points']:>7} {f['sent']:>6} {f['bytes_naive']:>8} "
                  f"{f['bytes_sent']:>7} {f['reduction']:>6.1%} {f['max_rel_error']:>7.4f} "
                  f"{f['max_rate_rel_error']:>11.4f} {f.get('max_quantile_rel_error', 0.0):>8.4f} "
                  f"{f.get('max_quantile_rank_error', 0.0):>6.4f}")
    for kind, f in r.by_type.items():
        w = f.get("worst_rate")
        if w:
            print(f"  worst 5m rate of a {kind}: {w['series']} over the 5 minutes to "
                  f"{w['window_end']:.3f}: {w['rate']:.6g}/s against {w['raw_rate']:.6g}/s raw")
    return 0


def _without_tls_unless_needed(config: str | None) -> None:
    """Import ``http.client`` without ``ssl`` when the config names no ``https:`` URL.

    ``http.client`` imports ``ssl`` (OpenSSL: ~5 MiB resident) at load; an agent that
    scrapes and uploads over plain HTTP on its network never uses it. Done here, in the
    agent's own process only: a library user of :mod:`inferwatch.edge` keeps HTTPS.
    """
    if not config or "http.client" in sys.modules or "ssl" in sys.modules:
        return
    try:
        if "https:" in Path(config).read_text(errors="replace"):
            return
    except OSError:
        return  # the config loader names the problem
    sys.modules["ssl"] = None  # type: ignore[assignment]  # http.client: "no ssl", so no HTTPSConnection
    try:
        import http.client  # noqa: F401
    finally:
        del sys.modules["ssl"]


def _reload_token_on_sighup(agent: Any, config: Path) -> None:
    """SIGHUP: read the token again (``$INFERWATCH_EDGE_TOKEN``, ``upload.token`` or ``token_file``).

    A rotated token then takes effect at the next upload, without a restart (what is
    spooled stays spooled). A config that no longer loads keeps the old token and says why
    on stderr; the token itself is never printed.
    """
    import signal

    from inferwatch._exceptions import InferwatchError
    from inferwatch.edge import load_agent_config

    def reload(signum: int, frame: Any) -> None:
        try:
            token = load_agent_config(config).upload.token
        except InferwatchError as exc:
            print(f"inferwatch edge: SIGHUP: token not reloaded: {exc}", file=sys.stderr, flush=True)
            return
        agent.uploader.target.token = token or ""
        print("inferwatch edge: SIGHUP: token reloaded", file=sys.stderr, flush=True)

    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, reload)


def _run(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.model import wait_for_stop

    _without_tls_unless_needed(args.config)
    from inferwatch.edge import Agent, load_agent_config

    if args.edge_verb is None and not args.config:
        raise InputError("--config FILE is required to run the agent (or: inferwatch edge simulate ...)")
    cfg = load_agent_config(Path(args.config))

    def event(line: str) -> None:
        if args.events:
            print(f"inferwatch edge: {line}", file=sys.stderr, flush=True)

    agent = Agent(cfg, on_event=event)
    _reload_token_on_sighup(agent, Path(args.config))
    print(f"inferwatch edge: device {cfg.device} -> {cfg.upload.type} {cfg.upload.url} "
          f"({len(agent.sources)} sources, deadband {cfg.deadband.band:g}, heartbeat "
          f"{cfg.deadband.heartbeat:g}s, spool {cfg.spool.path} with {agent.spool.backlog()} waiting)",
          file=sys.stderr, flush=True)
    stop = getattr(args, "stop", None)
    if stop is None or stop.requested is None:  # stopped while starting: nothing to start
        agent.start()
    try:
        why = wait_for_stop(stop)  # SIGTERM (systemd, Docker, Kubernetes) or SIGINT: the same stop
        print(f"inferwatch edge: {why}: stopping (an upload in flight finishes, the rest stays spooled)",
              file=sys.stderr, flush=True)
    finally:
        unsent = agent.close()
    print(f"inferwatch edge: stopped ({unsent})", file=sys.stderr, flush=True)
    return 0
