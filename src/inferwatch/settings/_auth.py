"""``server.auth``: who may read and write, beyond the one API token.

    server:
      auth:
        web_config_file: web.yml       # Prometheus's --web.config.file: TLS, basic_auth_users
        anonymous_reads: false         # default: open on a loopback listen address only
        tokens:                        # named bearer tokens, each with a role
          - {name: grafana, role: viewer, token_file: /etc/inferwatch/grafana.token}
          - {name: oncall-bot, role: responder, token_env: ONCALL_TOKEN}
        users: {alice: admin, bob: responder}   # roles of basic_auth_users (others: viewer)

Roles: ``viewer`` reads; ``responder`` also silences and acknowledges; ``ingest`` sends samples,
spans, alerts and outcomes (remote-write, OTLP, Alertmanager's webhook); ``admin`` does all of it
and reloads. ``server.api_token`` (and the generated one) is an admin token named ``api_token``.

>>> TokenSpec(name="g", role="viewer", token="t").role
'viewer'
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from inferwatch.settings._types import Duration, FrozenModel, Secret

__all__ = ["ROLES", "AuthConfig", "Role", "TokenSpec"]

Role = Literal["viewer", "responder", "ingest", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "responder", "ingest", "admin")


class TokenSpec(FrozenModel):
    """A named bearer token with a role; its value from ``token``, ``token_file`` or ``token_env``."""

    name: str = Field(pattern=r"^[A-Za-z0-9_.@-]{1,64}$", description="shown in the audit, never the value")
    role: Role
    token: Secret | None = None
    token_file: str | None = Field(None, description="a file holding the token (read at start and reload)")
    token_env: str | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
                                  description="an environment variable holding the token")

    @model_validator(mode="after")
    def _one_source(self) -> TokenSpec:
        given = [k for k in ("token", "token_file", "token_env") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"token {self.name!r}: give exactly one of token, token_file, token_env "
                             f"(got {', '.join(given) or 'none'})")
        return self


class AuthConfig(FrozenModel):
    """Authentication and roles of the HTTP API and the dashboard."""

    web_config_file: str | None = Field(
        None, description="Prometheus's web configuration file (TLS, basic_auth_users); "
        "--web.config.file overrides it")
    anonymous_reads: bool | None = Field(
        None, description="whether reads need no credentials; default: yes on a loopback listen "
        "address, no on any other")
    anonymous_metrics: bool | None = Field(
        None, description="whether GET /metrics needs no credentials; default: as anonymous_reads")
    tokens: tuple[TokenSpec, ...] = Field(default_factory=tuple, description="named tokens with roles")
    users: dict[str, Role] = Field(default_factory=dict, description="roles of the web config's users")
    default_user_role: Role = Field("viewer", description="the role of a web config user not in users")
    session_ttl: Duration = Field(12 * 3600.0, ge=60.0, le=30 * 86400.0,
                                  description="how long a dashboard sign-in lasts")

    @model_validator(mode="after")
    def _unique_names(self) -> AuthConfig:
        names = [t.name for t in self.tokens]
        dup = sorted({n for n in names if names.count(n) > 1 or n == "api_token"})
        if dup:
            raise ValueError(f"token names must be unique and not 'api_token' (server.api_token's): {dup}")
        return self
