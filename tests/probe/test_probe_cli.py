"""`inferwatch probe URL`: one probe printed as a table; exit 1 when it failed, 2 on bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.probe._targets import targets


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "INFERWATCH_CONFIG"}
    return subprocess.run([sys.executable, "-m", "inferwatch", "probe", *args], capture_output=True,
                          text=True, timeout=120, env=env, check=False)


def test_a_good_answer_a_wrong_one_and_bad_flags() -> None:
    with targets() as t:
        ok = _cli(f"{t.url}/ok", "--json-path", "$.label", "--equals", "cat")
        wrong = _cli(f"{t.url}/ok", "--json-path", "$.label", "--equals", "dog")
        gen = _cli(f"{t.url}/v1/chat/completions", "--generative", "chat", "--model", "m")
    assert ok.returncode == 0 and "result       success" in ok.stdout and "status       200" in ok.stdout
    for phase in ("resolve", "connect", "tls", "processing", "transfer", "total"):
        assert f"\n{phase:<12} " in ok.stdout
    assert wrong.returncode == 1 and "FAILED: $.label is 'cat', expected 'dog'" in wrong.stdout
    assert gen.returncode == 0 and "tokens 3" in gen.stdout and "answer       OK!" in gen.stdout
    bad = _cli("ftp://x")
    assert bad.returncode == 2 and "an http:// or https:// URL" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_configured_golden_probe_by_name(tmp_path: Path) -> None:
    (tmp_path / "golden.jsonl").write_text('{"id": "a", "body": {"x": 0}, "expect": {"json_path": "$.label", '
                                           '"equals": "cat"}}\n{"id": "b", "body": {"x": 1}, "expect": '
                                           '{"json_path": "$.label", "regex": "^c"}}\n')
    with targets() as t:
        cfg = tmp_path / "inferwatch.yaml"
        cfg.write_text(f"probes: [{{name: g, url: '{t.url}/predict', golden: {{file: golden.jsonl}}}}]\n")
        out = _cli("--config", str(cfg), "--name", "g")
    assert out.returncode == 0, out.stderr
    assert "case a       right" in out.stdout and "case b       WRONG: got 'dog', want /^c/" in out.stdout
