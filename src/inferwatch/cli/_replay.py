"""``inferwatch replay [--config FILE] TESTFILE [--json]``: promtool unit tests on the native evaluator."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from inferwatch.cli._common import add_config_arg, print_json

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``replay``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "replay", help="run a promtool unit-test file through inferwatch's rules on simulated time",
        description="Read a promtool unit-test file (input_series, interval, evaluation_interval, "
        "alert_rule_test), evaluate the config's rules (the default pack without a config) on "
        "simulated time, and check the expected alerts as promtool does. rule_files is ignored. "
        "An expected alert without exp_annotations does not compare annotations. "
        "Exit 0 when every expectation holds, 1 with a diff when not.",
    )
    add_config_arg(p)
    p.add_argument("testfile", metavar="TESTFILE")
    p.add_argument("--json", action="store_true",
                   help='print {"timeline": [...], "failures": [...]} instead of a summary')
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from inferwatch.alerting import ReplayPipeline
    from inferwatch.config import load_config
    from inferwatch.rules import load_test_file, run_replay

    config = load_config(args.config)
    from inferwatch.slo import load_rule_set

    rule_set = load_rule_set(config)  # the SLOs' recordings run before the alert rules each round
    test = load_test_file(args.testfile)
    pipeline = ReplayPipeline(config.alerting, test.extensions.get("inferwatch", test.extensions))
    result = run_replay(test, rule_set.alerts, sink=pipeline, on_evaluated=pipeline.evaluated,
                        recordings=rule_set.recordings)
    result.extra.update(pipeline.extra())
    if args.json:
        print_json(result.to_json())
    else:
        for f in result.failures:
            print(f"FAILED: {f}", file=sys.stderr)
        n = sum(len(g.alert_tests) for g in test.groups)
        status = "SUCCESS" if result.ok else "FAILED"
        print(f"{args.testfile}: {status}: {n - len(result.failures)}/{n} alert tests passed, "
              f"{len(result.timeline)} state changes, {len(pipeline.notifications)} notifications, "
              f"{len(pipeline.actions)} actions")
    return 0 if result.ok else 1
