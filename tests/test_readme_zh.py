"""Issue 53: the Chinese README is the English one's twin: the same code, and the output it shows is real.

Its Python blocks are the English README's (which `tests/test_quickstart.py` runs), its `init`
command is run here and must print the line shown and write the YAML shown.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
ZH = (ROOT / "README.zh-CN.md").read_text(encoding="utf-8")
EN = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    """The fenced blocks whose info string is ``lang`` ("" for a bare fence), in order."""
    out, current, inside = [], [], None
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if inside is None:
                inside, current = line[3:].strip(), []
            else:
                if inside == lang:
                    out.append("".join(current))
                inside = None
        elif inside is not None:
            current.append(line)
    return out


def test_the_chinese_readme_shows_the_english_readmes_code() -> None:
    assert _blocks(ZH, "python") == _blocks(EN, "python")
    assert _blocks(ZH, "sh")[0] == _blocks(EN, "sh")[0]  # make demo / make test


def test_the_init_command_it_shows_prints_and_writes_what_it_shows(tmp_path: Path) -> None:
    quick = _blocks(ZH, "sh")[1]
    line = next(ln for ln in quick.splitlines() if ln.startswith("inferwatch init "))
    argv = [sys.executable, "-m", "inferwatch", *shlex.split(line)[1:]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    shown_output, shown_yaml = _blocks(ZH, "")[0].strip(), _blocks(ZH, "yaml")[0]
    assert (done.stdout + done.stderr).strip() == shown_output
    written = (tmp_path / "inferwatch.yaml").read_text(encoding="utf-8").splitlines()
    missing = [ln for ln in shown_yaml.splitlines() if ln not in written]
    assert missing == [], "the README shows lines init no longer writes"
