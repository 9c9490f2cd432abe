"""Issue 38: every YAML block in the docs loads with the loader it is written for.

A user copies these blocks; a field name that the models do not know (the issue's
``base_url`` for WeCom's ``url``) must fail here, not in the user's ``config check``.
Config blocks (whole or a fragment under a known list) go through ``parse_config``; the
edge agent's file, Sloth specs and replay test files through their own loaders; blocks in
other tools' formats (Alertmanager, amtool, Prometheus rules) are named as such.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from inferwatch.config import Config, parse_config

ROOT = Path(__file__).parent.parent
DOCS = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
CONFIG_KEYS = {f.alias or name for name, f in Config.model_fields.items()}
EDGE_KEYS = {"device", "spool", "deadband", "upload", "sources", "labels"}


def _blocks() -> Iterator[tuple[str, str]]:
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"```ya?ml\n(.*?)```", text, re.S):
            line = text[:m.start()].count("\n") + 1
            yield f"{doc.relative_to(ROOT)}:{line}", textwrap.dedent(m.group(1))


BLOCKS = list(_blocks())


def _kind(data: Any) -> str:
    """Which loader a block is written for (or which other tool's format it is)."""
    if isinstance(data, dict):
        keys = set(data)
        if data.get("version") == "prometheus/v1":
            return "sloth"
        if keys <= CONFIG_KEYS:
            return "config"
        if keys <= EDGE_KEYS:
            return "edge"
        if keys == {"inferwatch"}:
            return "replay"
        if keys == {"match", "config"}:
            return "edge agent config (edge.agent_configs)"
        if keys <= {"tls_server_config", "http_server_config", "basic_auth_users"}:
            return "web"
        if "scrape_configs" in keys:
            return "prometheus.yml"
        if keys == {"groups"}:
            return "prometheus rule file"
        if keys == {"authorization"}:
            return "other: amtool's http_config"
        if keys == {"modules"}:
            return "other: blackbox_exporter's config (inferwatch's output)"
        if "receivers" in keys and all("webhook_configs" in r for r in data["receivers"]):
            return "other: Alertmanager's config"
        if {"route", "receivers"} <= keys:
            return "alertmanager.yml"
    if isinstance(data, list) and data and all(isinstance(item, dict) for item in data):
        if all("type" in item for item in data):
            return "receivers"
        if all("source_matchers" in item for item in data):
            return "inhibit_rules"
        if all("job_name" in item for item in data):
            return "other: Prometheus scrape jobs (inferwatch's output)"
        if all("alert" in item and "expr" in item for item in data):
            return "other: Prometheus rules (inferwatch's output)"
    return "unknown"


def _load(kind: str, text: str, data: Any, where: str, base: Path) -> None:
    if kind == "config":
        parse_config(text, source=where)
    elif kind in ("receivers", "inhibit_rules"):
        parse_config(yaml.safe_dump({"alerting": {kind: data}}), source=where)
    elif kind == "edge":
        from inferwatch.edge._config import parse_agent_config

        (base / "token").write_text("t0ken\n")  # the edge example's token_file, read at load
        parse_agent_config(data, source=where, base=base)
    elif kind == "edge agent config (edge.agent_configs)":  # merged by the agent into its own, then parsed
        from inferwatch.edge._config import parse_agent_config

        assert all(isinstance(v, str) for v in data["match"].values()), f"{where}: match takes label values"
        (base / "token").write_text("t0ken\n")
        parse_agent_config({"device": "d", "upload": {"url": "http://monitor:9464", "token_file": "token"},
                            **data["config"]}, source=where, base=base)
    elif kind == "web":
        from inferwatch.config import parse_web_config

        parse_web_config(text, source=where)
    elif kind == "sloth":
        from inferwatch.slo._sloth import parse_sloth_spec

        parse_sloth_spec(text, source=where)
    elif kind == "prometheus.yml":  # as scrape.prometheus_config reads it
        from inferwatch.config import read_prometheus_jobs

        (base / "prometheus.yml").write_text(text)
        read_prometheus_jobs(base / "prometheus.yml")
    elif kind == "alertmanager.yml":  # as alerting.alertmanager_file reads it
        from inferwatch.config import read_alertmanager_file

        (base / "alertmanager.yml").write_text(text)
        read_alertmanager_file(base / "alertmanager.yml")
    elif kind == "prometheus rule file":  # as rule_files reads it
        from inferwatch.rules import read_rule_files

        (base / "rules.yml").write_text(text)
        read_rule_files([str(base / "rules.yml")])
    elif kind == "replay":
        from inferwatch.alerting._replay import ReplayPipeline

        ReplayPipeline(Config().alerting, data["inferwatch"])


def test_the_docs_have_config_blocks_to_check() -> None:
    kinds = [_kind(yaml.safe_load(text)) for _, text in BLOCKS]
    assert kinds.count("config") >= 15 and "edge" in kinds and "sloth" in kinds


@pytest.mark.parametrize(("where", "text"), BLOCKS, ids=[w for w, _ in BLOCKS])
def test_every_yaml_block_in_the_docs_loads(where: str, text: str, tmp_path: Path) -> None:
    data = yaml.safe_load(text)
    kind = _kind(data)
    assert kind != "unknown", f"{where}: a YAML block of no known format (a config with an unknown top key?)"
    _load(kind, text, data, where, tmp_path)


def test_a_wrong_field_name_in_a_block_fails(tmp_path: Path) -> None:
    from inferwatch import ConfigError

    block = "alerting:\n  receivers:\n    - {name: w, type: wecom, key: k, base_url: 'http://x'}\n"
    with pytest.raises(ConfigError, match="base_url"):
        _load(_kind(yaml.safe_load(block)), block, yaml.safe_load(block), "doc.md:1", tmp_path)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    out, stack = [], [annotation]
    while stack:
        t = stack.pop()
        if isinstance(t, type) and issubclass(t, BaseModel):
            out.append(t)
        else:
            stack.extend(getattr(t, "__args__", ()))
    return out


def _is_field(parts: list[str], model: type[BaseModel]) -> bool:
    """Whether ``a.b[].c`` names a field path of ``model`` (a free-form mapping ends the check)."""
    fields = {f.alias or n: f for n, f in model.model_fields.items()}
    field = fields.get(parts[0].split("[")[0])
    if field is None:
        return False
    inner = _models_in(field.annotation)
    return len(parts) == 1 or not inner or any(_is_field(parts[1:], m) for m in inner)


# dotted names in the prose that start like a config section but are files or code
NOT_FIELDS = re.compile(r"\.(sqlite|ya?ml|py|json|md)$|^rules\.to_prometheus_rule_groups$")


def test_every_dotted_field_name_in_the_docs_prose_is_a_config_field() -> None:
    wrong = []
    for doc in DOCS:
        if {"reference", "benchmarks"} & set(doc.relative_to(ROOT).parts):
            continue  # generated from the models / measurement logs
        for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for name in re.findall(r"`([a-z_]+(?:\.[a-z_\[\]0-9]+)+)(?:[:=][^`]*)?`", line):
                parts = name.split(".")
                if parts[0] in CONFIG_KEYS and not NOT_FIELDS.search(name) and not _is_field(parts, Config):
                    wrong.append(f"{doc.relative_to(ROOT)}:{n}: `{name}`")
    assert not wrong, "names no config field (see docs/reference/config.md): " + "; ".join(wrong)
