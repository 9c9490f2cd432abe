"""Reading promtool unit-test files (cmd/promtool/unittest.go, Prometheus 2.42).

promtool's keys are checked (a typo is an error naming the key and where);
``rule_files`` and ``group_eval_order`` are read and ignored (the rules come
from the inferwatch config); a top-level ``inferwatch:`` mapping is kept,
unread, in :attr:`TestFile.extensions` for callers (e.g. silences for the
notification pipeline). ``promql_expr_test`` is not supported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from inferwatch._exceptions import InputError
from inferwatch.model import Labels, parse_duration
from inferwatch.rules._notation import expand_values, parse_series

__all__ = ["AlertTest", "ExpectedAlert", "InputSeries", "TestFile", "TestGroup", "load_test_file"]

_TOP = {"rule_files", "evaluation_interval", "group_eval_order", "tests", "inferwatch"}
_GROUP = {"interval", "input_series", "alert_rule_test", "promql_expr_test", "external_labels",
          "external_url", "name"}


@dataclass(frozen=True)
class InputSeries:
    """One input series: labels and values (``None`` = missing) at ``i * interval``."""

    labels: Labels
    values: tuple[float | None, ...]


@dataclass(frozen=True)
class ExpectedAlert:
    """An expected firing alert; ``annotations is None`` means "do not compare"."""

    labels: Mapping[str, str]
    annotations: Mapping[str, str] | None


@dataclass(frozen=True)
class AlertTest:
    """The firing alerts expected for one alertname at one time."""

    eval_time: float
    alertname: str
    expected: tuple[ExpectedAlert, ...]


@dataclass(frozen=True)
class TestGroup:
    """One entry of ``tests``."""

    name: str
    interval: float
    series: tuple[InputSeries, ...]
    alert_tests: tuple[AlertTest, ...]

    @property
    def max_eval_time(self) -> float:
        """The last time an expectation is checked."""
        return max((t.eval_time for t in self.alert_tests), default=0.0)


@dataclass(frozen=True)
class TestFile:
    """A parsed unit-test file."""

    path: str
    evaluation_interval: float
    groups: tuple[TestGroup, ...]
    extensions: Mapping[str, Any] = field(default_factory=dict)


def _duration(value: Any, where: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value == 0:
        return 0.0
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a duration such as 1m, got {value!r}")
    try:
        return 0.0 if value.strip() == "0" else parse_duration(value)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def _mapping(value: Any, where: str, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a mapping, got {type(value).__name__}")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(allowed))})")
    return value


def _str_map(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a mapping of strings")
    return {str(k): str(v) for k, v in value.items()}


def _series(raw: Any, where: str) -> InputSeries:
    d = _mapping(raw, where, {"series", "values"})
    try:
        labels = parse_series(str(d.get("series", "")))
        return InputSeries(labels, tuple(expand_values(str(d.get("values", "")))))
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def _alert_test(raw: Any, where: str) -> AlertTest:
    d = _mapping(raw, where, {"eval_time", "alertname", "exp_alerts"})
    if not d.get("alertname"):
        raise InputError(f"{where}: alertname is required")
    exp: list[ExpectedAlert] = []
    for j, a in enumerate(d.get("exp_alerts") or []):
        ea = _mapping(a, f"{where}.exp_alerts[{j}]", {"exp_labels", "exp_annotations"})
        notes = ea.get("exp_annotations")
        exp.append(ExpectedAlert(
            _str_map(ea.get("exp_labels"), f"{where}.exp_alerts[{j}].exp_labels"),
            None if notes is None else _str_map(notes, f"{where}.exp_alerts[{j}].exp_annotations"),
        ))
    at = _duration(d.get("eval_time", "0s"), f"{where}.eval_time")
    return AlertTest(at, str(d["alertname"]), tuple(exp))


def _group(raw: Any, where: str) -> TestGroup:
    d = _mapping(raw, where, _GROUP)
    if d.get("promql_expr_test"):
        raise InputError(f"{where}.promql_expr_test: not supported by inferwatch replay (alert tests only)")
    if "interval" not in d:
        raise InputError(f"{where}: interval is required (the spacing of input_series values)")
    series = tuple(_series(s, f"{where}.input_series[{i}]")
                   for i, s in enumerate(d.get("input_series") or []))
    tests = tuple(_alert_test(t, f"{where}.alert_rule_test[{i}]")
                  for i, t in enumerate(d.get("alert_rule_test") or []))
    return TestGroup(str(d.get("name", "")), _duration(d["interval"], f"{where}.interval"), series, tests)


def parse_test_file(text: str, path: str = "<test file>") -> TestFile:
    """Parse the YAML text of a unit-test file; ``InputError`` names the file and the key."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: not valid YAML: {exc}") from None
    d = _mapping(raw, path, _TOP)
    interval = _duration(d.get("evaluation_interval", "1m"), f"{path}: evaluation_interval")
    if interval <= 0:
        raise InputError(f"{path}: evaluation_interval must be positive")
    groups = tuple(_group(g, f"{path}: tests[{i}]") for i, g in enumerate(d.get("tests") or []))
    ext = d.get("inferwatch") or {}
    if not isinstance(ext, dict):
        raise InputError(f"{path}: inferwatch: expected a mapping")
    return TestFile(path, interval, groups, ext)


def load_test_file(path: str | os.PathLike[str]) -> TestFile:
    """Read and parse a unit-test file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{p}: cannot read test file: {exc.strerror}") from None
    return parse_test_file(text, str(p))
