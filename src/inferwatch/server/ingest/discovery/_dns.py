"""``dns_sd_configs``: targets from DNS records, looked up every ``refresh_interval``.

As Prometheus's DNS discovery: one group per name; SRV records give
``target:port`` (the final dot dropped), A/AAAA/MX records give ``address:port``
with the configured port; each target carries ``__meta_dns_name``,
``__meta_dns_srv_record_target``, ``__meta_dns_srv_record_port`` and
``__meta_dns_mx_record_target`` (empty where the record type has none). A name
that does not exist is an empty group; a lookup that fails (timeout, server
failure) keeps the name's last targets and says why. dnspython (extra ``dns``)
is imported only here.
"""

from __future__ import annotations

from typing import Any

from inferwatch._exceptions import ConfigError
from inferwatch.config import DnsSDConfig
from inferwatch.server.ingest.discovery._groups import TargetGroup

__all__ = ["DnsSource"]

_LIFETIME_S = 10.0


def _dnspython() -> Any:
    try:
        import dns.resolver
    except ImportError:
        raise ConfigError("dns_sd_configs needs dnspython: pip install 'inferwatch[dns]'") from None
    return dns


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class DnsSource:
    """One ``dns_sd_configs`` entry."""

    mechanism = "dns"

    def __init__(self, cfg: DnsSDConfig) -> None:
        self.cfg = cfg
        self._dns = _dnspython()  # at build time: a missing extra is a config error, not a loop's
        self._groups: dict[str, TargetGroup] = {}
        self._next: float | None = None
        self.error = ""

    def _resolver(self) -> Any:
        resolver = self._dns.resolver.Resolver(configure=not self.cfg.nameservers)
        if self.cfg.nameservers:
            resolver.nameservers = [ns.rpartition(":")[0].strip("[]") for ns in self.cfg.nameservers]
            resolver.port = int(self.cfg.nameservers[0].rpartition(":")[2])  # dnspython: one port for all
        return resolver

    def lookup(self, name: str) -> TargetGroup:
        """The group of ``name`` now; raises the resolver's error when the lookup fails."""
        answer = self._resolver().resolve(name, self.cfg.type, lifetime=_LIFETIME_S, raise_on_no_answer=False)
        targets, meta = [], []
        for rr in answer.rrset or ():
            srv_target = srv_port = mx_target = ""
            if self.cfg.type == "SRV":
                srv_target, srv_port = rr.target.to_text(), str(rr.port)
                address = _host_port(srv_target.rstrip("."), rr.port)
            elif self.cfg.type == "MX":
                mx_target = rr.exchange.to_text()
                address = _host_port(mx_target.rstrip("."), self.cfg.port)
            else:
                address = _host_port(rr.address, self.cfg.port)
            targets.append(address)
            meta.append({"__meta_dns_name": name, "__meta_dns_srv_record_target": srv_target,
                         "__meta_dns_srv_record_port": srv_port, "__meta_dns_mx_record_target": mx_target})
        return TargetGroup(name, tuple(targets), {}, tuple(meta))

    def poll(self, mono: float) -> list[TargetGroup] | None:
        """Every name's group when a lookup is due (a name that fails keeps its last), else ``None``."""
        if self._next is not None and mono < self._next:
            return None
        self._next = mono + self.cfg.refresh_interval
        errors = []
        for name in self.cfg.names:
            try:
                self._groups[name] = self.lookup(name)
            except self._dns.resolver.NXDOMAIN:
                self._groups[name] = TargetGroup(name, ())
            except self._dns.exception.DNSException as exc:
                errors.append(f"{name} ({self.cfg.type}): {type(exc).__name__}: {exc}")
        self.error = "; ".join(errors)
        return [self._groups[n] for n in self.cfg.names if n in self._groups]

    def wait_s(self, mono: float) -> float:
        """Seconds until the next lookup is due."""
        return 0.0 if self._next is None else max(self._next - mono, 0.0)
