"""One memory interface: ``Vault`` and ``DaemonClient`` both satisfy ``Memory``.

The CLI and the MCP server call whatever ``open_memory`` gives them; if one of
the two implementations drifts (a parameter renamed, a default changed, a
result type changed), these tests fail before a user's command does.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from helpers import make_vault, open_vault, running_daemon
from memvault.api import Vault
from memvault.client import DaemonClient
from memvault.errors import LockHeld
from memvault.interfaces.memory import Memory, open_memory

OPERATIONS = sorted(
    name for name, value in vars(Memory).items() if callable(value) and not name.startswith("_")
)


def test_the_protocol_names_every_operation_adapters_use() -> None:
    assert OPERATIONS == [
        "add",
        "close",
        "context",
        "get",
        "log",
        "related",
        "search",
        "status",
        "sync",
    ]


@pytest.mark.parametrize("kind", [Vault, DaemonClient])
@pytest.mark.parametrize("name", OPERATIONS)
def test_each_implementation_has_the_protocols_signature(kind: type, name: str) -> None:
    wanted = inspect.signature(getattr(Memory, name))
    actual = inspect.signature(getattr(kind, name))
    params = dict(actual.parameters)
    for p in wanted.parameters.values():
        assert p.name in params, f"{kind.__name__}.{name} lacks {p.name}"
        q = params.pop(p.name)
        assert (q.kind, q.default) == (p.kind, p.default), f"{kind.__name__}.{name}({p.name})"
        assert q.annotation == p.annotation, f"{kind.__name__}.{name}({p.name}) type"
    # anything more an implementation takes is optional and comes after the protocol's
    # positional parameters, so a call written against the protocol means the same
    for q in params.values():
        assert q.default is not inspect.Parameter.empty, f"{kind.__name__}.{name}({q.name})"
    positional = [n for n, p in wanted.parameters.items() if p.kind == p.POSITIONAL_OR_KEYWORD]
    assert list(actual.parameters)[: len(positional)] == positional, f"{kind.__name__}.{name}"
    assert actual.return_annotation == wanted.return_annotation, f"{kind.__name__}.{name} returns"


def test_a_drifted_signature_is_caught() -> None:
    class Drifted:
        def log(self, message: str) -> None: ...

    wanted = inspect.signature(Memory.log)
    assert list(inspect.signature(Drifted.log).parameters) != list(wanted.parameters)


def test_open_memory_goes_to_a_running_daemon(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as v, running_daemon(v), open_memory(root, "write") as m:
        assert isinstance(m, DaemonClient)
        assert m.log("through the daemon").path.startswith("logs/")


def test_open_memory_in_process_reads_and_writes(tmp_path: Path) -> None:
    root = make_vault(tmp_path)
    with open_memory(root, "write") as m:
        assert isinstance(m, Vault)
        m.add("people", "Ana Lopez", summary="Runs billing")
    with open_memory(root, "peek") as m:
        assert isinstance(m, Vault) and m.status()["notes"] >= 1


def test_open_memory_reads_while_another_process_writes_but_refuses_writes(
    tmp_path: Path,
) -> None:
    root = make_vault(tmp_path)
    with open_vault(root) as holder:
        holder.sync()
        with open_memory(root, "read") as m:  # read-only: the index as it is
            assert m.get("MEMORY.md").text
        with pytest.raises(LockHeld), open_memory(root, "write"):
            pass
