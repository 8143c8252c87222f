"""``memvault daemon install``: a systemd user unit (Linux) or a launchd agent (macOS)
that runs ``python -m memvault daemon run --vault ROOT`` — the CLI, never a module path
inside the package, so a unit written by one version runs under the next.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def package_parent() -> str:
    """The folder holding the ``memvault`` package (for PYTHONPATH in spawned daemons)."""
    import memvault

    return str(Path(memvault.__file__).resolve().parents[1])


@dataclass(frozen=True, slots=True)
class Installed:
    path: Path
    written: bool  # False: an identical file was already there
    enable: str  # the commands that turn it on


def service_name(root: Path) -> str:
    """The folder's name and a short hash of its whole path: two vaults named ``demo``
    (``~/a/demo``, ``~/b/demo``) collided on ``memvault-demo.service``."""
    import hashlib

    resolved = Path(root).resolve()
    name = re.sub(r"[^a-z0-9_-]+", "-", resolved.name.lower()).strip("-") or "vault"
    return f"{name}-{hashlib.sha256(str(resolved).encode()).hexdigest()[:8]}"


def _vault_of(text: str) -> str | None:
    """The vault a service file runs (the argument after ``--vault``), if it names one."""
    import plistlib
    import shlex

    args: list[str] = []
    if text.lstrip().startswith("<?xml"):
        with contextlib.suppress(Exception):
            args = [str(a) for a in plistlib.loads(text.encode()).get("ProgramArguments", [])]
    else:
        for line in text.splitlines():
            if line.startswith("ExecStart="):
                with contextlib.suppress(ValueError):
                    args = [a.replace("%%", "%").replace("$$", "$") for a in shlex.split(line[10:])]
    if "--vault" in args[:-1]:
        return args[args.index("--vault") + 1]
    return None


def user_manager_problem(run: Callable[..., Any] | None = None) -> str | None:
    """Why ``systemctl --user`` cannot be used here (no user manager: a container, an
    ssh session without lingering), or None when it answers."""
    import subprocess

    run = run or subprocess.run
    try:
        done = run(
            ["systemctl", "--user", "show-environment"], capture_output=True, text=True, timeout=10
        )
    except FileNotFoundError:
        return "systemctl is not installed here"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"systemctl --user did not answer ({exc})"
    if done.returncode != 0:
        said = (done.stderr or done.stdout or "").strip().splitlines()
        return f"systemctl --user cannot connect ({said[0] if said else f'exit {done.returncode}'})"
    return None


def _systemd_quote(arg: str) -> str:
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def render_unit(root: Path, python: str, pythonpath: str | None) -> str:
    root = Path(root).resolve()
    if any(ch in str(root) for ch in "\n\r"):
        from memvault.errors import UnsafePath

        # a unit file is read a line at a time: the rest of the name would be a directive
        raise UnsafePath(
            f"{str(root)!r} holds a line break, which a systemd unit cannot name safely: "
            "rename the folder (or run `memvault daemon start`)"
        )
    cmd = " ".join(
        _systemd_quote(a) for a in (python, "-m", "memvault", "daemon", "run", "--vault", str(root))
    )
    env = f"Environment={_systemd_quote('PYTHONPATH=' + pythonpath)}\n" if pythonpath else ""
    return (
        "[Unit]\n"
        f"Description=memvault daemon for {str(root).replace('%', '%%')}\n"  # specifiers
        "Documentation=https://github.com/memvault/memvault\n\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={cmd}\n"
        f"{env}"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "# 1: already running, 3: no vault / bad config - restarting would not help\n"
        "RestartPreventExitStatus=1 3\n\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def render_plist(root: Path, python: str, label: str, pythonpath: str | None) -> str:
    from xml.sax.saxutils import escape

    root = Path(root).resolve()
    args = "".join(
        f"    <string>{escape(a)}</string>\n"
        for a in (python, "-m", "memvault", "daemon", "run", "--vault", str(root), "--log-file")
    )
    env = (
        (
            f"  <key>EnvironmentVariables</key>\n  <dict>\n    <key>PYTHONPATH</key>\n"
            f"    <string>{escape(pythonpath)}</string>\n  </dict>\n"
        )
        if pythonpath
        else ""
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
        '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
        '<plist version="1.0">\n<dict>\n'
        f"  <key>Label</key>\n  <string>{escape(label)}</string>\n"
        f"  <key>ProgramArguments</key>\n  <array>\n{args}  </array>\n{env}"
        "  <key>RunAtLoad</key>\n  <true/>\n"
        "  <key>KeepAlive</key>\n  <dict>\n    <key>SuccessfulExit</key>\n    <false/>\n"
        "  </dict>\n"
        "</dict>\n</plist>\n"
    )


def install_service(
    root: Path,
    *,
    force: bool = False,
    platform: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Installed:
    """Write a systemd user unit (Linux) or a launchd agent (macOS) for ``root``.

    Never replaces a different existing file unless ``force``.
    """
    import secrets
    import site

    from memvault.errors import DaemonError, ServiceExists

    env = os.environ if env is None else env
    platform = platform or sys.platform
    home = Path(env.get("HOME") or Path.home())
    python = str(Path(sys.executable).absolute())
    parent = package_parent()

    sites = [*site.getsitepackages(), site.getusersitepackages()]
    installed = {str(Path(p).resolve()) for p in sites}
    pythonpath = None if parent in installed else parent
    name = service_name(root)
    if platform == "darwin":
        label = f"io.memvault.{name}"
        path = home / "Library" / "LaunchAgents" / f"{label}.plist"
        text = render_plist(root, python, label, pythonpath)
        enable = f"launchctl bootstrap gui/$(id -u) {path}"
    elif platform.startswith("linux"):
        config_home = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        path = config_home / "systemd" / "user" / f"memvault-{name}.service"
        text = render_unit(root, python, pythonpath)
        enable = f"systemctl --user daemon-reload && systemctl --user enable --now {path.name}"
    else:
        raise DaemonError(
            f"`daemon install` supports Linux (systemd) and macOS (launchd), not {platform}"
        )
    if path.exists():
        there = path.read_text(encoding="utf-8", errors="replace")
        if there == text:
            return Installed(path, False, enable)
        other = _vault_of(there)
        if other is not None and Path(other) != Path(root).resolve():
            raise ServiceExists(  # never replaced, --force or not: that vault would stop
                f"{path} runs another vault ({other}); it is left as it is"
            )
        if not force:
            raise ServiceExists(f"{path} exists and differs; pass --force to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(4)}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return Installed(path, True, enable)
