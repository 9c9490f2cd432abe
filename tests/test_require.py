"""CI cannot skip an oracle: every test that needs a tool or an optional package asks ``tests._require``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests._require import ENV_REQUIRE_TOOLS, require_module, require_tool

TESTS = Path(__file__).resolve().parent


def test_a_missing_tool_skips_locally_and_fails_under_the_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_REQUIRE_TOOLS, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no-such-tool-4711"):
        require_tool("no-such-tool-4711")
    monkeypatch.setenv(ENV_REQUIRE_TOOLS, "1")
    with pytest.raises(pytest.fail.Exception, match=f"no-such-tool-4711.*{ENV_REQUIRE_TOOLS}=1"):
        require_tool("no-such-tool-4711")
    with pytest.raises(pytest.fail.Exception, match="no_such_module_4711"):
        require_module("no_such_module_4711")
    # a tool no registry reachable from CI ships: skipped even under the switch, saying why
    with pytest.raises(pytest.skip.Exception):
        require_tool("no-such-tool-4711", ci_has_it=False)
    assert require_tool("no-such-tool-4711", "sh").endswith("/sh")


def test_no_test_skips_on_a_missing_tool_by_itself() -> None:
    # rule: bare skipif(shutil.which(...) is None) and importorskip ignore the switch: not allowed
    bare = re.compile(r"importorskip\(|skipif\([^)]*which\(|which\([^)]*\) is None")
    found = [f"{p.relative_to(TESTS)}:{n}" for p in sorted(TESTS.rglob("*.py")) if p.name != "_require.py"
             and p != Path(__file__).resolve()
             for n, line in enumerate(p.read_text("utf-8").splitlines(), 1) if bare.search(line)]
    assert found == []
