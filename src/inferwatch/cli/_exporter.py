"""``inferwatch exporter``: host, process and GPU metrics on /metrics."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``exporter``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "exporter", help="serve host and GPU metrics (node_exporter / DCGM names) on /metrics",
        description="Collect host CPU, memory and load (node_exporter names), the model-server "
        "process (RSS, CPU, Python GC) and every GPU through NVML (DCGM exporter names) every "
        "collect.interval, and serve the latest collection on http://HOST:PORT/metrics.",
    )
    p.add_argument("--port", type=int, default=9400, help="TCP port (default 9400, DCGM exporter's)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--pid", type=int, default=None,
                   help="model-server process to watch (default: the exporter itself, with GC stats)")
    add_config_arg(p)
    p.set_defaults(func=_run, until_stopped=True)


def _run(args: argparse.Namespace) -> int:
    import signal

    from inferwatch._exceptions import InputError
    from inferwatch.collect import replace_process, run_exporter
    from inferwatch.config import load_config
    from inferwatch.model import STOP_SIGNALS

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port}: not a TCP port (0-65535)")
    stop = getattr(args, "stop", None)
    cfg = load_config(args.config)
    values = {"interval": cfg.collect.interval, "pid": args.pid, "gpu": cfg.collect.gpu,
              "host": args.host, "port": args.port}
    if getattr(args, "own_process", False) and stop is not None:
        # the configuration is checked: run on in a fresh image without the CLI's imports (RSS)
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # a stop now waits for the new image
        if stop.requested is None:
            replace_process(**values, verbose=bool(getattr(args, "verbose", False)))
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    return run_exporter(**values, stop=stop)
