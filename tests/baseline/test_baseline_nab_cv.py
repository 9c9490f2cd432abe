"""The leave-one-folder-out cross-validation ``make bench BENCH=nab`` prints (benchmarks/nab_table.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from inferwatch.baseline import NabFile

TABLE = Path(__file__).resolve().parents[2] / "benchmarks" / "nab_table.py"


@pytest.fixture(scope="module")
def nab_table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("nab_table_under_test", TABLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses resolve their module by name
    spec.loader.exec_module(mod)
    return mod


def _corpus(nab_table: ModuleType) -> object:
    """One 1000-row file per folder, a window at rows 600-650 except on artificialNoAnomaly."""
    names = [f"{f}/f.csv" for f in nab_table.FOLDERS]
    c = nab_table.Corpus(names)
    for n in names:
        c.times[n] = np.arange(1000, dtype=np.float64)
        c.values[n] = np.zeros(1000)
        c.files[n] = NabFile(1000, [] if n.startswith("artificialNoAnomaly") else [(600, 650)])
    return c


def test_each_folder_is_scored_with_the_setting_best_on_the_other_three(
        nab_table: ModuleType, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = _corpus(nab_table)
    names = corpus.names  # type: ignore[attr-defined]
    known, aws, art, quiet = names
    # "eager" detects every window but alerts on artificialNoAnomaly and falsely on aws;
    # "late" misses aws's window (a longer warm-up) and is silent elsewhere
    grid = {
        "eager": {known: [610], aws: [300, 610], art: [610], quiet: [500]},
        "late": {known: [610], aws: [], art: [610], quiet: []},
    }
    held = {f: (chosen, t) for f, chosen, t in nab_table.cross_validate(corpus, grid)}
    # held out aws, the other three favour the silent setting, which misses aws's window
    assert held["realAWSCloudwatch"][0] == "late"
    assert held["realAWSCloudwatch"][1].detected == 0
    # every other fold sees aws's window, worth more than one false alert: "eager"
    assert held["artificialNoAnomaly"][0] == "eager"
    assert held["artificialNoAnomaly"][1].alerts == 1
    out = capsys.readouterr().out
    assert "held-out folders pooled (standard / low_FP):" in out
    assert "worst held-out folder: realAWSCloudwatch" in out
    assert "alerts on artificialNoAnomaly held out: 1" in out
