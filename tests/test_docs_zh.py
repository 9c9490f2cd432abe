"""Issue 53: the 简体中文 pages of the docs site (``docs/PAGE.zh.md`` beside ``docs/PAGE.md``).

A translated page shows exactly the English page's code, config and output (block by block), so
a change to a command or its output cannot leave the Chinese page behind; its headings keep the
English anchors (``{#anchor}``), so links into it work from either language. Pages not yet
translated would be served in English under ``/zh/`` (the i18n plugin's fallback): since
2026-12-07 every page has its translation, and a test keeps it so.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
ZH = sorted(DOCS.rglob("*.zh.md"))
HEADING = re.compile(r"^(#{2,6}) (.+?)\s*$")


def _english(zh: Path) -> Path:
    return zh.with_name(zh.name.removesuffix(".zh.md") + ".md")


def _blocks(text: str) -> list[str]:
    """Fenced blocks (with their info string), in order; indented fences (in lists) included."""
    out, current, fence = [], [], None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            if fence is None:
                fence, current = stripped, []
            else:
                out.append(fence + "\n" + "\n".join(current))
                fence = None
        elif fence is not None:
            current.append(stripped)
    return out


def _slug(title: str) -> str:
    # Python-Markdown's toc slugify of the rendered title (a link's text only): lower case,
    # punctuation out, spaces to '-'
    rendered = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
    text = re.sub(r"[^\w\s-]", "", rendered.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def test_there_are_translated_pages() -> None:
    assert len(ZH) >= 5, "the Chinese pages are gone: is the suffix still .zh.md?"


@pytest.mark.parametrize("zh", ZH, ids=lambda p: p.name)
def test_a_translated_page_shows_the_english_pages_code_and_output(zh: Path) -> None:
    english = _english(zh)
    assert english.is_file(), f"{zh.name} has no English page {english.name}"
    assert _blocks(zh.read_text(encoding="utf-8")) == _blocks(english.read_text(encoding="utf-8")), (
        f"{zh.name}: a code block differs from {english.name}'s: `python -m inferwatch.cli._docgen` copies "
        "the English page's blocks into it")


@pytest.mark.parametrize("zh", ZH, ids=lambda p: p.name)
def test_a_translated_page_keeps_the_english_anchors(zh: Path) -> None:
    english = [_slug(m.group(2)) for line in _english(zh).read_text(encoding="utf-8").splitlines()
               if (m := HEADING.match(line))]
    chinese = [a for line in zh.read_text(encoding="utf-8").splitlines()
               for a in re.findall(r"\{#([\w-]+)\}\s*$", line) if HEADING.match(line)]
    assert chinese == english, f"{zh.name}: each heading ends with its English anchor, in order"


def test_every_english_page_has_its_chinese_page(capsys: pytest.CaptureFixture[str]) -> None:
    pages = sorted(p for p in DOCS.rglob("*.md") if not p.name.endswith(".zh.md"))
    missing = [str(p.relative_to(DOCS)) for p in pages if not _english_has_zh(p)]
    with capsys.disabled():
        print(f"\n简体中文: {len(pages) - len(missing)} of {len(pages)} pages translated; "
              f"in English under /zh/: {', '.join(missing) or 'none'}")
    assert not missing, (
        f"docs/{missing[0]} has no 简体中文 page: write "
        f"docs/{missing[0].removesuffix('.md')}.zh.md beside it "
        "(the prose translated, each heading ending with its English anchor {#...}; "
        "`python -m inferwatch.cli._docgen .` then copies the English page's code blocks into it)")


def _english_has_zh(page: Path) -> bool:
    return page.with_name(page.name.removesuffix(".md") + ".zh.md").is_file()
