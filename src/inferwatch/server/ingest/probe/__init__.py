"""Synthetic probes: endpoints seen from outside (HTTP, generative APIs, golden-set canaries).

The room's door: ``Prober`` (``serve`` runs it), ``run_probe`` (``inferwatch probe``),
``ProbeStatus`` (the API and the dashboard), ``load_golden`` (checks a golden file).
"""

from inferwatch.server.ingest.probe._golden import GoldenCase, GoldenWindow, load_golden
from inferwatch.server.ingest.probe._http import PHASES
from inferwatch.server.ingest.probe._prober import Prober, ProbeStatus
from inferwatch.server.ingest.probe._run import ProbeResult, Rotation, run_probe

__all__ = ["PHASES", "GoldenCase", "GoldenWindow", "ProbeResult", "ProbeStatus", "Prober", "Rotation",
           "load_golden", "run_probe"]
