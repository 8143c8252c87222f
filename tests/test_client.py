"""DaemonClient against the real HTTP API: same answers and errors as the library."""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from attacks import ATTACKS
from helpers import TOKEN, daemon_info, make_vault, note, open_vault, running_daemon, write
from memvault.api import Vault
from memvault.client import DaemonClient, error_from_response
from memvault.core.ranking import Filters
from memvault.core.results import Context, Hit, NoteRequest, SyncReport
from memvault.errors import DaemonError, NoteExists, NoteNotFound, UnsafePath
from memvault.service import http_api
from memvault.vault.runfile import read as read_daemon_file

PORT = 50123  # only named in Host headers: the TestClient never opens a socket


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    root = make_vault(tmp_path)
    write(
        root,
        "people/ana-lopez.md",
        note(
            "Ana Lopez",
            "Runs the billing team",
            "## Role\n\nAna owns invoicing and the billing "
            "pipeline.\n\n## Likes\n\nShort meetings.",
            tags="[billing]",
        ),
    )
    with open_vault(root) as v:
        v.sync()
        yield v


@pytest.fixture(params=["testclient", "loopback"])
def client(request: pytest.FixtureRequest, vault: Vault) -> Iterator[DaemonClient]:
    """The app in-process through an injected TestClient, and on a real loopback socket
    through the client's own standard-library wire."""
    if request.param == "loopback":
        with running_daemon(vault) as port, DaemonClient(f"http://127.0.0.1:{port}", TOKEN) as c:
            yield c
        return
    from starlette.testclient import TestClient

    app = http_api.create_app(vault, TOKEN, lambda: daemon_info(PORT), port=PORT)
    base = f"http://127.0.0.1:{PORT}"
    with TestClient(app, base_url=base) as http, DaemonClient(base, TOKEN, http=http) as c:
        yield c
    app.state.close()


# -- same answers as the library -------------------------------------------------------------


def test_search_returns_the_hits_the_library_returns(vault: Vault, client: DaemonClient) -> None:
    hits = client.search("billing pipeline", 5, Filters(folder="people", tags=("billing",)))
    assert hits and all(isinstance(h, Hit) for h in hits)
    assert [h.to_dict() for h in hits] == [
        h.to_dict() for h in vault.search("billing pipeline", k=5, folder="people", tags="billing")
    ]
    assert hits[0].address == "[[people/ana-lopez#Role]]"


def test_search_filters_travel(client: DaemonClient) -> None:
    assert client.search("billing", None, Filters(where={"title": "Ana Lopez"}, path="people/**"))
    assert client.search("billing", None, Filters(until="2000-01-01")) == []
    assert len(client.search("PostgreSQL", 10, group=True)) == len(
        {h.path for h in client.search("PostgreSQL", 10, group=True)}
    )


def test_context_is_the_librarys_context(vault: Vault, client: DaemonClient) -> None:
    ctx = client.context("Who runs billing?", 300, Filters(folder="people"))
    assert isinstance(ctx, Context)
    assert ctx.to_dict() == vault.context("Who runs billing?", 300, folder="people").to_dict()
    assert ctx.tokens <= 300 and ctx.sources


def test_get_a_note_a_section_and_lines(vault: Vault, client: DaemonClient) -> None:
    assert client.get("people/ana-lopez.md").to_dict() == vault.get("people/ana-lopez.md").to_dict()
    section = client.get("people/ana-lopez.md", heading="Likes")
    assert section.heading == "Likes" and "Short meetings." in section.text
    assert client.get("people/ana-lopez.md", lines="1:2").text.startswith("---\ntitle: Ana Lopez")


def test_add_log_and_sync_write_through_the_daemon(vault: Vault, client: DaemonClient) -> None:
    made = client.add(
        NoteRequest(
            "people",
            "José Núñez",
            summary="Joins in May",
            fields={"role": "SRE"},
            body="José runs the on-call rota.",
        )
    )
    assert (made.path, made.created) == ("people/josé-núñez.md", True)
    assert isinstance(made.report, SyncReport) and made.report.created == ("people/josé-núñez.md",)
    assert "role: SRE" in (vault.root / made.path).read_text(encoding="utf-8")
    with pytest.raises(NoteExists):
        client.add(NoteRequest("people", "José Núñez"))
    again = NoteRequest("people", "José Núñez", summary="Joined in May", update=True)
    assert client.add(again).created is False

    logged = client.log("Deployed the billing fix")
    assert logged.path == f"logs/{dt.date.today().isoformat()}.md"
    assert "Deployed the billing fix" in (vault.root / logged.path).read_text(encoding="utf-8")

    write(vault.root, "projects/apollo.md", note("Apollo", "Moon shot"))
    report = client.sync(["projects/apollo.md"])
    assert report.created == ("projects/apollo.md",)
    assert client.sync().changed is False


