"""The daemon's port taken by another program: the message says which setting to change."""

from __future__ import annotations

import socket

import pytest

from memvault.errors import DaemonError
from memvault.service.http_server import HttpServer


def test_a_port_in_use_names_the_setting_that_chose_it() -> None:
    """`memvault up` with daemon.port (or $MEMVAULT_DAEMON_PORT) set to a port another
    program holds said only "cannot listen on 127.0.0.1:45305: Address already in use"."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(DaemonError) as caught:
            HttpServer(lambda *a: None, "127.0.0.1", port)
    finally:
        taken.close()
    said = str(caught.value)
    assert f"127.0.0.1:{port}" in said and "daemon.port" in said and "0" in said, said
