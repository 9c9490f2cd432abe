"""``inferwatch abtest``: an A/B test on conversion counts (z-test, chi-square, CI, mSPRT)."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import print_json

__all__ = ["add_parser"]


def add_parser(sub: Any) -> None:
    """Register ``abtest``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "abtest", help="A/B test on conversion counts",
        description="Compares variant B with A: pooled two-proportion z-test, chi-square on the 2x2 "
        "table WITHOUT Yates' correction unless --yates (so chi2 = z^2), the Wald confidence interval "
        "of the difference B - A, and the mSPRT (Johari et al., normal mixture with sd --tau) "
        "likelihood ratio and always-valid p-value for this look.",
    )
    p.add_argument("--a", required=True, metavar="CONV/TOTAL", help="variant A, e.g. 120/1000")
    p.add_argument("--b", required=True, metavar="CONV/TOTAL", help="variant B, e.g. 150/1000")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--tau", type=float, default=0.05, help="mSPRT mixture sd of the effect (default 0.05)")
    p.add_argument("--yates", action="store_true", help="apply Yates' continuity correction to chi2")
    p.add_argument("--sequential", action="store_true", help="print the sequential (mSPRT) result")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from inferwatch.business import abtest, parse_arm

    a, b = parse_arm(args.a, what="--a"), parse_arm(args.b, what="--b")
    r = abtest(a, b, alpha=args.alpha, tau=args.tau, yates=args.yates)
    if args.json:
        print_json(r.to_json())
        return 0
    level = round(100 * (1 - args.alpha), 2)
    print(f"A: {a.conversions}/{a.total} = {a.rate:.4%}   B: {b.conversions}/{b.total} = {b.rate:.4%}")
    print(f"difference B - A: {r.difference:+.4%}  ({level:g}% CI {r.ci[0]:+.4%} .. {r.ci[1]:+.4%})")
    print(f"z = {r.z:.4f}, p = {r.p_value:.4g}; chi2 = {r.chi2:.4f}"
          f"{' (Yates)' if args.yates else ' (no Yates correction)'}, p = {r.chi2_p_value:.4g}")
    if args.sequential:
        s = r.sequential
        print(f"mSPRT (tau {args.tau}): likelihood ratio {s.likelihood_ratio:.4g}, "
              f"always-valid p = {s.p_value:.4g}")
    verdict = "significant" if r.p_value < args.alpha else "not significant"
    print(f"{verdict} at alpha {args.alpha}")
    return 0
