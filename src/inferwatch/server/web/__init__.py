"""The web dashboard: its routes and its static files (``dashboard/``)."""
