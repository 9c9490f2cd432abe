"""`inferwatch serve`: a reload cannot empty the config by mistake; a new ``server.api_token`` applies."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from server._proc import serve

pytestmark = pytest.mark.slow

RULES = """
rules:
  default_pack: false
  rules: [{name: Mine, dimension: service, tier: P1, signal: {type: expr, expr: 'vector(1)'}, threshold: 0,
           for: 1h}]
"""


def _config(tmp_path: Path, token: str) -> str:
    return f"server: {{data_dir: '{tmp_path / 'data'}', api_token: {token}}}\n{RULES}"


def test_an_emptied_config_is_refused_unless_forced_and_a_new_token_is_applied(tmp_path: Path) -> None:
    with serve(_config(tmp_path, "old-t0ken"), tmp_path) as s, httpx.Client(base_url=s.url, timeout=60) as c:
        cfg = tmp_path / "inferwatch.yml"
        old = {"Authorization": "Bearer old-t0ken"}
        cfg.write_text(f"server: {{data_dir: '{tmp_path / 'data'}'}}\n")  # every rule and receiver gone
        r = c.post("/-/reload", headers=old)  # before: "success, 0 targets, 21 rules"
        assert r.status_code == 400 and "nothing but defaults" in r.json()["error"]
        assert "force=true" in r.json()["error"]
        assert [g["rules"][0]["name"] for g in c.get("/api/v1/rules").json()["data"]["groups"]] == ["Mine"]

        cfg.write_text(_config(tmp_path, "new-t0ken"))  # before: accepted, and the old token kept working
        r = c.post("/-/reload", headers=old)
        assert r.status_code == 200 and "server.api_token applied" in r.json()["data"]
        assert c.post("/-/reload", headers=old).status_code == 401
        assert c.post("/-/reload", headers={"Authorization": "Bearer new-t0ken"}).status_code == 200

        cfg.write_text(f"server: {{data_dir: '{tmp_path / 'data'}'}}\n")
        forced = c.post("/-/reload", params={"force": "true"}, headers={"Authorization": "Bearer new-t0ken"})
        assert forced.status_code == 200, forced.text
    assert "Traceback" not in "".join(s.lines)
