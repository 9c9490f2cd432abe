"""Issue 21 #8: bad CSV input to `drift` is one clear line naming file, row and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferwatch.cli import main

REF = "a,b\n1,2\n2,3\n3,4\n4,5\n5,6\n"


@pytest.mark.parametrize(("ref", "cur", "wanted"), [
    (REF, "a,b\n1,2\n2,3\n3,inf\n", "cur.csv: row 3 (line 4), column 'b': inf is not a finite number"),
    (REF, "a,b\n1,2\n", "cur.csv: 1 data row; drift needs at least 2"),
    ("a\n1\n2\n3\n", REF, "cur.csv: column 'b' not in the reference"),
    (REF, b"\x7fELF\x02\x01\x01\x00\x00\x00binary", "cur.csv: not a CSV text file (it holds binary data)"),
])
def test_drift_refuses_bad_input_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             ref: str, cur: str | bytes, wanted: str) -> None:
    (tmp_path / "ref.csv").write_text(ref)
    cur_path = tmp_path / "cur.csv"
    if isinstance(cur, bytes):
        cur_path.write_bytes(cur)
    else:
        cur_path.write_text(cur)
    assert main(["drift", "-r", str(tmp_path / "ref.csv"), "--current", str(cur_path)]) != 0
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_missing_values_are_a_counted_skip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "ref.csv").write_text(REF)
    (tmp_path / "cur.csv").write_text("a,b\n1,2\n2,\n3,nan\n4,5\n")
    assert main(["drift", "-r", str(tmp_path / "ref.csv"), "--current", str(tmp_path / "cur.csv")]) == 0
    out = capsys.readouterr()
    assert "cur.csv: 2 missing values (empty or NaN) skipped" in out.err
    assert "wasserstein" in out.out and " nan " not in out.out
