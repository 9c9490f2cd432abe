"""Verbs over data files: drift, profile, performance estimates, A/B tests, baselines."""

from inferwatch.cli._common import AddParser
from inferwatch.cli.analysis import _abtest, _baseline, _drift, _performance, _profile

__all__ = ["ANALYSIS_VERBS"]

ANALYSIS_VERBS: tuple[tuple[str, AddParser], ...] = (
    ("drift", _drift.add_parser),
    ("profile", _profile.add_parser),
    ("performance", _performance.add_parser),
    ("abtest", _abtest.add_parser),
    ("baseline", _baseline.add_parser),
)
"""These verbs and the functions adding their parsers, in ``--help``'s order."""
