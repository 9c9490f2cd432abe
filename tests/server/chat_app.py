"""The README's "A streaming LLM endpoint", verbatim but for the engine stand-in (served by uvicorn in tests).

``generate`` is the engine: 200 ms prefill, then 30 ms a token (``CHAT_TOKENS`` tokens,
default 30: a 1.1 s stream, over both request-latency thresholds of the default pack).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from inferwatch.sdk import Monitor

TOKENS = int(os.environ.get("CHAT_TOKENS", "30"))

monitor = Monitor(service="chat", model="llama-3-8b", version="v1")


async def generate(prompt: str) -> AsyncIterator[str]:
    """The engine stand-in: prefill, then one token every 30 ms."""
    await asyncio.sleep(0.2)
    for i in range(TOKENS):
        if i:
            await asyncio.sleep(0.03)
        yield f"tok{i}"


async def chat(request: Request) -> StreamingResponse:
    prompt = (await request.json())["prompt"]

    async def stream() -> AsyncIterator[str]:
        with monitor.track_generation(route="/v1/chat/completions", input_tokens=len(prompt.split())) as g:
            async for token in generate(prompt):     # the engine: 200 ms prefill, then 30 ms a token
                g.tokens(1)                          # per token: an int add
                yield f"data: {token}\n\n"
            g.finish_reason = "stop"

    return StreamingResponse(stream(), media_type="text/event-stream")

app = monitor.asgi(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                     Route("/metrics", monitor.metrics_app())]))
