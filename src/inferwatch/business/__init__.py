"""business (see DESIGN.md for what it owns)."""

__all__: list[str] = []
