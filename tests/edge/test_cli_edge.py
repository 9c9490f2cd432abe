"""`inferwatch edge` and `edge simulate` on the command line; the agent starts light."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inferwatch.cli._main import main
from inferwatch.edge import parse_agent_config

from .helpers import clean_env, stop

NAB_FILE = "nab/realKnownCause/machine_temperature_system_failure.csv"


def test_agent_imports_no_numpy_scipy_or_pydantic(tmp_path: Path) -> None:
    # rule: the CLI path of `inferwatch edge --config` (parser, config, agent, one round of the
    # host collector, the spool) loads none of the heavy libraries
    cfg = tmp_path / "edge.yml"
    cfg.write_text("device: cam-1\nspool: {path: spool.sqlite}\nsources: [{type: host}, {type: gpu}]\n")
    code = (
        "import sys\n"
        "from inferwatch.cli._main import build_parser\n"
        "build_parser()\n"
        "from pathlib import Path\n"
        "from inferwatch.edge import Agent, load_agent_config\n"
        f"agent = Agent(load_agent_config(Path({str(cfg)!r})))\n"
        "assert agent.collect_once() > 0\n"
        "agent.close()\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'pydantic', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=clean_env(),
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stderr


HEAVY = ("numpy", "scipy", "pydantic", "pandas", "httpx", "psutil", "_ssl", "_hashlib", "http.server", "uuid",
         "starlette", "cramjam")  # cramjam: the server's snappy; the agent keeps its pure-Python codec


def test_the_running_agent_process_loads_nothing_heavy(tmp_path: Path) -> None:
    # rule: the real process (`python -m inferwatch edge`, through main(): logging setup and all)
    # of an agent that scrapes and uploads over plain HTTP imports none of HEAVY: pydantic came
    # in through the CLI's log redaction, ssl through http.client, psutil through inferwatch.collect
    # (each several MiB of the 30 MiB budget), OpenSSL's libcrypto through hashlib; -X importtime lists
    # every module the process imports
    cfg = tmp_path / "edge.yml"
    cfg.write_text("device: cam-1\nspool: {path: spool.sqlite}\n"
                   "upload: {url: 'http://127.0.0.1:9', token: t}\n"
                   "sources: [{type: scrape, url: 'http://127.0.0.1:9/metrics'}]\n")
    argv = [sys.executable, "-X", "importtime", "-m", "inferwatch", "edge", "--config", str(cfg)]
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=clean_env())
    assert proc.stderr is not None
    lines = []
    try:
        for line in proc.stderr:  # bounded: the agent prints its start line after its imports
            lines.append(line)
            if line.startswith("inferwatch edge: device"):
                break
    finally:
        stop(proc)
    imported = {line.rsplit("|", 1)[1].strip() for line in lines if line.startswith("import time:")}
    assert "inferwatch.edge._agent" in imported and lines[-1].startswith("inferwatch edge: device")
    assert sorted(imported & set(HEAVY)) == []


def test_simulate_on_a_real_nab_file(shared_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the numbers README.md shows: one NAB point per 15 s collection, default deadband and heartbeat
    csv = str(shared_data / NAB_FILE)
    assert main(["edge", "simulate", "--csv", csv, "--interval", "15s", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == {"points": 22695, "sent": 562, "bytes_naive": got["bytes_naive"],
                   "bytes_sent": got["bytes_sent"], "reduction": got["reduction"],
                   "max_rel_error": got["max_rel_error"], "max_abs_error": got["max_abs_error"],
                   "max_rate_rel_error": 0.0, "max_quantile_rel_error": 0.0, "max_quantile_rank_error": 0.0,
                   "by_type": {"gauge": got["by_type"]["gauge"]},
                   "bytes_remote_write": got["bytes_remote_write"],
                   "reduction_vs_remote_write": got["reduction_vs_remote_write"]}
    assert got["max_rel_error"] <= 0.1
    assert got["reduction"] == 1 - got["bytes_sent"] / got["bytes_naive"]


@pytest.mark.parametrize(("argv", "error"), [
    (["edge", "simulate", "--csv", "/no/such.csv"], "/no/such.csv: cannot read (No such file or directory)"),
    (["edge", "simulate", "--csv", "{f}", "--value-col", "v"], "{f}: no column 'v' (columns: timestamp"),
    (["edge", "simulate", "--csv", "{f}", "--heartbeat", "soon"], "--heartbeat 'soon': not a duration"),
    (["edge", "simulate", "--csv", "{f}", "--deadband", "-1"],
     "--deadband/--floor/--heartbeat-max: deadband must be in"),
    (["edge"], "--config FILE is required to run the agent"),
    (["edge", "simulate", "--openmetrics", "{om}"], "{om}:2: a sample without a timestamp"),
    (["edge", "simulate", "--openmetrics", "{f}"], "{f}: line 1: expected {{labels}} after 'timestamp'"),
    (["edge", "simulate", "--openmetrics", "{om}", "--interval", "15s"], "--interval: only with --csv"),
    (["edge", "--config", "{cfg}"], "{cfg}: upload.batch_size: expected an integer from 1 to 100000, got 0"),
])
def test_bad_input_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                          error: str) -> None:
    f, cfg, om = tmp_path / "s.csv", tmp_path / "edge.yml", tmp_path / "d.om"
    f.write_text("timestamp,value\n2024-01-01 00:00:00,1\n2024-01-01 00:05:00,bad\n")
    om.write_text("# TYPE x gauge\nx 1\n# EOF\n")
    cfg.write_text("device: cam-1\nupload: {batch_size: 0}\n")
    args = [a.format(f=f, cfg=cfg, om=om) for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("inferwatch edge: error: " + error.format(f=f, cfg=cfg, om=om)), err
    assert "Traceback" not in err


def test_bad_csv_row_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "s.csv"
    f.write_text("timestamp,value\n2024-01-01 00:00:00,1\n2024-01-01 00:05:00,bad\n")
    assert main(["edge", "simulate", "--csv", str(f)]) == 2
    assert f"{f}:3: column 'value': 'bad' is not a number" in capsys.readouterr().err


@pytest.mark.parametrize(("raw", "error"), [
    ({}, "edge.yml: device: expected a non-empty string"),
    ({"device": "d", "sources": [{"type": "camera"}]}, "edge.yml: sources[0].type: expected one of host"),
    ({"device": "d", "deadband": {"heartbeat": "soon"}}, "edge.yml: deadband.heartbeat: expected a duration"),
    ({"device": "d", "upload": {"url": "ftp://x"}}, "edge.yml: upload.url: expected an http:// or https://"),
    ({"device": "d", "spool": {"max_bytes": 10}}, "edge.yml: spool.max_bytes: expected an integer of bytes"),
    ({"device": "d", "extra": 1}, "edge.yml: extra: unknown field"),
])
def test_config_errors_name_file_field_and_value(raw: dict[str, object], error: str) -> None:
    from inferwatch import ConfigError

    with pytest.raises(ConfigError) as exc:
        parse_agent_config(raw, source="edge.yml")
    assert str(exc.value).startswith(error), str(exc.value)


def test_the_token_is_never_printed(tmp_path: Path) -> None:
    cfg = parse_agent_config({"device": "d", "upload": {"token": "s3cret-token"}}, source="edge.yml")
    assert "s3cret-token" not in repr(cfg)


def _device(path: Path, minutes: int = 30) -> None:
    """A small device as OpenMetrics text: a gauge, a counter by code, a histogram (3 buckets)."""
    import gzip
    import random

    rng = random.Random(3)
    t0, lines = 1_796_000_000, []
    temp, ok, err, buckets, total = 40.0, 0, 0, [0, 0, 0], 0.0
    rows: dict[str, list[str]] = {}
    for k in range(minutes * 4):
        t = t0 + 15 * k
        temp += rng.uniform(-0.3, 0.3)
        n = rng.randint(60, 75)
        bad = 1 if rng.random() < 0.5 else 0
        ok, err = ok + n - bad, err + bad
        for _ in range(n):
            d = rng.lognormvariate(-3, 0.5)
            total += d
            for i, le in enumerate((0.05, 0.1)):
                buckets[i] += d <= le
            buckets[2] += 1
        rows.setdefault("temp", []).append(f"temp_celsius {temp:.2f} {t}")
        rows.setdefault("req", []).append(f'req_total{{code="200"}} {ok} {t}')
        rows.setdefault("req5", []).append(f'req_total{{code="500"}} {err} {t}')
        for i, le in enumerate(("0.05", "0.1", "+Inf")):
            rows.setdefault(le, []).append(f'lat_seconds_bucket{{le="{le}"}} {buckets[i]} {t}')
        rows.setdefault("sum", []).append(f"lat_seconds_sum {total:.4f} {t}")
        rows.setdefault("count", []).append(f"lat_seconds_count {buckets[2]} {t}")
    lines = ["# TYPE temp_celsius gauge", *rows["temp"], "# TYPE req counter", *rows["req"], *rows["req5"],
             "# TYPE lat_seconds histogram", *rows["0.05"], *rows["0.1"], *rows["+Inf"], *rows["sum"],
             *rows["count"], "# EOF"]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))


def test_simulate_openmetrics_replays_a_device_by_type(tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # a whole device: every type counted apart, errors within the band, counters' 5-minute rates too
    om = tmp_path / "device.om.gz"
    _device(om)
    assert main(["edge", "simulate", "--openmetrics", str(om), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert sorted(got["by_type"]) == ["counter", "gauge", "histogram"]
    assert got["points"] == 120 * 8 and got["by_type"]["histogram"]["series"] == 5
    assert sum(t["points"] for t in got["by_type"].values()) == got["points"]
    assert sum(t["sent"] for t in got["by_type"].values()) == got["sent"]
    assert got["max_rel_error"] <= 0.1 and got["max_rate_rel_error"] <= 0.1 + 1e-9
    hist = got["by_type"]["histogram"]  # its quantiles over 5-minute windows, by value and by rank
    assert hist["max_quantile_rank_error"] == got["max_quantile_rank_error"] <= 0.05
    assert hist["max_quantile_rel_error"] == got["max_quantile_rel_error"] >= 0.0
    assert 0 < got["sent"] < got["points"]
    assert got["bytes_sent"] < got["bytes_naive"] < got["bytes_remote_write"]
    assert got["reduction_vs_remote_write"] == 1 - got["bytes_sent"] / got["bytes_remote_write"]
    assert main(["edge", "simulate", "--openmetrics", str(om)]) == 0
    table = capsys.readouterr().out
    assert "counters' 5-minute rate" in table and "  histogram " in table
    assert "histograms' quantiles" in table and "max 5m q" in table