def test_status_and_related(client: DaemonClient) -> None:
    status = client.status()
    assert status["notes"] >= 5 and status["daemon"]["pid"] == os.getpid()
    related = client.related("people/ana-lopez.md", k=3)
    assert related and all(h.path != "people/ana-lopez.md" for h in related)


# -- the same errors as the library ----------------------------------------------------------


def test_missing_note_and_heading_are_note_not_found(client: DaemonClient) -> None:
    with pytest.raises(NoteNotFound):
        client.get("people/nobody.md")
    with pytest.raises(NoteNotFound):
        client.get("people/ana-lopez.md", heading="No such heading")


def add_secrets(root: Path) -> None:
    """A secret beside the vault, a sibling 'vault-evil', symlinks inside leading out."""
    (root.parent / "secret.md").write_text("SECRET", encoding="utf-8")
    (root.parent / "vault-evil").mkdir()
    (root.parent / "vault-evil" / "secret.md").write_text("SECRET", encoding="utf-8")
    (root / "escape").symlink_to(root.parent / "vault-evil")
    (root / "escape-file.md").symlink_to(root.parent / "secret.md")


def test_traversal_is_refused_and_mapped_back(vault: Vault, client: DaemonClient) -> None:
    add_secrets(vault.root)
    assert len(ATTACKS) >= 30
    for attack in ATTACKS:
        with pytest.raises(UnsafePath):
            client.get(attack)
        # /related takes the path as a query parameter: the daemon refuses it (a symlink
        # leading out is never indexed, so it is not found); nothing is read either way.
        with pytest.raises((UnsafePath, NoteNotFound)):
            client.related(attack)


def test_bad_values_are_value_errors(client: DaemonClient) -> None:
    with pytest.raises(ValueError, match="since"):
        client.search("x", None, Filters(since="last tuesday"))
    with pytest.raises(ValueError, match="'k'"):
        client.search("x", k=0)
    with pytest.raises(ValueError, match="category"):
        client.add(NoteRequest("pets", "Rex"))


def test_a_wrong_token_is_a_daemon_error_with_the_status(vault: Vault) -> None:
    from starlette.testclient import TestClient

    app = http_api.create_app(vault, TOKEN, lambda: daemon_info(PORT), port=PORT)
    base = f"http://127.0.0.1:{PORT}"
    with TestClient(app, base_url=base) as http, DaemonClient(base, "wrong", http=http) as c:
        with pytest.raises(DaemonError) as caught:
            c.status()
        assert caught.value.status == 401 and "token" in str(caught.value)
        assert c.healthy()  # /health needs no token
    app.state.close()


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (404, b'{"error": {"type": "NoteNotFound", "message": "gone"}}', NoteNotFound),
        (400, b'{"error": {"type": "BadRequest", "message": "bad"}}', ValueError),
        (500, b'{"error": {"type": "InternalError", "message": "oops"}}', DaemonError),
        (418, b'{"error": {"type": "Teapot", "message": "short and stout"}}', DaemonError),
        (502, b"<html>bad gateway</html>", DaemonError),
    ],
)
def test_error_types_map_back_to_exceptions(status: int, body: bytes, kind: type) -> None:
    exc = error_from_response(status, body)
    assert type(exc) is kind
    if isinstance(exc, DaemonError):
        assert exc.status == status


def test_an_unreachable_daemon_is_a_daemon_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # held, not listening: no other program can take it
        port = s.getsockname()[1]
        with (
            DaemonClient(f"http://127.0.0.1:{port}", TOKEN) as c,
            pytest.raises(DaemonError) as caught,
        ):
            c.search("anything")
    assert "cannot reach the daemon" in str(caught.value) and caught.value.status is None


