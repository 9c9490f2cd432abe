"""``dns_sd_configs`` against a small DNS server on loopback (UDP, answered with dnspython)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

import dns.message
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import pytest

from inferwatch.config import DnsSDConfig, ScrapeJob
from inferwatch.model import SimulatedClock
from inferwatch.server.ingest import Discovery


@dataclass
class FakeDns:
    """Answers from ``records`` ({(name, type): [rdata text]}); a name it lacks is NXDOMAIN."""

    records: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    servfail: bool = False
    address: str = ""

    def answer(self, wire: bytes) -> bytes:
        query = dns.message.from_wire(wire)
        resp = dns.message.make_response(query)
        q = query.question[0]
        name, rtype = q.name.to_text(), dns.rdatatype.to_text(q.rdtype)
        if self.servfail:
            resp.set_rcode(dns.rcode.SERVFAIL)
        elif (name, rtype) in self.records:
            resp.answer.append(dns.rrset.from_text_list(q.name, 30, dns.rdataclass.IN, rtype,
                                                        self.records[(name, rtype)]))
        elif not any(n == name for n, _ in self.records):
            resp.set_rcode(dns.rcode.NXDOMAIN)
        return bytes(resp.to_wire())


@pytest.fixture
def fake_dns() -> Iterator[FakeDns]:
    state = FakeDns()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    sock.settimeout(0.2)
    state.address = f"127.0.0.1:{sock.getsockname()[1]}"
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                data, peer = sock.recvfrom(4096)
            except TimeoutError:
                continue
            sock.sendto(state.answer(data), peer)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    yield state
    stop.set()
    th.join(10)
    sock.close()


def _found(job: ScrapeJob, clock: SimulatedClock) -> tuple[Discovery, dict[str, list[dict[str, str]]]]:
    seen: dict[str, list[dict[str, str]]] = {}
    discovery = Discovery([job], clock=clock)
    discovery.refresh(lambda name, found: seen.__setitem__(name, found))
    return discovery, seen


def test_srv_records_give_target_and_port_with_prometheus_meta_labels(fake_dns: FakeDns) -> None:
    fake_dns.records[("_metrics._tcp.example.", "SRV")] = ["0 0 9100 a.example.", "0 0 9200 b.example."]
    job = ScrapeJob(job="j", dns_sd_configs=[DnsSDConfig(names=["_metrics._tcp.example"],
                                                         nameservers=[fake_dns.address])])
    clock = SimulatedClock(0)
    discovery, seen = _found(job, clock)
    assert sorted(seen["j"], key=lambda t: t["__address__"]) == [
        {"__address__": "a.example:9100", "__meta_dns_name": "_metrics._tcp.example",
         "__meta_dns_srv_record_target": "a.example.", "__meta_dns_srv_record_port": "9100",
         "__meta_dns_mx_record_target": ""},
        {"__address__": "b.example:9200", "__meta_dns_name": "_metrics._tcp.example",
         "__meta_dns_srv_record_target": "b.example.", "__meta_dns_srv_record_port": "9200",
         "__meta_dns_mx_record_target": ""},
    ]
    # a failing server keeps the last targets and says why; not due yet, nothing is asked
    fake_dns.servfail = True
    clock.advance(30)
    discovery.refresh(lambda name, found: seen.__setitem__(name, []))
    assert len(seen["j"]) == 2 and "SERVFAIL" in discovery.status()[0].error.upper()


def test_a_records_take_the_configured_port_and_a_missing_name_is_empty(fake_dns: FakeDns) -> None:
    fake_dns.records[("gpu.example.", "A")] = ["10.0.0.1", "10.0.0.2"]
    job = ScrapeJob(job="j", dns_sd_configs=[DnsSDConfig(names=["gpu.example", "gone.example"], type="A",
                                                         port=9400, nameservers=[fake_dns.address])])
    discovery, seen = _found(job, SimulatedClock(0))
    assert sorted(t["__address__"] for t in seen["j"]) == ["10.0.0.1:9400", "10.0.0.2:9400"]
    assert discovery.status()[0].error == ""  # NXDOMAIN: no targets, not a failure (as Prometheus)


def test_a_port_is_required_except_for_srv() -> None:
    with pytest.raises(ValueError, match="a port is required for A records"):
        DnsSDConfig(names=["x"], type="A")
