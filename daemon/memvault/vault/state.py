"""memvault's own folder in a vault, ``.memvault/``, and the one file in it that is not
derived from the notes.

- ``ensure_state_dir`` creates the folder — wherever memvault creates it: a sync, the
  writer lock, ``daemon start`` — together with its ``.gitignore``, so ``git add -A``
  in a vault never commits the index (tens of MB, rebuilt from the notes anyway).
  The ignore file keeps the settings and the decisions below in git.
- ``MemoryDecisions`` is what a person decided about MEMORY.md: which managed
  sections memvault has seen (one seen and now gone was deleted on purpose, and is
  not re-added) and which entries a person took out of a section. It lives in
  ``.memvault/memory-decisions.json``, not in index.db: the index is derived and may
  be deleted and rebuilt at any time, and a person's decision cannot be derived.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memvault.config import STATE_DIR

GITIGNORE = ".gitignore"
DECISIONS_FILE = "memory-decisions.json"
# Kept in step with vault-template/.memvault/.gitignore (a test checks).
GITIGNORE_TEXT = (
    "# memvault's index is derived from the notes: keep it out of git\n"
    "*\n"
    "!config.toml\n"
    "!.gitignore\n"
    f"!{DECISIONS_FILE}\n"
)


def ensure_state_dir(state: Path) -> Path:
    """Create ``.memvault/`` (``state``) if needed, with its ``.gitignore``; an ignore
    file a person changed is left as it is."""
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / GITIGNORE
    if not ignore.exists():
        with contextlib.suppress(FileExistsError):
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(GITIGNORE_TEXT)
    return state


def state_dir_of(root: Path) -> Path:
    return Path(root) / STATE_DIR


@dataclass(frozen=True, slots=True)
class MemoryDecisions:
    """What a person decided about MEMORY.md's managed sections."""

    sections_seen: tuple[str, ...] = ()  # sections once in MEMORY.md (gone = deleted)
    hidden: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # section -> notes

    def to_json(self) -> str:
        data = {
            "about": "What you decided about MEMORY.md: memvault keeps it apart from its "
            "index, which it may rebuild at any time. Sections seen and then deleted are "
            "not re-added; notes under 'hidden' were taken out of a section by hand "
            "(put a link to one back into its section to list it again).",
            "sections_seen": sorted(self.sections_seen),
            "hidden": {k: sorted(v) for k, v in sorted(self.hidden.items()) if v},
        }
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def load_decisions(state: Path) -> MemoryDecisions | None:
    """The decisions file, or None when there is none (or it cannot be read as one)."""
    try:
        data = json.loads((state / DECISIONS_FILE).read_text(encoding="utf-8"))
        seen = tuple(str(s) for s in data.get("sections_seen", []))
        hidden = {str(k): tuple(str(p) for p in v) for k, v in dict(data.get("hidden", {})).items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return MemoryDecisions(seen, hidden)


def save_decisions(state: Path, decisions: MemoryDecisions) -> bool:
    """Write the decisions file atomically, only when its content changes."""
    path = state / DECISIONS_FILE
    text = decisions.to_json()
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8") == text:
            return False
    ensure_state_dir(state)
    tmp = state / f".{DECISIONS_FILE}.tmp-{secrets.token_hex(4)}"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return True


__all__ = [
    "DECISIONS_FILE",
    "GITIGNORE_TEXT",
    "MemoryDecisions",
    "ensure_state_dir",
    "load_decisions",
    "save_decisions",
    "state_dir_of",
]