# -- finding a daemon ------------------------------------------------------------------------


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize(
    "content",
    [
        None,
        "not json",
        "[]",
        '{"pid": 1}',
        '{"pid": "1", "host": "127.0.0.1", "port": 1, "token": "t"}',
    ],
)
def test_find_is_none_without_a_well_formed_daemon_file(
    tmp_path: Path, content: str | None
) -> None:
    if content is not None:
        write(tmp_path, ".memvault/daemon.json", content)
    assert read_daemon_file(tmp_path) is None
    assert DaemonClient.find(tmp_path) is None


def test_find_is_none_for_a_dead_pid_or_a_silent_port(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))  # held, not listening: no other program can take it
        port = s.getsockname()[1]
        info = {"pid": dead_pid(), "host": "127.0.0.1", "port": port, "token": TOKEN}
        write(tmp_path, ".memvault/daemon.json", json.dumps(info))
        assert DaemonClient.find(tmp_path) is None
        info["pid"] = os.getpid()  # alive, but nothing answers /health
        write(tmp_path, ".memvault/daemon.json", json.dumps(info))
        started = time.monotonic()
        assert DaemonClient.find(tmp_path) is None
        assert time.monotonic() - started < 2


def test_find_a_real_daemon_on_loopback(vault: Vault) -> None:
    with running_daemon(vault) as port:
        client = DaemonClient.find(vault.root)
        assert client is not None and client.base_url == f"http://127.0.0.1:{port}"
        with client:
            assert client.search("billing pipeline", k=1)[0].path == "people/ana-lopez.md"
            assert client.get("people/ana-lopez.md", heading="Role").heading == "Role"
    assert DaemonClient.find(vault.root) is None  # daemon.json removed at exit


@pytest.mark.parametrize(
    ("status", "message", "name", "why"),
    [
        (500, "logs/2026-12-06.md: read-only: it has no write permission", "logs/2026-12-06.md",
         "read-only: it has no write permission"),
        (507, "people/ana.md: No space left on device", "people/ana.md", "No space left on device"),
    ],
)  # fmt: skip
def test_a_write_the_system_refused_through_the_daemon_is_the_os_error_it_was(
    status: int, message: str, name: str, why: str
) -> None:
    """Through the daemon, a write refused by the disk or a note's permissions was a
    DaemonError: `memvault log` exited 6 ("the daemon cannot be reached") saying "the
    daemon answered HTTP 500 (OSError)"; without a daemon the same write exits 1."""
    body = json.dumps({"error": {"type": "OSError", "message": message}}).encode()
    exc = error_from_response(status, body)
    assert isinstance(exc, OSError) and not isinstance(exc, DaemonError)
    assert (exc.filename, exc.strerror) == (name, why)


# -- a daemon started again in another process ---------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("port", ["0", "fixed"])
def test_a_vault_opened_through_a_daemon_goes_on_through_the_next_one(
    tmp_path: Path, port: str
) -> None:
    """A long-lived agent's ``Vault`` outlives its daemon: ``memvault up`` run again, or
    a service manager's restart, is another process on another port (or the same port,
    ``daemon.port`` set, with another token). Before, every call raised "cannot reach
    the daemon" (or 401 "wrong bearer token") for good, a daemon serving the vault."""
    from helpers import DaemonProcess
    from memvault.index.embedder import HashEmbedder

    root = make_vault(tmp_path)
    write(root, "people/ana.md", note("Ana", "Owns the billing pipeline"))
    if port == "fixed":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
    first = DaemonProcess(tmp_path, root, MEMVAULT_DAEMON_PORT=port)
    try:
        first.ready(answering=True)
        with Vault.open(root, embedder=HashEmbedder()) as v:
            assert v.daemon is not None
            assert v.search("billing pipeline", k=1)[0].path == "people/ana.md"
            assert first.stop() == 0
            with pytest.raises(DaemonError) as caught:
                v.search("billing pipeline", k=1)
            said = str(caught.value)
            assert f"no daemon serves {root} now" in said and "memvault up" in said
            second = DaemonProcess(tmp_path, root, MEMVAULT_DAEMON_PORT=port)
            try:
                info = second.ready(answering=True)
                assert info["pid"] != first.proc.pid
                assert v.search("billing pipeline", k=1)[0].path == "people/ana.md"
                logged = v.log("met Ana about invoices").path
                assert logged.startswith("logs/")
            finally:
                assert second.stop() == 0
        day = (root / logged).read_text(encoding="utf-8")  # today's, not an older log
        assert "met Ana about invoices" in day
    finally:
        first.stop()


