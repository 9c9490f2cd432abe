"""The PromQL Compliance Tester's query set against a real Prometheus 2.42 on the same data."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from tests.promql import compliance


@pytest.fixture
def query_set() -> None:
    if compliance.query_file() is None:
        pytest.skip(f"shared data not found at {compliance.QUERY_FILES[0]}")


@pytest.mark.usefixtures("query_set")
def test_query_set_expands_like_the_tester() -> None:
    # rule: every variant_args combination is one case (expand.go's getVariants), in order
    cases = compliance.expand_cases()
    assert len(cases) == 539
    assert cases[0].query == "42"
    assert sum(c.query.startswith("demo_memory_usage_bytes offset") for c in cases) == 6
    assert all("{{" not in c.query for c in cases)


def test_comparison_follows_the_comparer() -> None:
    # rule: values equal within a fraction of 1e-5, NaN equals NaN, series and timestamps must match
    def m(*vals: str, **labels: str) -> dict[str, object]:
        return {"resultType": "matrix", "result": [{"metric": labels, "values": [[1, v] for v in vals]}]}

    assert compliance.compare(m("1.000001", "NaN", a="x"), m("1.0000015", "NaN", a="x")) == ""
    assert "value differs" in compliance.compare(m("1.0", a="x"), m("1.1", a="x"))
    assert "series differ" in compliance.compare(m("1", a="x"), m("1", a="y"))


@pytest.mark.usefixtures("query_set")
@pytest.mark.tools
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_compliance_against_prometheus(tmp_path: Path, require_tool: Callable[..., str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    require_tool("prometheus")
    require_tool("promtool")
    report = compliance.run(verbose=True, workdir=tmp_path)
    out = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + "\n".join(out.strip().splitlines()[-2:]))
    assert f"{report.passed} / {report.total} passed" in out
    failures = report.failures + report.extra_failures
    assert failures == [], "\n".join(f"{c.query}: {why}" for c, why in failures)
    assert report.api_failures == []
