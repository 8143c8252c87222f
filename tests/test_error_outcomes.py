"""One table (errors.OUTCOMES) gives each library error its CLI exit code and its HTTP
status: every error has both, and the CLI and the HTTP API read the same row."""

from __future__ import annotations

import inspect

import pytest

from memvault import errors as E
from memvault.interfaces.cli.common import exit_code
from memvault.service.http_api import error_response  # noqa: F401  (the HTTP side loads)

KINDS = [
    kind for _, kind in inspect.getmembers(E, inspect.isclass) if issubclass(kind, E.MemvaultError)
]


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_every_error_has_an_exit_code_and_a_status(kind: type[E.MemvaultError]) -> None:
    exc = kind.__new__(kind)
    found = E.outcome(exc)
    assert found is not None
    code, status = found
    assert code in range(1, 8) and status in (400, 404, 409, 503)
    assert exit_code(exc) == code


def test_the_documented_rows() -> None:
    # README's exit codes, and docs/HTTP.md's statuses
    rows = {
        E.VaultNotFound: (3, 400),
        E.NotIndexed: (3, 400),
        E.ConfigError: (3, 400),
        E.NoteNotFound: (4, 404),
        E.FolderNotFound: (4, 404),
        E.AmbiguousNote: (2, 400),
        E.UnsafePath: (5, 400),
        E.NoteExists: (5, 409),
        E.FileBusy: (1, 409),
        E.MemoryFileError: (1, 409),
        E.LockHeld: (6, 400),
        E.DaemonError: (6, 400),
        E.ModelError: (7, 503),
        E.IndexCorrupt: (7, 503),
        E.StorageError: (7, 503),
        E.MemvaultError: (1, 400),
    }
    assert {kind: E.outcome(kind.__new__(kind)) for kind in rows} == rows
    assert E.outcome(ValueError("x")) is None and exit_code(ValueError("x")) == 1
