"""How people and agents reach a vault: the CLI, the MCP server, and ``open_memory`` —
the one place that decides between a running daemon (``memvault.client``) and the
vault opened in this process."""
