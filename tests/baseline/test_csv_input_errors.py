"""Issue 21 #8: bad CSV input to `baseline score` is one clear line naming file, line and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch.baseline import read_csv_series
from inferwatch.cli import main

HEAD = "timestamp,value\n"


@pytest.mark.parametrize(("rows", "wanted"), [
    ("2024-01-01 00:00:00,1\n2024-01-01 00:05:00,nan\n", ":3: value: not a finite number: 'nan'"),
    ("2024-01-01 00:00:00,inf\n", ":2: value: not a finite number: 'inf'"),
    ("2024-01-01 00:00:00,1\n2024-01-01 00:05:00,\n", ":3: value: missing value"),
    ("nan,1\n", ":2: timestamp: not a"),
    ("inf,1\n", ":2: timestamp: not a"),
])
def test_baseline_score_refuses_bad_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         rows: str, wanted: str) -> None:
    f = tmp_path / "s.csv"
    f.write_text(HEAD + rows)
    assert main(["baseline", "score", "--csv", str(f)]) != 0
    err = capsys.readouterr().err
    assert f"{f}{wanted}" in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_unordered_and_repeated_timestamps_are_counted(tmp_path: Path) -> None:
    # rule: kept (NAB's exports repeat a few timestamps) and counted, so the CLI can say so
    f = tmp_path / "s.csv"
    f.write_text(HEAD + "2024-01-01 00:10:00,1\n2024-01-01 00:05:00,2\n2024-01-01 00:10:00,3\n"
                 "2024-01-01 00:15:00,4\n")
    assert read_csv_series(f).unordered == 2
