"""context-router: three cache-stable MCP meta-tools over one SQLite catalog."""

__version__ = "0.1.0"
