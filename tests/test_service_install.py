"""`daemon install` for two vaults of the same name.

A second vault named `demo` collided on `memvault-demo.service`, the refusal exited 6
(the lock's code), `--force` overwrote the other vault's unit, and nothing said that
`systemctl --user` could not connect. Real files under a temporary HOME; the real
CLI; the real `systemctl` when this machine has one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import make_vault
from memvault.interfaces.cli import app as cli_app
from memvault.service.units import install_service


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def install(root: Path, *extra: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli_app, ["daemon", "install", "--vault", str(root), *extra])
    return r.exit_code, r.stdout, r.stderr


def test_two_vaults_of_the_same_name_get_two_units(tmp_path: Path, home: Path) -> None:
    a = make_vault(tmp_path / "a", "demo")
    b = make_vault(tmp_path / "b", "demo")
    first = install_service(a, platform="linux")
    second = install_service(b, platform="linux")
    assert first.path != second.path and first.written and second.written
    assert first.path.name.startswith("memvault-demo-")
    assert f'"--vault" "{a.resolve()}"' in first.path.read_text()
    assert f'"--vault" "{b.resolve()}"' in second.path.read_text()


def test_another_vaults_unit_is_never_replaced_even_with_force(tmp_path: Path, home: Path) -> None:
    a = make_vault(tmp_path / "a", "demo")
    b = make_vault(tmp_path / "b", "demo")
    theirs = install_service(a, platform="linux").path
    text = theirs.read_text()
    # the unit's name is a's: put it where b's goes (as the old same-name scheme did)
    mine = install_service(b, platform="linux").path
    mine.write_text(text)
    for extra in ((), ("--force",)):
        code, out, err = install(b, *extra)
        assert code == 5, (out, err)  # refused, not the lock's 6
        assert "runs another vault" in err and str(a.resolve()) in err
        assert mine.read_text() == text


def test_install_says_json_when_asked(tmp_path: Path, home: Path) -> None:
    root = make_vault(tmp_path)
    code, out, err = install(root, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert Path(data["path"]).is_file() and data["written"] is True
    assert "systemctl --user" in data["enable"] and "user_manager" in data


def test_a_user_manager_that_cannot_be_reached_is_named(tmp_path: Path, home: Path) -> None:
    from memvault.service.units import user_manager_problem

    if shutil.which("systemctl") is None:
        assert user_manager_problem() == "systemctl is not installed here"
        return
    problem = user_manager_problem()  # this machine's own answer, whatever it is
    code, _, err = install(make_vault(tmp_path))
    assert code == 0
    if problem is None:
        assert "warning" not in err
    else:
        assert problem in err and "memvault daemon start" in err


def test_a_vault_path_is_never_read_as_systemd_syntax(tmp_path: Path, home: Path) -> None:
    """A `%` in the folder's name was expanded by systemd in Description= (`%h`: the home
    folder), and a line break in it ended the line: the rest of the name was read as a
    directive of its own (ExecStartPre=...). Specifiers are escaped everywhere; a name
    with a line break is refused (exit 5), no unit written."""
    from memvault.service.units import render_unit

    root = make_vault(tmp_path, "100%h notes")
    text = render_unit(root, "/usr/bin/python3", None)
    assert f"Description=memvault daemon for {str(root.resolve()).replace('%', '%%')}\n" in text
    hostile = make_vault(tmp_path, "v\nExecStartPre=touch pwned")
    code, out, err = install(hostile)
    assert code == 5, out + err
    assert "line break" in out + err
    assert not list(home.rglob("*.service"))
