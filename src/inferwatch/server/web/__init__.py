"""The web dashboard: its routes and its static files (``dashboard/``), and the incident page a
notification's signed link opens."""

from inferwatch.server.web._dashboard import Devices, DriftReports, dashboard_routes
from inferwatch.server.web._incident import incident_routes

__all__ = ["Devices", "DriftReports", "dashboard_routes", "incident_routes"]
