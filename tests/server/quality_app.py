"""The README's streaming app (``chat_app``) grown by what its quality needs: ids, a swap, a judge, feedback.

``generate`` is a fake engine: no prefill, ``TOKENS`` tokens at once (the story is about
quality, not latency, and runs on compressed time). Each generation gets an id (the
``x-generation-id`` header), runs the model deployed on its route (``POST /deploy``
swaps it), is refused when the prompt asks for it, and counts its cost for its tenant
(``x-tenant``). ``POST /batch`` runs the same engine on many prompts at once (one request
for the generations a compressed minute holds, so a loaded runner keeps the pace). A judge
posts its scores to ``POST /judge`` in batches, users their thumbs to ``POST /feedback``
(hours later is fine: both are joined to the generation by id).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from inferwatch.sdk import Monitor, Price

TOKENS = 8

monitor = Monitor(service="chat", version="v1")
monitor.set_prices({"llama-3-8b": Price(1000.0, 1000.0), "llama-3-8b-q2": Price(1000.0, 1000.0)})
monitor.set_tenant_budgets({"acme": 7.0, "globex": 1000.0})
deployed = {"/v1/chat/completions": "llama-3-8b", "/v1/summaries": "llama-3-8b"}


async def generate(prompt: str) -> AsyncIterator[str]:
    """The fake engine: every token at once."""
    for i in range(TOKENS):
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
                async for token in generate(prompt):
                    g.tokens(1)
                    yield f"data: {token}\n\n"
                g.finish_reason = "stop"

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
                async for _ in generate(prompt):
                    g.tokens(1)
                g.finish_reason = "stop"
        out.append({"generation_id": gid, "model": model, "refused": refused})
    return JSONResponse(out)


async def deploy(request: Request) -> JSONResponse:
    body = await request.json()
    deployed[body["route"]] = body["model"]
    return JSONResponse(deployed)


async def judge(request: Request) -> JSONResponse:
    scores = await request.json()
    for s in scores:
        monitor.record_score("judge", s["score"], generation_id=s["generation_id"])
    return JSONResponse({"scored": len(scores)})


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
    Route("/judge", judge, methods=["POST"]),
    Route("/feedback", feedback, methods=["POST"]),
    Route("/metrics", monitor.metrics_app())]))
