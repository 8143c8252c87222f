"""How people and agents reach a vault: the CLI, the MCP server, the daemon's client,
and ``open_memory`` — the one place that decides between a running daemon and the
vault opened in this process."""
