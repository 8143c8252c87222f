"""The daemon: its life cycle (service), the watcher and its queue, and the HTTP API.
Where it listens (daemon.json) is ``memvault.vault.runfile``: the client reads it too."""
