"""Issue 38: the documentation site builds with ``--strict``; the reference pages are the code's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from tests._require import require_module

from inferwatch.cli._docgen import (
    BENCH_PAGE,
    CLI_PAGE,
    CONFIG_PAGE,
    ZH,
    benchmarks_index,
    cli_reference,
    config_reference,
    config_sections,
    zh_reference,
)
from inferwatch.config import Config

ROOT = Path(__file__).parent.parent
REGENERATE = "run `python -m inferwatch.cli._docgen` and commit docs/reference/ and docs/benchmarks/index.md"


GENERATED = [(CONFIG_PAGE, config_reference), (CLI_PAGE, cli_reference),
             (BENCH_PAGE, lambda: benchmarks_index(ROOT)),
             # the 简体中文 twins
             (ZH[CONFIG_PAGE][0], lambda: zh_reference(CONFIG_PAGE, config_reference())),
             (ZH[CLI_PAGE][0], lambda: zh_reference(CLI_PAGE, cli_reference())),
             (ZH[BENCH_PAGE][0], lambda: zh_reference(BENCH_PAGE, benchmarks_index(ROOT)))]


@pytest.mark.parametrize(("page", "generate"), GENERATED)
def test_the_committed_reference_pages_are_the_generated_ones(page: str, generate: object) -> None:
    assert (ROOT / page).read_text(encoding="utf-8") == generate(), f"{page} is stale: {REGENERATE}"  # type: ignore[operator]


def _all_models(model: type, seen: set[type]) -> set[type]:
    """Every model class reachable from ``model``, through the annotations (not _docgen's walk)."""
    from pydantic import BaseModel

    seen.add(model)
    for field in model.model_fields.values():  # type: ignore[attr-defined]
        stack = [field.annotation]
        while stack:
            t = stack.pop()
            if isinstance(t, type) and issubclass(t, BaseModel):
                if t not in seen:
                    _all_models(t, seen)
            else:
                stack.extend(getattr(t, "__args__", ()))
    return seen


def test_the_config_reference_has_a_row_for_every_field_of_every_model() -> None:
    page = config_reference()
    models = _all_models(Config, set())
    assert {m for _, m in config_sections()} == models
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) == sum(len(m.model_fields) for m in models)  # type: ignore[attr-defined]
    # the example: WeCom's base URL field is `url` (`base_url` was a guess that failed)
    wecom = page.split("## `alerting.receivers[] (type: wecom)`", 1)[1].split("\n## ", 1)[0]
    assert '| `url` | string | `"https://qyapi.weixin.qq.com"` |' in wecom


def _mkdocs(cwd: Path, site: Path) -> subprocess.CompletedProcess[str]:
    require_module("mkdocs")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
                          cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


@pytest.mark.slow
def test_mkdocs_build_strict_passes_and_fails_on_a_broken_link(tmp_path: Path) -> None:
    r = _mkdocs(ROOT, tmp_path / "site")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "site" / "reference" / "config" / "index.html").is_file()
    # the same site with one broken link: --strict refuses it
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    with (copy / "docs" / "rules.md").open("a") as f:
        f.write("\nSee [the gone page](no-such-page.md).\n")
    broken = _mkdocs(copy, tmp_path / "site2")
    assert broken.returncode != 0 and "no-such-page.md" in broken.stderr
