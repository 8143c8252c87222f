"""The daemon: its life cycle (service), the watcher and its queue, the HTTP API, and the
daemon file that says where it listens (runfile)."""
