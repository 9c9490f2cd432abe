"""The README's streaming app (``chat_app``) grown by what its quality needs: ids, a swap, a judge, feedback.

``generate`` is a fake engine: no prefill, ``TOKENS`` tokens at once, the first naming the
model (the story is about quality, not latency, and runs on compressed time). Each
generation gets an id (the ``x-generation-id`` header), runs the model deployed on its
route (``POST /deploy`` swaps it), is refused when the prompt asks for it, and counts its
cost for its tenant (``x-tenant``). ``POST /batch`` runs the same engine on many prompts at
once (one request for the generations a compressed minute holds, so a loaded runner keeps
the pace). Every answer goes to the SDK's asynchronous judge (``monitor.judge``) at the
OpenAI-compatible URL in ``QUALITY_JUDGE_URL`` (none: not judged); users post their thumbs
to ``POST /feedback`` (hours later is fine: joined to the generation by id).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from inferwatch.sdk import JudgeConfig, Monitor, Price

TOKENS = 8

monitor = Monitor(service="chat", version="v1")
monitor.set_prices({"llama-3-8b": Price(1000.0, 1000.0), "llama-3-8b-q2": Price(1000.0, 1000.0)})
monitor.set_tenant_budgets({"acme": 7.0, "globex": 1000.0})
deployed = {"/v1/chat/completions": "llama-3-8b", "/v1/summaries": "llama-3-8b"}
if os.environ.get("QUALITY_JUDGE_URL"):
    # every answer judged (sample 1.0): the rule's evidence (200 scores before, 30 in 30 minutes) comes as
    # fast as with the test's own judge before; timeouts and backoff in real seconds, short: an outage of
    # the judge must not hold the queue past the story
    monitor.set_judge(JudgeConfig(base_url=os.environ["QUALITY_JUDGE_URL"], model="judge-7b",
                                  api_key="sk-e2e", sample=1.0, queue_size=100_000, rate_per_s=10_000.0,
                                  timeout_s=0.2, retries=1, backoff_s=0.05))


async def generate(prompt: str, model: str) -> AsyncIterator[str]:
    """The fake engine: every token at once, the first naming the model (what the fake judge scores)."""
    yield f"[{model}]"
    for i in range(1, TOKENS):
        yield f"tok{i}"


def completions(route: str):  # type: ignore[no-untyped-def]
    async def handler(request: Request) -> StreamingResponse:
        prompt = (await request.json())["prompt"]
        gid, tenant, model = uuid.uuid4().hex, request.headers.get("x-tenant", ""), deployed[route]

        async def stream() -> AsyncIterator[str]:
            with monitor.track_generation(route=route, model=model, input_tokens=len(prompt.split()),
                                          tenant=tenant, prompt_version="p1", generation_id=gid) as g:
                if "forbidden" in prompt:
                    g.flag("refused")
                    g.finish_reason = "content_filter"
                    yield "data: [refused]\n\n"
                    return
                answer = []
                async for token in generate(prompt, model):
                    g.tokens(1)
                    answer.append(token)
                    yield f"data: {token}\n\n"
                g.finish_reason = "stop"
            monitor.judge(prompt, " ".join(answer), generation_id=gid)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"x-generation-id": gid, "x-model": model})
    return handler


async def batch(request: Request) -> JSONResponse:
    """The engine on each of ``prompts`` for ``route``: [{generation_id, model, refused}]."""
    body, tenant = await request.json(), request.headers.get("x-tenant", "")
    route, out = body["route"], []
    for prompt in body["prompts"]:
        gid, model = uuid.uuid4().hex, deployed[route]
        with monitor.track_generation(route=route, model=model, input_tokens=len(prompt.split()),
                                      tenant=tenant, prompt_version="p1", generation_id=gid) as g:
            refused = "forbidden" in prompt
            if refused:
                g.flag("refused")
                g.finish_reason = "content_filter"
            else:
                answer = []
                async for token in generate(prompt, model):
                    g.tokens(1)
                    answer.append(token)
                g.finish_reason = "stop"
        if not refused:
            monitor.judge(prompt, " ".join(answer), generation_id=gid)
        out.append({"generation_id": gid, "model": model, "refused": refused})
    return JSONResponse(out)


async def deploy(request: Request) -> JSONResponse:
    body = await request.json()
    deployed[body["route"]] = body["model"]
    return JSONResponse(deployed)


async def feedback(request: Request) -> JSONResponse:
    thumbs = await request.json()
    for f in thumbs:
        monitor.record_feedback(positive=f["positive"], generation_id=f["generation_id"])
    return JSONResponse({"counted": len(thumbs)})


app = monitor.asgi(Starlette(routes=[
    Route("/v1/chat/completions", completions("/v1/chat/completions"), methods=["POST"]),
    Route("/v1/summaries", completions("/v1/summaries"), methods=["POST"]),
    Route("/batch", batch, methods=["POST"]),
    Route("/deploy", deploy, methods=["POST"]),
    Route("/feedback", feedback, methods=["POST"]),
    Route("/metrics", monitor.metrics_app())]))
