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
