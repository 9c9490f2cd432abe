"""Reload rebuilds or names: every config section, walked from the config models.

Each section has one entry in ``_reload_policy.SECTIONS`` and one change here; a change to a
section kept until a restart (or never read by ``serve``) is named in the reload's reply, a change
to ``storage`` or ``server.data_dir`` is refused, and a rebuilt one is not reported as kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from inferwatch._exceptions import ConfigError
from inferwatch.config import Config, ServerConfig
from inferwatch.server._lifecycle import _check_restart_only
from inferwatch.server._reload_policy import SECTIONS, reload_notes, section_value

# One change per section (as the YAML would say it).
CHANGES: dict[str, dict[str, Any]] = {
    "server.listen": {"server": {"listen": "127.0.0.1:1"}},
    "server.data_dir": {"server": {"data_dir": "./elsewhere"}},
    "server.evaluation_interval": {"server": {"evaluation_interval": "30s"}},
    "server.api_token": {"server": {"api_token": "another-token-0001"}},
    "server.auth": {"server": {"auth": {"anonymous_reads": False}}},
    "server.external_url": {"server": {"external_url": "http://dash.example"}},
    "server.query": {"server": {"query": {"timeout": "5s"}}},
    "server.http": {"server": {"http": {"max_connections": 64}}},
    "server.limits": {"server": {"limits": {"label_limit": 10}}},
    "server.remote_write": {"server": {"remote_write": [{"url": "http://127.0.0.1:1/api/v1/write"}]}},
    "server.outcomes": {"server": {"outcomes": {"max_rows": 10}}},
    "server.shutdown_grace": {"server": {"shutdown_grace": "5s"}},
    "storage": {"storage": {"retention": "1d"}},
    "scrape": {"scrape": {"targets": [{"job": "app", "url": "http://127.0.0.1:1/metrics"}]}},
    "rules": {"rules": {"default_pack": False}},
    "alerting": {"alerting": {"default_actions": False}},
    "alerting.alertmanagers": {"alerting": {"alertmanagers": [{"url": "http://127.0.0.1:1"}]}},
    "alerting.heartbeat": {"alerting": {"heartbeat": {"kind": "healthchecks", "url": "http://127.0.0.1:1/x"}}},
    "sdk": {"sdk": {"queue_size": 1024}},
    "quality": {"quality": {"psi_warning": 0.2}},
    "collect": {"collect": {"interval": "30s"}},
    "baseline": {"baseline": {"method": "prophet"}},
    "edge": {"edge": {"max_samples": 10}},
    "slos": {"slos": [{"service": "ranker", "type": "availability", "objective": 99.9}]},
    "slo_files": {"slo_files": ["slos.yml"]},
    "probes": {"probes": [{"name": "home", "url": "http://127.0.0.1:1/"}]},
    "heartbeats": {"heartbeats": [{"name": "site-a"}]},
    "rule_files": {"rule_files": ["rules/team.rules.yml"]},
    "ha": {"ha": {"database": "postgresql://iw@127.0.0.1:1/iw"}},
}


def test_every_section_of_the_config_has_a_policy_and_a_change() -> None:
    # rule: a new field of the config (root or server) fails here until reload knows it
    walked = {*(f for f in Config.model_fields if f != "server"),
              *(f"server.{f}" for f in ServerConfig.model_fields)}
    assert walked <= set(SECTIONS), f"add to _reload_policy.SECTIONS: {sorted(walked - set(SECTIONS))}"
    assert set(SECTIONS) == set(CHANGES)
    assert set(SECTIONS.values()) <= {"rebuilt", "applied", "restart", "refused", "unused"}


@pytest.mark.parametrize("path", sorted(SECTIONS))
def test_a_changed_section_is_rebuilt_or_named(path: str) -> None:
    old = Config()
    new = Config.model_validate(CHANGES[path])
    assert section_value(new, path) != section_value(old, path)
    kind, notes = SECTIONS[path], reload_notes(new, old)
    if kind == "refused":
        with pytest.raises(ConfigError, match="restart"):
            _check_restart_only(new, old)
    elif kind in ("restart", "unused"):
        assert any(note.startswith(path) for note in notes), notes
    else:  # rebuilt by build_components, or applied by the reloader's hook (which says so itself)
        assert not any(note.startswith(path + " ") for note in notes), notes
