"""Issue 38: counts the docs state are the code's (the default pack's rule count drifted: 12 said, 15 ran)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferwatch.rules import default_rule_pack

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize(("doc", "pattern"), [
    ("README.md", r"\b(\d+) default rules run with no config"),
    ("docs/tour.md", r"\b(\d+) default rules run with no config"),
    ("docs/rules.md", r"The default pack \((\d+) rules, four dimensions\)"),
    ("docs/rules.zh.md", r"默认规则包（(\d+) 条规则，四个维度）"),
    # `serve`'s and `config check`'s own lines, shown for configs that add no rules of their own
    ("README.md", r"\(1 targets, (\d+) rules, data in data(?:, reads open)?\)"),
    ("docs/dashboard.md", r"\(2 targets, (\d+) rules, data in data(?:, reads open)?\)"),
    ("docs/server.md", r"\(2 targets, (\d+) rules, data in data(?:, reads open)?\)"),
    ("docs/tour.md", r"\(2 targets, (\d+) rules, data in data(?:, reads open)?\)"),
    ("docs/server.md", r"slow\.yml: ok \((\d+) rules\)"),
])
def test_the_docs_state_the_default_packs_rule_count(doc: str, pattern: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = [int(n) for n in re.findall(pattern, text)]
    assert found, f"{doc}: the sentence stating the rule count is gone ({pattern})"
    assert found == [len(default_rule_pack())] * len(found), f"{doc}: update the count to the pack's"
