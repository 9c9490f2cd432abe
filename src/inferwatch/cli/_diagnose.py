"""``inferwatch diagnose gpu``: the GPU-utilisation-drop playbook."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``diagnose``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "diagnose", help="troubleshooting playbooks (gpu: utilisation fell while QPS is unchanged; "
        "latency: which pipeline stage got slow, from traces)",
        description="Run a troubleshooting playbook on the stored series.",
    )
    plays = p.add_subparsers(dest="playbook", metavar="PLAYBOOK", required=True)
    gpu = plays.add_parser(
        "gpu", help="GPU utilisation fell while QPS is unchanged: gather evidence, rank causes",
        description="Compare the first and last third of the window: GPU utilisation against QPS, "
        "server CPU, PCIe throughput and link, GPU memory and GC, throttle reasons; run "
        "`nvidia-smi topo -m` and `nvidia-smi -q` when present; rank the causes.",
    )
    gpu.add_argument("--service", help="service label of inferwatch_requests_total (default: all)")
    gpu.add_argument("--gpu", help="GPU index or UUID (default: the one whose utilisation fell most)")
    gpu.add_argument("--since", default="30m", help="window to look back over (default 30m)")
    gpu.add_argument("--url", help="a running inferwatch server or Prometheus (its /api/v1/query_range)")
    gpu.add_argument("--data-dir", help="read the server's SQLite store here (default: server.data_dir)")
    gpu.add_argument("--no-live", action="store_true", help="do not read NVML or run nvidia-smi here")
    gpu.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    add_config_arg(gpu)
    gpu.set_defaults(func=_gpu)
    from inferwatch.cli._latency import add_latency_parser

    add_latency_parser(plays)


def _open_source(args: argparse.Namespace, cfg: Any, since: float) -> Any:
    from pathlib import Path

    from inferwatch._exceptions import InputError
    from inferwatch.diagnose import QueryRangeSource
    from inferwatch.store import TSDB_FILE, SQLiteStore

    if args.url:
        return QueryRangeSource(args.url, step=max(15.0, since / 600))
    path = Path(args.data_dir or cfg.server.data_dir) / TSDB_FILE
    if not path.is_file():
        raise InputError(f"no store at {path}: pass --data-dir DIR or --url http://HOST:PORT")
    return SQLiteStore(path)


def _gpu(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.config import load_config
    from inferwatch.diagnose import SubprocessRunner, diagnose_gpu, render_text
    from inferwatch.model import SystemClock, parse_duration

    cfg = load_config(args.config)
    try:
        since = parse_duration(args.since)
    except ValueError as exc:
        raise InputError(f"--since {args.since!r}: {exc}") from None
    if since <= 0:
        raise InputError(f"--since {args.since!r}: must be positive")
    source = _open_source(args, cfg, since)
    nvml = None
    if not args.no_live:
        from inferwatch.collect import load_nvml

        nvml = load_nvml().api
    try:
        d = diagnose_gpu(
            source, now=SystemClock().now(), since=since, service=args.service, gpu=args.gpu,
            nvml=nvml, runner=None if args.no_live else SubprocessRunner(),
        )
    finally:
        source.close()
    if args.json:
        print_json(d.to_json())
    else:
        print(render_text(d), end="")
    return 0
