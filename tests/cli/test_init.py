"""Issue 38: `init` writes a config that passes `config check`; every verb finds ./inferwatch.yaml."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from inferwatch.cli import main
from inferwatch.cli._init import RECEIVER_KEYS
from inferwatch.config import load_config
from inferwatch.rules import default_rule_pack

KEYS = {"wecom": "ROBOT-KEY", "pagerduty": "0123456789abcdef0123456789abcdef",
        "slack": "https://hooks.slack.com/services/T/B/X",
        "dingtalk": "https://oapi.dingtalk.com/robot/send?access_token=abc",
        "feishu": "https://open.feishu.cn/open-apis/bot/v2/hook/abc", "webhook": "https://example.com/hook"}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INFERWATCH_CONFIG", raising=False)


@pytest.mark.parametrize("receiver", sorted(RECEIVER_KEYS))
def test_init_writes_a_config_that_checks_and_routes_every_tier(
        receiver: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["init", "--url", "http://127.0.0.1:8000/metrics", "--receiver", receiver]
    assert main(argv + (["--key", KEYS[receiver]] if receiver in KEYS else [])) == 0
    assert "wrote inferwatch.yaml" in capsys.readouterr().out
    # no argument: `config check` finds ./inferwatch.yaml, with the default pack's every rule
    assert main(["config", "check"]) == 0
    assert f"inferwatch.yaml: ok ({len(default_rule_pack())} rules)" in capsys.readouterr().out
    cfg = load_config("inferwatch.yaml")
    assert [t.url for t in cfg.scrape.targets] == ["http://127.0.0.1:8000/metrics"]
    routes = {r.matchers[0]: r.receiver for r in cfg.alerting.route.routes}
    assert routes == {'tier="P0"': "oncall", 'tier="P1"': "oncall", 'tier="P2"': "digest"}
    oncall = next(r for r in cfg.alerting.receivers if r.name == "oncall")
    assert oncall.type == receiver
    if receiver in KEYS:  # the key landed in the type's credential field
        value = getattr(oncall, RECEIVER_KEYS[receiver] or "")
        assert (value if isinstance(value, str) else value.reveal()) == KEYS[receiver]
        assert main(["config", "show"]) == 0
        assert (KEYS[receiver] in capsys.readouterr().out) is isinstance(value, str)  # secrets masked
    assert "# P0: service down" in Path("inferwatch.yaml").read_text()  # commented for a reader
    assert cfg.alerting.default_actions is False  # no scale-out of a deployment nobody configured


@pytest.mark.parametrize(("argv", "wanted"), [
    (["--receiver", "wecom"], "--key: the wecom receiver needs its key"),
    (["--receiver", "terminal", "--key", "x"], "--key: the terminal receiver takes no credential"),
    (["--receiver", "pagerduty", "--key", "short"], "routing_key: must be the 32-character integration key"),
    (["--url", "ftp://x/metrics"], "scrape.targets[0].url"),
])
def test_bad_init_flags_are_one_line_and_write_nothing(
        argv: list[str], wanted: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", *argv]) == 2
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err and err.count("\n") == 1, err
    assert not Path("inferwatch.yaml").exists()


def test_init_never_overwrites_without_force(capsys: pytest.CaptureFixture[str]) -> None:
    Path("inferwatch.yaml").write_text("# mine\n")
    assert main(["init", "--receiver", "terminal"]) == 2
    assert "already exists (--force overwrites it)" in capsys.readouterr().err
    assert Path("inferwatch.yaml").read_text() == "# mine\n"
    assert main(["init", "--receiver", "terminal", "--force"]) == 0


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_init_asks_on_a_terminal_when_no_flag_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    # language and zone come first
    monkeypatch.setattr("sys.stdin", _Tty("en\nUTC\nhttp://10.0.0.5:9000/metrics\nwecom\nKEY-1\n"))
    assert main(["init"]) == 0
    cfg = load_config("inferwatch.yaml")
    assert cfg.scrape.targets[0].url == "http://10.0.0.5:9000/metrics"
    assert next(r for r in cfg.alerting.receivers if r.name == "oncall").type == "wecom"


def test_init_without_a_terminal_or_flags_uses_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a TTY: never blocks on a prompt
    assert main(["init"]) == 0
    assert load_config("inferwatch.yaml").scrape.targets[0].url == "http://127.0.0.1:8000/metrics"


def test_config_file_positional_or_flag_and_found_in_the_directory(
        capsys: pytest.CaptureFixture[str]) -> None:
    Path("other.yaml").write_text("server: {listen: '127.0.0.1:9999'}\n")
    shown = []
    for argv in (["config", "show", "other.yaml"], ["config", "show", "--config", "other.yaml"]):
        assert main(argv) == 0
        shown.append(yaml.safe_load(capsys.readouterr().out))
    assert shown[0] == shown[1] and shown[0]["server"]["listen"] == "127.0.0.1:9999"
    assert main(["config", "check", "--config", "other.yaml"]) == 0
    assert main(["config", "check"]) == 2  # nothing to check: says how to get one
    assert "inferwatch init" in capsys.readouterr().err
    assert main(["config", "check", "a.yaml", "--config", "other.yaml"]) == 2
    assert "two configs given" in capsys.readouterr().err
    Path("inferwatch.yaml").write_text("server: {listen: '127.0.0.1:9998'}\n")
    assert main(["config", "show"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["server"]["listen"] == "127.0.0.1:9998"


@pytest.mark.parametrize("action", ["check", "show"])
def test_a_named_file_wins_over_the_inferwatch_yaml_found_here(
        action: str, capsys: pytest.CaptureFixture[str]) -> None:
    # a new user's directory holds init's file; `config check other.yml` reads other.yml alone
    assert main(["init", "--receiver", "terminal"]) == 0
    Path("other.yml").write_text('server: {listen: "127.0.0.1:9999"}\n')
    capsys.readouterr()
    assert main(["config", action, "other.yml"]) == 0
    out = capsys.readouterr().out
    assert ("other.yml: ok" in out) if action == "check" else ("127.0.0.1:9999" in out)
    assert main(["config", action, "other.yml", "--config", "inferwatch.yaml"]) == 2  # two: refused
    assert "two configs given: other.yml and --config inferwatch.yaml" in capsys.readouterr().err
