"""The web dashboard: its routes and its static files (``dashboard/``)."""

from inferwatch.server.web._dashboard import Devices, DriftReports, dashboard_routes

__all__ = ["Devices", "DriftReports", "dashboard_routes"]
