"""How people and agents reach a vault: the CLI and the MCP server, each over a
``Vault`` (``memvault.api``), which decides once between a running daemon and the
vault opened in this process (``memvault.backends``)."""
