"""Config reload: ``POST /-/reload`` (token-guarded) and ``SIGHUP``, as Prometheus does.

A reload re-reads the config, builds the whole next generation (targets, rules,
baselines, evaluator, and the alerting pipeline's routes, receivers and actions)
and swaps it in; a bad config leaves the running one in place and the error names
the file and field. What it does with each config section is one table
(``_reload_policy.SECTIONS``): rebuilt, or named in the reply as kept until a restart.
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
from inferwatch.config import AlertingConfig, Config, Secret
from inferwatch.server._components import ServerComponents
from inferwatch.server._reload_policy import reload_notes
from inferwatch.server._runtime import Server
from inferwatch.server.api import write_guard

__all__ = ["Reloader", "reload_route"]

log = logging.getLogger(__name__)

class Reloader:
    """Reloads ``server`` from ``load()``; one reload at a time."""

    def __init__(self, server: Server, load: Callable[[], Config],
                 build: Callable[[Config, ServerComponents], ServerComponents],
                 announce: Callable[[str], None] | None = None,
                 alerting: Callable[[AlertingConfig], None] | None = None,
                 token: Callable[[Config], str] | None = None,
                 auth: Callable[[Config], Callable[[], str]] | None = None) -> None:
        """``announce`` gets one line per SIGHUP reload (``serve`` prints it to stderr); ``alerting``
        applies a changed ``alerting`` section (``Pipeline.reconfigure``; raises on a bad one);
        ``token`` applies a changed ``server.api_token`` and says how it went; ``auth`` checks
        ``server.auth`` and the web config file (raising before anything changes) and returns
        what applies them (re-read on every reload: the file may change on its own)."""
        self._server, self._load, self._build, self._alerting = server, load, build, alerting
        self._token, self._auth = token, auth
        self._announce = announce or (lambda line: None)
        self._lock = threading.Lock()

    def reload(self, force: bool = False) -> str:
        """Reload now; returns what changed; ``InferwatchError`` (old config kept) when it fails.

        A file that sets nothing but defaults (emptied by mistake) replacing one that set something
        is refused unless ``force`` (``POST /-/reload?force=true``).
        """
        with self._lock:
            try:
                new = self._load()
                old = self._server.config
                _check_restart_only(new, old)
                if not force and defaults_only(new) and not defaults_only(old):
                    raise ConfigError(
                        "the new config sets nothing but defaults (an empty file?): every rule, target, "
                        "receiver and route of the running one would go; config not reloaded (to apply it "
                        "anyway: POST /-/reload?force=true)")
                apply_auth = self._auth(new) if self._auth is not None else None
            except InferwatchError:
                self._server.stats.last_reload_ok = False
                raise
            self._server.reload(lambda: self._next(new, old))
            comps = self._server.components
            notes = [f"reloaded: {len(comps.scrape.targets())} targets, {len(comps.rules)} rules"]
            if new.server.api_token != old.server.api_token:
                notes.append(self._token(new) if self._token is not None
                             else "server.api_token changes take effect after a restart")
            if apply_auth is not None:
                notes.append(apply_auth())
            if new.alerting != old.alerting and self._alerting is None:
                notes.append("alerting changes take effect after a restart")
            elif new.alerting != old.alerting:
                notes.append("alerting reloaded")
            notes += reload_notes(new, old)  # every section kept as it was is named
            log.info("config %s", "; ".join(notes))
            return "; ".join(notes)

    def _next(self, new: Config, old: Config) -> ServerComponents:
        """The next generation, and the pipeline reconfigured; on any failure neither changes."""
        current = self._server.components
        built = self._build(new, current)
        if self._alerting is not None and new.alerting != old.alerting:
            try:
                self._alerting(new.alerting)
            except BaseException:
                built.retire(keep_store=built.store is current.store)
                raise
        return built

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


def defaults_only(config: Config) -> bool:
    """Whether ``config`` sets nothing but defaults (``server.data_dir`` aside: it may come from the env)."""
    def shown(c: Config) -> dict[str, object]:
        dump = c.model_dump(mode="json")
        dump["server"].pop("data_dir", None)
        return dump
    return shown(config) == shown(Config())


def _check_restart_only(new: Config, old: Config) -> None:
    if new.storage != old.storage or new.server.data_dir != old.server.data_dir:
        raise ConfigError("storage and server.data_dir changes need a restart; config not reloaded")


def _failed(why: str) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": "bad_data",
                         "error": f"config reload failed, the running config stays: {why}"},
                        status_code=400)


def reload_route(reloader: Reloader, token: Secret) -> Route:
    """``POST /-/reload``: 200 with what changed, 400 naming the config error (old config kept)."""
    async def post(request: Request) -> Response:
        force = request.query_params.get("force", "").lower() in ("1", "true")
        try:
            text = await run_in_threadpool(reloader.reload, force)
        except InferwatchError as exc:
            return _failed(str(exc))
        except Exception as exc:  # a bug: logged, answered like a bad config, never a 500
            log.exception("config reload failed unexpectedly")
            return _failed(f"{exc.__class__.__name__}: {exc} (see the server log)")
        return JSONResponse({"status": "success", "data": text})

    return Route("/-/reload", write_guard(token, post), methods=["POST"])
