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
])
def test_the_docs_state_the_default_packs_rule_count(doc: str, pattern: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = [int(n) for n in re.findall(pattern, text)]
    assert found, f"{doc}: the sentence stating the rule count is gone ({pattern})"
    assert found == [len(default_rule_pack())] * len(found), f"{doc}: update the count to the pack's"
