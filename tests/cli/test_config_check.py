"""Issue 21 #8 and issue 20 #4: `config check` refuses what `serve` and `rules check` refuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch.cli import main
from inferwatch.rules import default_rule_pack

RULE = "dimension: service, tier: P1, comparison: '>'"


def _rule(expr: str, threshold: str = "1") -> str:
    signal = f"{{type: expr, expr: '{expr}'}}"
    return f"rules: {{rules: [{{name: X, {RULE}, threshold: {threshold}, signal: {signal}}}]}}\n"


@pytest.mark.parametrize(("text", "wanted"), [
    # serve refused these after `config check` said ok
    (_rule("rate(foo[5m]"), "inferwatch.yml: rule X: "),
    (_rule("predict_linear(foo[1h])"), "inferwatch.yml: rule X: "),
    ("server: {listen: 'localhost:99999'}\n", "server.listen: expected host:port with a port 0..65535"),
    # accepted silently before
    ("server: {evaluation_interval: 0s}\n", "server.evaluation_interval: Input should be greater than"),
    (_rule("foo", ".nan"), "rules.rules[0].threshold: threshold must be a finite number"),
    ("server: {listen: '127.0.0.1:1'}\nserver: {listen: '127.0.0.1:2'}\n",
     "inferwatch.yml:2:1: invalid YAML: duplicate key 'server'"),
    ("rules: {disable: [NoSuchRule]}\n", "rules.disable: no default-pack rule named 'NoSuchRule'"),
    # `rules check` refuses it (RE2, as Prometheus): so does `config check`
    (_rule('foo{job=~"(?!x).*"}'), "invalid perl operator: (?!"),
    # a 500-deep document used to end in RecursionError
    ("a: " + "[" * 500 + "]" * 500 + "\n", "invalid YAML: nested more than 64 levels deep"),
])
def test_config_check_refuses_with_one_clear_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, wanted: str) -> None:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(text)
    assert main(["config", "check", str(cfg)]) != 0
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_good_config_is_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(_rule("rate(foo[5m])"))
    assert main(["config", "check", str(cfg)]) == 0
    assert f"ok ({len(default_rule_pack()) + 1} rules)" in capsys.readouterr().out  # the default pack and X


def test_config_check_warns_of_a_scrape_interval_as_long_as_the_lookback(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rule: a target scraped every 5 m (or more) leaves rules without a sample at some rounds
    # (none at all when the scrape and evaluation schedules fall into step): ok, with a warning
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text("scrape: {targets: [{job: slow, url: 'http://127.0.0.1:9/metrics', interval: 5m},\n"
                   "                   {job: fine, url: 'http://127.0.0.1:9/m', interval: 4m59s}]}\n")
    assert main(["config", "check", str(cfg)]) == 0
    out = capsys.readouterr()
    assert "ok (" in out.out
    (line,) = out.err.strip().splitlines()  # one warning: the 5 m target only
    assert ("warning: scrape target slow/127.0.0.1:9: interval 5m is not shorter than the 5m query "
            "lookback") in line and "scrape at most every 2m30s" in line, line


def test_rules_check_refuses_look_ahead_as_prometheus_does(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rule: RE2 syntax; Prometheus answers "invalid regular expression ... invalid or unsupported Perl syntax"
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(_rule('foo{job=~"(?!x).*"}'))
    assert main(["rules", "check", "--config", str(cfg)]) != 0
    err = capsys.readouterr().err
    assert "invalid regex in matcher job=~'(?!x).*'" in err and "Traceback" not in err, err
