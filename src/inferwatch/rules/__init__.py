"""Rule model, signals (native evaluation and PromQL form), evaluator, alert state."""

from inferwatch.rules._alert import Alert, AlertSink, AlertState
from inferwatch.rules._engine import EvalError, QueryEngine
from inferwatch.rules._engine_packs import ENGINE_PACKS, engine_rule_specs
from inferwatch.rules._evaluator import ActiveAlert, BandProvider, BandProviderFactory, Evaluator
from inferwatch.rules._export import to_prometheus_rule_groups, to_prometheus_rule_yaml
from inferwatch.rules._functions import bucket_quantile, extrapolated_rate
from inferwatch.rules._humanize import humanize, humanize_duration
from inferwatch.rules._lifecycle import AlertInstance
from inferwatch.rules._outlier import PeerGroup, PeerMember
from inferwatch.rules._pack import default_rule_specs, edge_rule_specs
from inferwatch.rules._promql import PromQLError, parse_promql
from inferwatch.rules._recording import Recorder, RecordingRule
from inferwatch.rules._replay import ReplayResult, run_replay
from inferwatch.rules._rule import Rule, apply_overrides, default_rule_pack, load_rules
from inferwatch.rules._rule_files import read_rule_files, rule_file_notes
from inferwatch.rules._signals import signal_promql
from inferwatch.rules._state import AlertStateStore
from inferwatch.rules._template import expand_template, format_go_float
from inferwatch.rules._testfile import TestFile, load_test_file, parse_test_file
from inferwatch.rules._units import VALUE_UNITS, value_unit
from inferwatch.rules._version_change import VERSION_LABELS, VersionChange, version_change

__all__ = [
    "ENGINE_PACKS",
    "VALUE_UNITS",
    "VERSION_LABELS",
    "ActiveAlert",
    "Alert",
    "AlertInstance",
    "AlertSink",
    "AlertState",
    "AlertStateStore",
    "BandProvider",
    "BandProviderFactory",
    "EvalError",
    "Evaluator",
    "PeerGroup",
    "PeerMember",
    "PromQLError",
    "QueryEngine",
    "Recorder",
    "RecordingRule",
    "ReplayResult",
    "Rule",
    "TestFile",
    "VersionChange",
    "apply_overrides",
    "bucket_quantile",
    "default_rule_pack",
    "default_rule_specs",
    "edge_rule_specs",
    "engine_rule_specs",
    "expand_template",
    "extrapolated_rate",
    "format_go_float",
    "humanize",
    "humanize_duration",
    "load_rules",
    "load_test_file",
    "parse_promql",
    "parse_test_file",
    "read_rule_files",
    "rule_file_notes",
    "run_replay",
    "signal_promql",
    "to_prometheus_rule_groups",
    "to_prometheus_rule_yaml",
    "value_unit",
    "version_change",
]
