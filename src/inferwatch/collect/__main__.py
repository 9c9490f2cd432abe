"""``python -m inferwatch.collect``: the exporter's own process, started by ``inferwatch exporter``.

The command line checks the configuration, then ``execv``s this with the values it read
(:func:`~inferwatch.collect._exporter.replace_process`): the running exporter imports the
collectors and its small HTTP server only, not pydantic, prometheus-client or the CLI.
"""

from __future__ import annotations

import signal
import sys

from inferwatch.model import STOP_SIGNALS, StopRequest


def main(argv: list[str]) -> int:
    """Parse the flags ``replace_process`` writes; serve until SIGTERM or SIGINT."""
    stop = StopRequest().install()  # first; a stop sent during execv is pending and lands here
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    import argparse
    import logging

    from inferwatch._exceptions import InputError
    from inferwatch.collect._exporter import run_exporter

    ap = argparse.ArgumentParser(prog="inferwatch exporter")
    ap.add_argument("--interval", type=float, required=True)
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pid", type=int, default=None)
    ap.add_argument("--no-gpu", dest="gpu", action="store_false")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return run_exporter(interval=args.interval, pid=args.pid, gpu=args.gpu, host=args.host,
                            port=args.port, stop=stop)
    except InputError as exc:
        print(f"inferwatch exporter: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
