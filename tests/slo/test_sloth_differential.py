"""inferwatch renders Sloth's documented examples as Sloth does: recording and alert rules, rule by rule.

Sloth's committed outputs (``tests/slo/sloth_examples``) are the oracle. Each spec is read as a
``slo_files`` entry with Sloth's generation options (the extra label ``cmd=examplesgen.sh``,
version ``dev``) and no traffic guard (``min_events: 0``, which Sloth does not have). Recording
rules must match by name and labels, expression text included. Alert rules match by name and
``sloth_severity``: Sloth's labels and annotations exactly; inferwatch adds only its own
routing labels (``tier``, ``dimension``, ``service``, ``slo_alert``); Sloth's page alert is
inferwatch's two page rules of the same name (one per window pair, for P0 and P1), whose
expressions joined by ``or`` are Sloth's, character for character.
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferwatch.config import SloFileRef
from inferwatch.export._files import dump_yaml
from inferwatch.slo import parse_sloth_spec, slo_rules

EXAMPLES = Path(__file__).parent / "sloth_examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yml"))
OWN_LABELS = {"tier", "dimension", "service", "slo_alert"}


def _sloth(name: str) -> list[dict[str, Any]]:
    docs = yaml.safe_load_all((EXAMPLES / "_gen" / f"{name}.yml").read_text())
    return [g for d in docs if d for g in d["groups"]]


def _ours(name: str, min_events: int = 0) -> list[dict[str, Any]]:
    text = (EXAMPLES / f"{name}.yml").read_text()
    slos = parse_sloth_spec(text, SloFileRef(path=name, min_events=min_events), source=name)
    slos = [dataclasses.replace(s, labels={**s.labels, "cmd": "examplesgen.sh"}) for s in slos]
    return slo_rules(slos, version="dev").prometheus_groups()


def _rules(groups: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    return {g["name"]: g["rules"] for g in groups}


def _key(rule: dict[str, Any]) -> tuple[str, ...]:
    if "record" in rule:
        return ("record", rule["record"], *sorted(f"{k}={v}" for k, v in rule["labels"].items()))
    return ("alert", rule["alert"], rule["labels"]["sloth_severity"])


def test_the_examples_are_there() -> None:
    assert set(NAMES) >= {"getting-started", "home-wifi", "multifile", "no-alerts", "raw-home-wifi",
                          "kubernetes-apiserver"}


@pytest.mark.parametrize("name", NAMES)
def test_rules_match_sloths_rule_by_rule(name: str) -> None:
    theirs, ours = _rules(_sloth(name)), _rules(_ours(name))
    assert sorted(theirs) == sorted(ours)  # the same groups
    for group, rules in theirs.items():
        mine: dict[tuple[str, ...], list[dict[str, Any]]] = {}
        for r in ours[group]:
            mine.setdefault(_key(r), []).append(r)
        assert sorted(mine) == sorted(_key(r) for r in rules), group  # the same rules, in any order
        for r in rules:
            got = mine[_key(r)]
            expr = "\nor\n".join(g["expr"].strip() for g in got)
            assert expr == r["expr"].strip(), f"{group}: {_key(r)}"
            if "alert" in r:
                for g in got:  # Sloth's labels and annotations exactly; only inferwatch's own beside them
                    assert {k: g["labels"][k] for k in r["labels"]} == r["labels"]
                    assert set(g["labels"]) - set(r["labels"]) <= OWN_LABELS
                    assert g["annotations"] == r["annotations"]


@pytest.mark.parametrize("name", ["getting-started", "raw-home-wifi"])
def test_the_traffic_guard_changes_only_event_alerts_expressions(name: str) -> None:
    # the default min_events guard adds "and on () (total events >= 100)" to an events SLI's alerts
    plain = {tuple(_key(r)): r for g in _ours(name) for r in g["rules"] if "alert" in r}
    guarded = {tuple(_key(r)): r for g in _ours(name, 100) for r in g["rules"] if "alert" in r}
    assert plain.keys() == guarded.keys()
    for k, r in plain.items():
        assert {**r, "expr": ""} == {**guarded[k], "expr": ""}
        assert (">= 100" in guarded[k]["expr"]) == (name == "getting-started")


@pytest.mark.tools
@pytest.mark.parametrize("name", NAMES)
def test_promtool_checks_both(name: str, tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    (tmp_path / "ours.yml").write_text(dump_yaml({"groups": _ours(name)}))
    (tmp_path / "theirs.yml").write_text(dump_yaml({"groups": _sloth(name)}))
    for f in ("ours.yml", "theirs.yml"):
        proc = subprocess.run([promtool, "check", "rules", f], cwd=tmp_path, capture_output=True, text=True,
                              timeout=60, check=False)
        assert proc.returncode == 0, f + proc.stdout + proc.stderr
