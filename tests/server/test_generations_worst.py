"""The worst-scored generations: the SDK's score exemplars, the server's log of them, its API and the CLI.

In process: the log keeps a (generation, score name) once, the newest ``max_rows``, and survives
reopening; the exemplar carries the generation and trace ids. Then one real ``serve`` scraping an
instrumented app: ``GET /api/v1/generations/worst`` lowest first, ``inferwatch generations worst`` in
English and Chinese, a bad parameter a 400 naming it, and the rows in the data directory's file.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from inferwatch.cli import main
from inferwatch.model import Labels, SimulatedClock
from inferwatch.sdk import Monitor
from inferwatch.server.api import GenerationLog
from inferwatch.store import ExemplarStore

from ._proc import serve

ROUTE = "/v1/chat/completions"


def _series(name: str = "judge", le: str = "0.3", **labels: str) -> Labels:
    base = {"service": "chat", "route": ROUTE, "model": "m", "version": "v1", "prompt_version": "p1",
            "tenant": "acme", **labels}
    return Labels.of("inferwatch_generation_score_bucket", name=name, le=le, **base)


def test_the_log_keeps_each_scored_generation_once_the_newest_and_across_a_restart(tmp_path: Path) -> None:
    log = GenerationLog.in_dir(tmp_path)
    store = ExemplarStore()
    store.add(_series(le="0.3"), {"generation_id": "g1", "trace_id": "ab" * 16}, 0.25, 100.0)
    store.add(_series(le="0.9"), {"generation_id": "g2"}, 0.85, 101.0)
    store.add(_series(le="0.9", route="/v1/summaries"), {"generation_id": "g3"}, 0.8, 102.0)
    latency = Labels.of("inferwatch_request_duration_seconds_bucket", le="0.5")
    store.add(latency, {"trace_id": "cd" * 16}, 0.4, 1.0)  # not a score: not harvested
    assert log.harvest(store) == 3 and log.harvest(store) == 0  # a re-seen exemplar is not written again
    worst = log.worst("judge", since=0.0)
    assert [(g.generation_id, g.score) for g in worst] == [("g1", 0.25), ("g3", 0.8), ("g2", 0.85)]
    assert worst[0].to_json("http://h:9464/")["trace_url"] == f"http://h:9464/api/v1/traces/{'ab' * 16}"
    assert worst[1].to_json("http://h")["trace_url"] == ""
    assert [g.generation_id for g in log.worst("judge", since=0.0, route="/v1/summaries")] == ["g3"]
    assert log.worst("judge", since=101.5) == [worst[1]] and log.worst("faithfulness", since=0.0) == []
    log.close()
    again = GenerationLog(tmp_path / "generations.sqlite", max_rows=2)  # reopened: still there, now bounded
    assert len(again) == 3
    again.add([(_series(le="0.6"), {"generation_id": "g4"}, 0.55, 200.0)])
    assert len(again) == 2 and {g.generation_id for g in again.worst("judge", since=0.0)} == {"g3", "g4"}
    again.close()


def test_the_round_hook_only_picks_rows_a_writer_thread_stores_them(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    log = GenerationLog.in_dir(tmp_path)
    writers: list[str] = []
    add = log.add
    monkeypatch.setattr(log, "add", lambda rows: writers.append(threading.current_thread().name) or add(rows))
    store = ExemplarStore()
    store.add(_series(le="0.3"), {"generation_id": "g1"}, 0.25, 100.0)
    hook = log.round_hook(lambda: store)
    hook(100.0)
    hook(105.0)  # nothing new: nothing handed over
    store.add(_series(le="0.9"), {"generation_id": "g2"}, 0.85, 106.0)
    hook(110.0)
    assert log.flush(timeout=60)
    assert [g.generation_id for g in log.worst("judge", since=0.0)] == ["g1", "g2"]
    assert writers == ["inferwatch-generations"] * 2  # never the round's (this) thread
    store.add(_series(le="0.6"), {"generation_id": "g3"}, 0.5, 120.0)
    hook(120.0)
    log.close()  # stores what the writer still holds
    again = GenerationLog.in_dir(tmp_path)
    assert len(again) == 3
    again.close()


def test_a_score_with_a_generation_id_is_its_buckets_exemplar() -> None:
    m = Monitor(service="chat", version="v1", clock=SimulatedClock(1000.0))
    try:
        with m.track_generation(route=ROUTE, model="m", generation_id="gen-1") as g:
            g.tokens(1)
        m.record_score("judge", 0.25, generation_id="gen-1")
        m.record_score("judge", 0.95)  # no id: no exemplar
        from prometheus_client.openmetrics.exposition import generate_latest

        m.flush()
        text = generate_latest(m.registry).decode()
        marked = [line for line in text.splitlines()
                  if line.startswith("inferwatch_generation_score_bucket") and "#" in line]
        assert len(marked) == 1 and 'le="0.3"' in marked[0] and '# {generation_id="gen-1"} 0.25' in marked[0]
    finally:
        m.close()


def _cli(tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, language: str, *args: str) -> str:
    cfg = tmp_path / f"cli-{language}.yml"
    cfg.write_text(f"alerting:\n  language: {language}\n  timezone: Asia/Shanghai\n")
    capsys.readouterr()
    assert main(["generations", "worst", "--config", str(cfg), "--url", url, *args]) == 0
    return capsys.readouterr().out


def _worst(client: httpx.Client, want: int, within_s: float = 60.0) -> list[dict[str, Any]]:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        found = client.get("/api/v1/generations/worst", params={"since": "1h"}).json()["data"]["generations"]
        if len(found) >= want:
            return list(found)
        client.get("/-/healthy")  # a round trip: the scrape and the round run meanwhile
    raise AssertionError(f"fewer than {want} scored generations within {within_s:g} s")


@pytest.mark.slow
def test_serve_lists_the_worst_scored_generations_and_keeps_them_in_its_data_dir(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    app = Monitor(service="chat", version="v1")
    metrics = app.serve_metrics()
    try:
        for i, score in enumerate((0.85, 0.05, 0.45, 0.65, 0.25)):  # one a bucket: each its exemplar
            with app.track_generation(route=ROUTE, model="llama-3-8b", prompt_version="p7",
                                      generation_id=f"gen-{i}") as g:
                g.tokens(3)
            app.record_score("judge", score, generation_id=f"gen-{i}")
        cfg = (f"server: {{data_dir: '{tmp_path / 'data'}', evaluation_interval: 1s}}\n"
               f"scrape: {{targets: [{{job: chat, url: 'http://127.0.0.1:{metrics.port}/metrics', "
               "interval: 1s}]}\n")
        with serve(cfg, tmp_path) as served, httpx.Client(base_url=served.url, timeout=60) as client:
            found = _worst(client, 5)
            assert [g["generation_id"] for g in found] == ["gen-1", "gen-4", "gen-2", "gen-3", "gen-0"]
            first = found[0]
            assert (first["route"], first["model"], first["prompt_version"]) == (ROUTE, "llama-3-8b", "p7")
            assert first["score"] == 0.05 and first["trace_id"] == first["trace_url"] == ""
            bad = client.get("/api/v1/generations/worst", params={"limit": "0"})
            assert bad.status_code == 400 and '"limit"' in bad.json()["error"]
            english = _cli(tmp_path, capsys, served.url, "en", "--limit", "2").splitlines()
            assert english[0].startswith("TIME") and "SCORE" in english[0] and len(english) == 3
            assert "gen-1" in english[1] and " 0.050 " in english[1] and "CST" in english[1]
            chinese = _cli(tmp_path, capsys, served.url, "zh-CN", "--route", "/none").splitlines()
            assert chinese == ["自 1h 以来没有评分为 'judge' 的生成（record_score 带上 generation_id= 时 SDK "
                               "会把生成 ID 附在分数上）"]
            assert "分数" in _cli(tmp_path, capsys, served.url, "zh-CN").splitlines()[0]
        # kept in the data directory (reopening the file keeps them: the first test)
        kept = GenerationLog(next((tmp_path / "data").rglob("generations.sqlite")))
        assert [g.generation_id for g in kept.worst("judge", since=0.0)][:2] == ["gen-1", "gen-4"]
        kept.close()
    finally:
        metrics.close()
        app.close()
