"""Config reload: ``POST /-/reload`` (token-guarded) and ``SIGHUP``, as Prometheus does.

A reload re-reads the config, builds the whole next generation (targets, rules,
baselines, evaluator) and swaps it in; a bad config leaves the running one in
place and the error names the file and field. The store, the listen address and
the alerting pipeline are not rebuilt: changing them needs a restart, and the
reload says so.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import ConfigError, InferwatchError
from inferwatch.config import Config, Secret
from inferwatch.server._runtime import Server
from inferwatch.server._wiring import ServerComponents
from inferwatch.server.api._alerting_api import _write

__all__ = ["Reloader", "reload_route"]

log = logging.getLogger(__name__)

class Reloader:
    """Reloads ``server`` from ``load()``; one reload at a time."""

    def __init__(self, server: Server, load: Callable[[], Config],
                 build: Callable[[Config, ServerComponents], ServerComponents],
                 announce: Callable[[str], None] | None = None) -> None:
        """``announce`` gets one line per SIGHUP reload (``serve`` prints it to stderr)."""
        self._server, self._load, self._build = server, load, build
        self._announce = announce or (lambda line: None)
        self._lock = threading.Lock()

    def reload(self) -> str:
        """Reload now; returns what changed; ``InferwatchError`` (old config kept) when it fails."""
        with self._lock:
            try:
                new = self._load()
            except InferwatchError:
                self._server.stats.last_reload_ok = False
                raise
            old = self._server.config
            if new.storage != old.storage or new.server.data_dir != old.server.data_dir:
                self._server.stats.last_reload_ok = False
                raise ConfigError("storage and server.data_dir changes need a restart; config not reloaded")
            current = self._server.components
            self._server.reload(lambda: self._build(new, current))
            comps = self._server.components
            notes = [f"reloaded: {len(comps.scrape.targets())} targets, {len(comps.rules)} rules"]
            if new.alerting != old.alerting:
                notes.append("alerting changes take effect after a restart")
            if new.server.remote_write != old.server.remote_write:
                notes.append("server.remote_write changes take effect after a restart")
            if new.server.listen != old.server.listen:
                notes.append("server.listen changes take effect after a restart")
            if (new.server.query, new.server.http) != (old.server.query, old.server.http):
                notes.append("server.query and server.http changes take effect after a restart")
            log.info("config %s", "; ".join(notes))
            return "; ".join(notes)

    def on_signal(self, *_: object) -> None:
        """A ``SIGHUP`` handler: reload in a thread (never inside the signal frame), announce the outcome."""
        def run() -> None:
            try:
                self._announce(self.reload())
            except InferwatchError as exc:
                self._announce(f"config reload failed, the running config stays: {exc}")
            except Exception as exc:
                log.exception("config reload failed unexpectedly")
                self._announce(f"config reload failed, the running config stays: {exc.__class__.__name__}")
        threading.Thread(target=run, name="reload", daemon=True).start()


def _failed(why: str) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": "bad_data",
                         "error": f"config reload failed, the running config stays: {why}"},
                        status_code=400)


def reload_route(reloader: Reloader, token: Secret) -> Route:
    """``POST /-/reload``: 200 with what changed, 400 naming the config error (old config kept)."""
    async def post(request: Request) -> Response:
        try:
            text = await run_in_threadpool(reloader.reload)
        except InferwatchError as exc:
            return _failed(str(exc))
        except Exception as exc:  # a bug: logged, answered like a bad config, never a 500
            log.exception("config reload failed unexpectedly")
            return _failed(f"{exc.__class__.__name__}: {exc} (see the server log)")
        return JSONResponse({"status": "success", "data": text})

    return Route("/-/reload", _write(token, post), methods=["POST"])
