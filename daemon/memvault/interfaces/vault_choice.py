"""Which vault a command means: ``--vault``, else ``$MEMVAULT_VAULT``, else the nearest
one at or above the current folder. Every CLI command asks it (through
``cli.common``), and so does ``memvault daemon run``'s own entry
(``interfaces/daemon_run.py``), which loads no CLI framework: so it imports none."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from memvault import errors as E


def resolve_vault(vault: Path | None) -> Path:
    """--vault, else $MEMVAULT_VAULT, else the nearest vault at or above here.

    Only ``init``, ``up`` and ``migrate`` make a folder a vault; every other command
    on a folder that is not one is ``VaultNotFound`` (exit 3), saying which command
    would make it one, and leaves the folder exactly as it was.
    """
    from memvault.vault.lock import find_vault, is_vault, misplaced  # light: no engine, no numpy

    env = os.environ.get("MEMVAULT_VAULT")
    if vault is not None or env:
        found = vault if vault is not None else Path(env or "").expanduser()
        how = "--vault" if vault is not None else "MEMVAULT_VAULT"
        try:
            is_dir = found.is_dir()
        except OSError as exc:  # a name too long, a symlink loop
            shown = str(found) if len(str(found)) <= 80 else f"{str(found)[:60]}..."
            raise E.VaultNotFound(f"no vault at {shown} ({how}): {exc.strerror}") from None
        wrong = None if is_vault(found) else misplaced(found)  # a file, a folder of a vault
        if wrong:
            raise E.VaultNotFound(f"{wrong} ({how})")
        if not is_dir:
            raise E.VaultNotFound(
                f"no vault at {found} ({how}): not a folder; `memvault init {shlex.quote(str(found))}` makes one"
            )
        if not is_vault(found):
            raise E.VaultNotFound(not_a_vault(found, how))
        return found
    here = find_vault(Path.cwd())
    if here is None:
        raise E.VaultNotFound(
            "no vault here: pass --vault PATH, set MEMVAULT_VAULT, or run inside a vault "
            "(a folder with .memvault/); `memvault init PATH` creates one"
        )
    return here


def not_a_vault(folder: Path, how: str = "--vault") -> str:
    """Why ``folder`` is refused, and the command that would make it a vault."""
    hint = f"`memvault init {shlex.quote(str(folder))}` makes it one (no notes are changed)"
    if (folder / "MEMORY.md").is_file():
        hint += f", or `memvault migrate {shlex.quote(str(folder / 'MEMORY.md'))}` splits a long MEMORY.md into notes"
    return f"{folder} ({how}) is not a memvault vault (no .memvault/ folder): {hint}"


__all__ = ["not_a_vault", "resolve_vault"]
