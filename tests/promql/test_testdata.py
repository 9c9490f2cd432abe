"""PromQL conformance as a suite: Prometheus's own engine test files, and the team's, in their format.

The team's cases (``tests/promql/testdata/*.test``) always run: one file for each behaviour the
upstream suite found wrong, with the upstream answer. Prometheus 2.42's own files
(``promql/testdata/*.test``) run when ``INFERWATCH_PROMQL_TESTDATA`` names a directory holding
them (a development check: the files are Prometheus's, not shipped here), e.g.::

    git -C prometheus archive v2.42.0 promql/testdata | tar -x -C /tmp
    INFERWATCH_PROMQL_TESTDATA=/tmp/promql/testdata make test
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.promql.promtest import Outcome, run_file, run_script

from inferwatch.config import env

ENV_PROMQL_TESTDATA = env.ENV_PROMQL_TESTDATA

OWN = sorted((Path(__file__).parent / "testdata").glob("*.test"))
# read at collection: the autouse fixture hides INFERWATCH_* from the tests themselves
_UPSTREAM = os.environ.get(ENV_PROMQL_TESTDATA, "")
UPSTREAM = sorted(Path(_UPSTREAM).glob("*.test")) if _UPSTREAM and Path(_UPSTREAM).is_dir() else []


def _report(outcomes: list[Outcome]) -> str:
    return "\n".join(f"{o.source}:{o.line}: {o.expr}\n    {o.error}" for o in outcomes if not o.passed)


@pytest.mark.parametrize("path", OWN, ids=[p.name for p in OWN])
def test_own_cases(path: Path) -> None:
    outcomes = run_file(path)
    assert outcomes, f"{path.name} has no eval commands"
    assert all(o.passed for o in outcomes), _report(outcomes)


@pytest.mark.skipif(not UPSTREAM, reason=f"Prometheus's promql/testdata not given: set {ENV_PROMQL_TESTDATA} "
                                         "to a directory of its *.test files (v2.42) to run them")
@pytest.mark.parametrize("path", UPSTREAM, ids=[p.name for p in UPSTREAM])
def test_upstream_file(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = run_file(path)
    with capsys.disabled():
        print(f"\n{path.name}: {sum(o.passed for o in outcomes)} / {len(outcomes)} cases passed")
    assert all(o.passed for o in outcomes), _report(outcomes)


def test_upstream_suite_is_skipped_by_name_when_absent() -> None:
    # rule: without the variable nothing upstream is collected, and the skip says how to run it
    assert _UPSTREAM or UPSTREAM == []


# -- the runner itself: it must fail where Prometheus's runner fails --------------------------------

SCRIPT = """
load 5m
  m{a="x"} 0+10x10
  m{a="y"} 1 _ 3

eval instant at 10m m
  m{a="x"} 20
  m{a="y"} 3
"""


@pytest.mark.parametrize(("script", "why"), [
    # a wrong value, a missing series, an unexpected series, an error where none is expected
    (SCRIPT.replace("20", "21"), "expected 21.0"),
    (SCRIPT.replace('  m{a="y"} 3\n', ""), "unexpected metric"),
    (SCRIPT + '  m{a="z"} 1\n', "not found"),
    (SCRIPT.replace("eval instant at 10m m", "eval instant at 10m m / on() m"), "error evaluating"),
    # eval_fail wants an error; eval_ordered wants the listed order
    (SCRIPT.replace("eval instant", "eval_fail instant"), "expected an error"),
    ("load 1m\n  m{a=\"1\"} 1\n  m{a=\"2\"} 2\n\neval_ordered instant at 0 sort_desc(m)\n  m{a=\"1\"} 1\n"
     "  m{a=\"2\"} 2\n", "position"),
    # a range eval compares every step; "_" is no sample there
    ("load 1m\n  m 1 2 3\n\neval range from 0 to 2m step 1m m\n  m 1 2 4\n", "expected 4.0"),
    ("load 1m\n  m 1 2 3\n\neval range from 0 to 2m step 1m m\n  m 1 _ 3\n", "expected None"),
])
def test_runner_reports_disagreement(script: str, why: str) -> None:
    [outcome] = run_script(script)
    assert not outcome.passed and why in outcome.error, outcome.error


def test_runner_passes_agreement_and_clears() -> None:
    script = SCRIPT + "\nclear\n\neval instant at 10m absent(m)\n  {} 1\n\neval instant at 0 1 + 1\n  2\n"
    outcomes = run_script(script)
    assert [o.passed for o in outcomes] == [True, True, True], _report(outcomes)