@pytest.mark.slow
def test_a_write_the_next_daemon_refuses_is_its_error_not_no_daemon(tmp_path: Path) -> None:
    """The next daemon on the same port (``daemon.port`` set) answers the old token 401;
    the request is sent again and that daemon refuses the write itself (a read-only
    note): the caller is told so (its OSError), not "cannot reach the daemon: no
    daemon serves ... now; start one" while one serves it and answered."""
    from helpers import DaemonProcess
    from memvault.index.embedder import HashEmbedder

    root = make_vault(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    first = DaemonProcess(tmp_path, root, MEMVAULT_DAEMON_PORT=port)
    try:
        first.ready(answering=True)
        with Vault.open(root, embedder=HashEmbedder()) as v:
            assert v.daemon is not None
            day = root / v.log("met Ana about invoices").path
            day.chmod(0o444)  # the person's "leave it as it is"
            before = day.read_bytes()
            assert first.stop() == 0
            second = DaemonProcess(tmp_path, root, MEMVAULT_DAEMON_PORT=port)
            try:
                second.ready(answering=True)
                with pytest.raises(OSError, match="read-only") as refused:
                    v.log("met Bob about refunds")
                assert not isinstance(refused.value, DaemonError)
            finally:
                assert second.stop() == 0
            assert day.read_bytes() == before
    finally:
        first.stop()


@pytest.mark.slow
def test_a_write_cut_off_by_its_daemon_dying_says_look_before_sending_it_again(
    tmp_path: Path,
) -> None:
    """A write the daemon may have made before its connection dropped (the daemon killed
    mid-request) is never sent again, and the caller is told to look first, as after a
    timeout; it said "no daemon serves <vault> now; start one ... and this Vault goes on
    through it" (no daemon had been looked for), and an agent that did so and sent it
    again logged the line twice."""
    said = _cut_off(tmp_path, make_vault(tmp_path), lambda v: v.log("met Ana about invoices"))
    assert "POST /log" in said and "look before sending it again" in said
    assert "no daemon serves" not in said and "goes on through it" not in said


@pytest.mark.slow
def test_a_context_cut_off_by_its_daemon_dying_is_a_read_not_a_change(tmp_path: Path) -> None:
    """POST /context changes nothing (as /search): cut off by its daemon dying, it is a
    read, looked for at the daemon serving the vault now and said as one finding none
    ("start one ... goes on through it"); it said "it may have made the change: look
    before sending it again" of a context, and never looked for the next daemon."""
    root = make_vault(tmp_path)
    write(root, "people/ana.md", note("Ana", "Owns the billing pipeline"))
    said = _cut_off(tmp_path, root, lambda v: v.context("billing pipeline", budget=500))
    assert f"no daemon serves {root} now" in said and "goes on through it" in said
    assert "may have made the change" not in said


def _cut_off(tmp_path: Path, root: Path, call: Callable[[Vault], object]) -> str:
    """What ``call``, on a Vault opened through a daemon, raises when its daemon is
    killed with the request in flight (stopped first: it takes the request, says
    nothing): one DaemonError, its message."""
    import signal
    import threading

    from helpers import DaemonProcess, eventually
    from memvault.index.embedder import HashEmbedder

    first = DaemonProcess(tmp_path, root)
    try:
        port = first.ready(answering=True)["port"]
        with Vault.open(root, embedder=HashEmbedder()) as v:
            assert v.daemon is not None
            os.kill(first.proc.pid, signal.SIGSTOP)
            caught: list[BaseException] = []

            def send() -> None:
                try:
                    call(v)
                except BaseException as exc:
                    caught.append(exc)

            sending = threading.Thread(target=send)
            sending.start()
            eventually(lambda: _connected_to(port), 30, "the request to be sent")
            first.kill()  # the connection drops mid-request
            sending.join(60)
    finally:
        first.stop()
    assert len(caught) == 1 and isinstance(caught[0], DaemonError), caught
    return str(caught[0])


def _connected_to(port: int) -> bool:
    """Whether a TCP connection to loopback ``port`` is established (/proc/net/tcp: the
    remote address's port in hex, state 01)."""
    table = Path("/proc/net/tcp").read_text(encoding="ascii").splitlines()[1:]
    return any(row.split()[2].endswith(f":{port:04X}") and row.split()[3] == "01" for row in table)
