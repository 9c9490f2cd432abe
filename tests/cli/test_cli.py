from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from inferwatch.cli import main
from inferwatch.cli._main import VERBS


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "inferwatch", *args], capture_output=True,
                          text=True, timeout=60)


def test_help_lists_every_verb() -> None:
    out = run("--help")
    assert out.returncode == 0
    for verb, _ in VERBS:
        assert verb in out.stdout


@pytest.mark.parametrize("verb", [v for v, _ in VERBS])
def test_every_verb_has_help(verb: str) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([verb, "--help"])
    assert exit_.value.code == 0


def test_config_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("server: {evaluation_interval: soon}\n")
    out = run("config", "check", str(bad))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert f"{bad}: server.evaluation_interval: not a duration: 'soon'" in out.stderr


def test_config_show_masks_secrets(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("server: {api_token: hunter2-secret}\n")
    out = run("config", "show", "--config", str(cfg))
    assert out.returncode == 0 and "hunter2" not in out.stdout and "<secret>" in out.stdout


def test_config_show_redacts_credentials_inside_urls(tmp_path: Path) -> None:
    # before: user:PASS@ in remote-write and webhook URLs was printed as written
    cfg = tmp_path / "c.yaml"
    cfg.write_text("server: {remote_write: [{url: 'https://rw:PASS1@tsdb.example.com/api/v1/write'}]}\n"
                   "alerting: {receivers: [{name: hook, type: webhook, "
                   "url: 'https://u:PASS2@hooks.example.com/in?token=PASS3'}]}\n"
                   "scrape: {targets: [{job: j, url: 'http://127.0.0.1:9/metrics?token=PASS4'}]}\n")
    out = run("config", "show", "--config", str(cfg))
    assert out.returncode == 0, out.stderr
    assert "PASS" not in out.stdout and "http://127.0.0.1:9/metrics" in out.stdout


# verbs that read no inferwatch config: they take none (edge's --config is the agent's own file)
NO_CONFIG = {"init", "demo", "abtest", "profile check", "edge simulate", "performance estimate"}


def test_every_verb_that_reads_the_config_takes_config_file() -> None:
    from inferwatch.cli._docgen import _parsers
    from inferwatch.cli._main import build_parser

    lacking = []
    for words, parser in _parsers(build_parser()):
        leaf = not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
        if leaf and "--config" not in {o for a in parser._actions for o in a.option_strings}:
            lacking.append(" ".join(words))
    assert sorted(lacking) == sorted(NO_CONFIG)


@pytest.mark.parametrize("verb", [["history"], ["generations", "worst"]])
def test_a_bad_since_is_named_before_any_call(verb: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("alerting: {language: en}\n")
    # No server listens at 127.0.0.1:9 (discard): the duration is refused before any request.
    code = main([*verb, "--config", str(cfg), "--url", "http://127.0.0.1:9", "--since", "soon"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--since" in err and "'soon'" in err and "Traceback" not in err
