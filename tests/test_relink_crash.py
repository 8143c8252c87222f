"""a relink that kill -9 cuts short is finished by the next start.

1,500 notes link ``[[target]]``; the note is renamed; a real `sync` process relinks
them and is killed (SIGKILL) at a random point of the rewrites. The pending relink was
journalled in the store before the first rewrite, so the next sync finishes it: every
note links the new name, `links check` finds nothing broken, and until then `status`
does not say that all is well.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import open_vault
from memvault.interfaces.cli import app

ROOT = Path(__file__).resolve().parents[1]
NOTES = 1500
runner = CliRunner()

CHILD = """
import sys
from memvault.api import Vault
from memvault.index.embedder import HashEmbedder
with Vault.open(sys.argv[1], embedder=HashEmbedder()) as v:
    print("open", flush=True)
    v.sync()
print("done", flush=True)
"""


def make_linked_vault(root: Path) -> None:
    (root / "notes").mkdir(parents=True)
    (root / "target.md").write_text("# Target\n\nWhat every note links.\n", encoding="utf-8")
    for i in range(NOTES):
        (root / "notes" / f"n{i:04}.md").write_text(
            f"# Note {i}\n\nSee [[target]] for the plan, and [[target#Target|its title]].\n",
            encoding="utf-8",
        )


def linking(root: Path, name: str) -> int:
    needle = f"[[{name}]]"
    count = 0
    for path in (root / "notes").iterdir():
        try:
            if needle in path.read_text(encoding="utf-8"):
                count += 1
        except FileNotFoundError:  # the rename of a rewrite in flight
            continue
    return count


def sync_killed_after(root: Path, new_name: str, rewrites: int | None, delay: float) -> int:
    """Run a sync in its own process; SIGKILL it once ``rewrites`` notes link
    ``new_name`` (or ``delay`` seconds after it opened the vault). Returns how many
    notes had been rewritten when it died."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "daemon"))
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "open", proc.stderr.read() if proc.stderr else ""
        opened = time.monotonic()
        deadline = opened + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if rewrites is not None and linking(root, new_name) >= rewrites:
                break
            if rewrites is None and time.monotonic() - opened >= delay:
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()
    return linking(root, new_name)


@pytest.mark.slow
def test_kill_9_during_a_large_relink_is_finished_on_restart(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    make_linked_vault(root)
    with open_vault(root) as v:
        v.sync()
    rng = random.Random(11_4)
    # each round: rename, a sync killed mid-relink (at a random rewrite, or at a random
    # moment), then a restart that must finish it
    rounds = [rng.randrange(1, NOTES - 100), rng.randrange(1, NOTES - 100), None, None]
    name = "target"
    cut_short = 0
    for i, rewrites in enumerate(rounds):
        new = f"goal-{i}"
        os.rename(root / f"{name}.md", root / f"{new}.md")
        done = sync_killed_after(root, new, rewrites, rng.uniform(0.0, 3.0))
        cut_short += 0 < done < NOTES
        with open_vault(root, read_only=True) as v:
            status = v.status()
        if done < NOTES:  # the killed sync left work behind: status must not say all is well
            assert not status["index"]["matches_disk"], (i, done)
        with open_vault(root) as v:
            v.sync()
            assert v.status()["index"]["matches_disk"]
        assert linking(root, new) == NOTES, (i, done)
        assert linking(root, name) == 0
        result = runner.invoke(app, ["links", "check", "--vault", str(root)])
        assert result.exit_code == 0, result.output[-2000:]
        name = new
    assert cut_short >= 2  # the kills did land in the middle of relinks


def test_a_sync_that_died_before_its_first_rewrite_is_not_called_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window kill -9 rarely hits: rows renamed and journalled, no note rewritten yet
    (a fault injected where the rewrites begin stands for the kill)."""
    from memvault.engine.linker import Linker

    root = tmp_path / "vault"
    (root / "notes").mkdir(parents=True)
    (root / "target.md").write_text("# Target\n\nWhat we aim at.\n", encoding="utf-8")
    (root / "notes" / "a.md").write_text("See [[target]].\n", encoding="utf-8")
    with open_vault(root) as v:
        v.sync()
    os.rename(root / "target.md", root / "goal.md")

    def killed(*args: object, **kwargs: object) -> None:
        raise SystemExit("killed before the first rewrite")

    with monkeypatch.context() as m:
        m.setattr(Linker, "relink", killed)
        with open_vault(root) as v, pytest.raises(SystemExit):
            v.sync()
    result = runner.invoke(app, ["status", "--vault", str(root), "--json"])
    assert '"relink_pending": 1' in result.output and '"matches_disk": false' in result.output
    with open_vault(root) as v:
        report = v.sync()
        assert report.relinked == ("notes/a.md",)
        assert v.status()["index"]["matches_disk"]
    assert (root / "notes" / "a.md").read_text(encoding="utf-8") == "See [[goal]].\n"
