"""Issue 38: benchmarks/RESULTS.md is one table per area; every earlier run lives on an area page.

The history (1,836 lines until 2026-12-04) moved verbatim to docs/benchmarks/<area>.md, which
the documentation site builds; RESULTS.md keeps the current figure of each measurement.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
PAGES = ROOT / "docs" / "benchmarks"
BEFORE_SPLIT = "1d20db9"  # main's commit whose RESULTS.md still held the whole history
COLUMNS = ["What", "inferwatch", "Peer", "Ratio", "Command", "Measured"]


def _tables() -> dict[str, list[list[str]]]:
    """Each ``## area`` of RESULTS.md and its table's body rows, split into cells."""
    tables: dict[str, list[list[str]]] = {}
    area = ""
    for line in RESULTS.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            area = line[3:]
            tables[area] = []
        elif area and line.startswith("| ") and not line.startswith("|---"):
            tables[area].append([cell.strip() for cell in line.strip("|").split(" | ")])
    return tables


def test_every_area_has_one_table_of_the_six_columns_with_a_command_that_exists() -> None:
    tables = _tables()
    assert len(tables) >= 10
    for area, rows in tables.items():
        assert rows and rows[0] == COLUMNS, f"{area}: the table's header must be {COLUMNS}"
        for row in rows[1:]:
            assert len(row) == len(COLUMNS), f"{area}: {row}"
            assert re.fullmatch(r"\d{4}-\d\d-\d\d, [0-9a-f]{7,40}", row[5]), f"{area}: date, commit: {row}"
            for script in re.findall(r"benchmarks/(\w+\.py)", row[4]):
                assert (ROOT / "benchmarks" / script).is_file(), f"{area}: {script} does not exist"


def test_every_area_links_its_history_page_and_every_page_is_linked_and_in_the_site() -> None:
    text = RESULTS.read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(\.\./docs/benchmarks/([\w-]+\.md)\)", text))
    # a 简体中文 twin (PAGE.zh.md) is the same page in the site
    pages = {p.name for p in PAGES.glob("*.md") if not p.name.endswith(".zh.md")} - {"index.md"}
    assert linked == pages
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    (bench,) = [entry["Benchmarks"] for entry in nav if "Benchmarks" in entry]
    in_site = {Path(next(iter(item.values()))).name for item in bench}
    assert in_site == pages | {"index.md"}


def test_no_line_of_the_history_was_lost_in_the_split() -> None:
    git = shutil.which("git")
    old = subprocess.run([git or "git", "show", f"{BEFORE_SPLIT}:benchmarks/RESULTS.md"], cwd=ROOT,
                         capture_output=True, text=True, check=False) if git else None
    if old is None or old.returncode != 0:
        pytest.skip(f"the commit {BEFORE_SPLIT} is not in this clone (shallow?)")
    now = {line for page in [RESULTS, *PAGES.glob("*.md")]
           for line in page.read_text(encoding="utf-8").splitlines()}
    lost = [line for line in old.stdout.splitlines() if line.strip() and line not in now]
    assert not lost, f"{len(lost)} lines of the old RESULTS.md are on no page, first: {lost[:3]}"


def _results_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_results", ROOT / "benchmarks" / "_results.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(area: str, what: str, ours: str = "1.0 s", peer: str | None = "Alertmanager 0.25: 2.0 s",
         ratio: str | None = "0.50") -> dict[str, str]:
    return {"area": area, "what": what, "ours": ours,
            "peer": peer if peer is not None else "(not installed on this machine)",
            "ratio": ratio or "–", "command": "python benchmarks/bench_storm.py --rounds 5"}


def test_make_bench_rewrites_a_row_in_place_adds_a_new_one_and_stamps_the_run() -> None:
    res = _results_module()
    text = RESULTS.read_text(encoding="utf-8")
    area = "Rules and notifications"
    what = _tables()[area][1][0]
    new, done = res.apply(text, [_row(area, what), _row(area, "A row nobody measured before")],
                          "2031-01-02, abcdef0")
    assert done == [f"updated  {area}: {what}", f"added    {area}: A row nobody measured before"]
    rows = {r[0]: r for r in _parse(new)[area][1:]}
    assert rows[what][1:] == ["1.0 s", "Alertmanager 0.25: 2.0 s", "0.50",
                              "`python benchmarks/bench_storm.py --rounds 5`", "2031-01-02, abcdef0"]
    assert rows["A row nobody measured before"][5] == "2031-01-02, abcdef0"
    # every other row, in every area, is untouched
    before = _tables()
    for name, body in _parse(new).items():
        assert [r for r in body if r[0] not in (what, "A row nobody measured before")] == \
            [r for r in before[name] if r[0] != what]
    once = res.stamp(new, "2031-01-02, commit abcdef0, this machine")
    twice = res.stamp(once, "2031-01-03, commit 1234567, this machine")
    assert twice.count("Last regenerated by `make bench`") == 1
    assert "2031-01-03, commit 1234567" in twice and "2031-01-02, commit" not in twice
    stamped = "Last regenerated by `make bench`" in new  # RESULTS.md carries the last run's stamp or none
    assert len(twice.splitlines()) == len(once.splitlines()) == len(new.splitlines()) + (0 if stamped else 2)


def test_a_row_for_an_area_that_does_not_exist_changes_nothing_and_says_which() -> None:
    res = _results_module()
    with pytest.raises(ValueError, match="no area '## Rules and notificatons'"):
        res.apply(RESULTS.read_text(encoding="utf-8"), [_row("Rules and notificatons", "x")],
                  "2031-01-02, abc1234")


def test_a_missing_peer_says_so_and_gives_no_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    res = _results_module()
    sink = tmp_path / "rows.jsonl"
    monkeypatch.setenv(res.ENV, str(sink))
    res.record("Rules and notifications", "x", "1.0 s", None, "0.5", note="3 rounds")
    (row,) = res.load(sink)
    assert row["ours"] == "1.0 s (3 rounds)"
    assert row["peer"] == "(not installed on this machine)" and row["ratio"] == "–"


def test_every_area_a_benchmark_records_into_exists() -> None:
    areas = set(_tables())
    used = {m for f in (ROOT / "benchmarks").glob("bench_*.py")
            for m in re.findall(r'_results\.record\(\s*"([^"]+)"', f.read_text(encoding="utf-8"))}
    assert used and used <= areas, used - areas


def _parse(text: str) -> dict[str, list[list[str]]]:
    tables: dict[str, list[list[str]]] = {}
    area = ""
    for line in text.splitlines():
        if line.startswith("## "):
            area = line[3:]
            tables[area] = []
        elif area and line.startswith("| ") and not line.startswith("|---"):
            tables[area].append([cell.strip() for cell in line.strip("|").split(" | ")])
    return tables


def test_run_hands_options_after_a_double_dash_to_the_one_benchmark_named() -> None:
    # rule (issue 46): the 15-minute mixed-load run that records the RSS row goes through run.py too
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    assert run.split_options(["--results", "mixed_load", "--", "--minutes", "13"]) == (
        ["--results", "mixed_load"], ["--minutes", "13"])
    assert run.split_options(["storm"]) == (["storm"], [])
    assert run.main(["storm", "rules", "--", "--minutes", "13"]) == 2  # options for which one?
