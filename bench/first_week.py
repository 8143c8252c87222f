"""A person's first week on their own notes (issue 24), walked end to end, as a new user would.

    python bench/first_week.py                          # this checkout
    python bench/first_week.py --code /tmp/old/daemon   # another version, the same way
    python bench/first_week.py --notes 2000             # a bigger folder of notes

Everything runs as `memvault` subprocesses of the code under ``--code`` (a ``daemon/``
folder), on a folder of real-looking work notes: capitalised ``People/ Projects/ Daily/``
(the daily-notes folder named in ``.obsidian/daily-notes.json``), an ``Archive/`` of the
person's own, ``Attachments/`` linked relatively, and ``--notes`` more notes. The hash
embedder by default (``--model``): the week's logic and the CLI's time, not the model's.

Each step is a check (what the issue found wrong) and its wall time:

1. ``init`` uses the vault's own folders (no ``people/`` beside ``People/``);
2. ``sync``: MEMORY.md lists the notes of ``People/``, ``Daily/``; the person's
   ``Archive/`` is indexed; ``status`` lists what is ignored;
3. ``add people --title "Ana Lopez"`` finds ``Ana López``; ``get "Ana Lopez"`` reads her;
4. ``Projects/Atlas`` moved into ``Archive/2024/``: a move, not deletions; its relative
   attachment link repaired; the ADR still found;
5. a config change (a section's folder) takes effect on restart with no note changed;
6. ``migrate --into`` a dump naming a project the vault has: merged, not ``-2``; a paused
   project not listed as active; the user's preferences linked from MEMORY.md; no
   ``*Migrated from*`` footer; no verb taken for a name;
7. the README's examples: ``links check`` on ``tests/fixtures/obsidian-vault`` (exit 1, nothing
   written), ``init --example`` then ``context`` at once.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "obsidian-vault"


def note(title: str, summary: str, body: str = "", **fields: str) -> str:
    extra = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\ntitle: {title}\nsummary: {summary}\n{extra}---\n# {title}\n\n{body}\n"


def their_notes(root: Path, extra: int) -> None:
    """A folder of work notes as a person keeps them."""

    def put(rel: str, text: str) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")

    put(".obsidian/daily-notes.json", '{"folder": "Daily", "format": "YYYY-MM-DD"}\n')
    put("People/Ana López.md", note("Ana López", "Runs the data team", "Prefers async."))
    put("People/Lena Weiss.md", note("Lena Weiss", "Security lead"))
    put(
        "Projects/Hermes.md",
        note("Hermes", "The message bus", "My own words on Hermes.", status="active"),
    )
    put(
        "Projects/Atlas/atlas.md",
        note("Atlas", "The event store", "See [[adr-7]].", status="active"),
    )
    put(
        "Projects/Atlas/adr-7.md",
        note("ADR 7: event sourcing", "Atlas keeps its events in an append-only log")
        + "![diagram](../../Attachments/atlas-diagram.png)\n",
    )
    (root / "Attachments").mkdir(parents=True, exist_ok=True)
    (root / "Attachments/atlas-diagram.png").write_bytes(b"\x89PNG fake")
    put(
        "Archive/2023/offsite.md", note("Offsite 2023", "The offsite in Lisbon, kept for reference")
    )
    for d in range(1, 8):
        put(f"Daily/2024-03-0{d}.md", f"# 2024-03-0{d}\n- 09:00 standup {d}\n")
    for n in range(extra):
        put(f"Notes/topic-{n:05d}.md", note(f"Topic {n}", f"Notes on topic {n}", f"Detail {n}."))


DUMP = """# Memory
## About me
- I prefer short answers
## Preferences
- Never email Lena on Fridays
- Prefers Slack over email
- Prefers Slack for quick questions
- Prefers Slack when traveling
- Prefers Slack, always
## Project: Hermes
- Status: paused.
- the dump's words on Hermes
## Project: Zephyr
- Status: done.
- shipped in February
## 2024-03-08
- 10:00 We decided to keep Atlas events for seven years.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", type=Path, default=ROOT / "daemon", help="the daemon/ folder to run")
    ap.add_argument("--notes", type=int, default=300, help="notes added to the person's folder")
    ap.add_argument("--model", default="hash", help="index.model (hash: no model)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env.update(PYTHONPATH=str(args.code.resolve()), MEMVAULT_INDEX_MODEL=args.model)
    rows: list[dict[str, object]] = []

    def memvault(
        *argv: str, cwd: Path | None = None
    ) -> tuple[subprocess.CompletedProcess[str], float]:
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "memvault", *argv],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=1800,
        )
        return proc, time.perf_counter() - started

    def check(step: str, what: str, ok: Callable[[], bool], seconds: float | None = None) -> None:
        try:
            passed = bool(ok())
        except Exception as exc:  # a step that cannot even be checked did not pass
            passed, what = False, f"{what} ({type(exc).__name__}: {exc})"
        rows.append({"step": step, "check": what, "ok": passed, "seconds": seconds})

    with tempfile.TemporaryDirectory(prefix="memvault-first-week-") as tmp:
        root = Path(tmp) / "notes"
        their_notes(root, args.notes)
        v = ("--vault", str(root))

        proc, t = memvault("init", str(root))
        dirs = {p.name for p in root.iterdir() if p.is_dir()}
        check(
            "1 init",
            "no people/ projects/ logs/ beside People/ Projects/ Daily/",
            lambda: proc.returncode == 0 and not dirs & {"people", "projects", "logs"},
            t,
        )
        check(
            "1 init",
            "says which folders it uses",
            lambda: "using your folder People/" in proc.stdout,
        )

        proc, t = memvault("sync", *v)
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        check(
            "2 sync",
            "MEMORY.md lists People/ and Daily/ notes",
            lambda: "[[People/Ana López]]" in memory and "[[Daily/2024-03-07]]" in memory,
            t,
        )
        found, _ = memvault("search", "offsite in Lisbon", *v, "--json")
        check(
            "2 sync",
            "the person's Archive/ is indexed",
            lambda: "Archive/2023/offsite.md" in found.stdout,
        )
        status, _ = memvault("status", *v, "--json")
        check(
            "2 sync",
            "status lists what is ignored",
            lambda: "templates/" in json.loads(status.stdout).get("ignored", {}),
        )

        added, t = memvault("add", "people", "--title", "Ana Lopez", *v)
        check(
            "3 names",
            "add 'Ana Lopez' finds 'Ana López' (exit 5, no second note)",
            lambda: added.returncode == 5 and len(list((root / "People").glob("Ana*"))) == 1,
            t,
        )
        got, t = memvault("get", "Ana Lopez", *v)
        check(
            "3 names",
            "get 'Ana Lopez' reads her note",
            lambda: got.returncode == 0 and "async" in got.stdout,
            t,
        )

        (root / "Archive/2024").mkdir(parents=True)
        (root / "Projects/Atlas").rename(root / "Archive/2024/Atlas")
        synced, t = memvault("sync", *v, "--json")
        report = json.loads(synced.stdout) if synced.returncode == 0 else {}
        check(
            "4 move",
            "Projects/Atlas -> Archive/2024: a move, no deletions",
            lambda: synced.returncode == 0 and not report.get("deleted"),
            t,
        )
        links, t = memvault("links", "check", *v)
        check(
            "4 move",
            "its ../../Attachments link repaired (links check exit 0)",
            lambda: links.returncode == 0,
            t,
        )
        found, _ = memvault("search", "append-only log of events", *v, "--json")
        check(
            "4 move",
            "the ADR is still found",
            lambda: "Archive/2024/Atlas/adr-7.md" in found.stdout,
        )

        config = root / ".memvault/config.toml"
        config.write_text(
            config.read_text(encoding="utf-8").replace("limit = 8\n", "limit = 1\n", 2),
            encoding="utf-8",
        )
        synced, t = memvault("sync", *v, "--json")
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        check(
            "5 config",
            "a config change shows on restart, no note changed",
            lambda: "[[People/People|" in memory or "more in People/" in memory,
            t,
        )

        dump = Path(tmp) / "old" / "MEMORY.md"
        dump.parent.mkdir()
        dump.write_text(DUMP, encoding="utf-8")
        migrated, t = memvault("migrate", str(dump), "--into", str(root), "--json")
        out = json.loads(migrated.stdout) if migrated.returncode == 0 else {}
        files = [p.relative_to(root).as_posix() for p in root.rglob("*.md")]
        memory = (root / "MEMORY.md").read_text(encoding="utf-8")
        check(
            "6 migrate",
            "one note per name (no hermes-2.md)",
            lambda: migrated.returncode == 0 and not [f for f in files if f.endswith("-2.md")],
            t,
        )
        check(
            "6 migrate",
            "the dump's words on Hermes are in the person's Projects/Hermes.md",
            lambda: (
                "the dump's words on Hermes"
                in (root / "Projects/Hermes.md").read_text(encoding="utf-8")
            ),
        )
        zephyr = next((root / f for f in files if f.endswith("zephyr.md")), None)
        check(
            "6 migrate",
            "'- Status: done.' is not active",
            lambda: zephyr is not None and "status: done" in zephyr.read_text(encoding="utf-8"),
        )
        check(
            "6 migrate",
            "the user's preferences are linked from MEMORY.md",
            lambda: any(
                f"[[{f[:-3]}]]" in memory
                for f in files
                if "Never email Lena" in (root / f).read_text(encoding="utf-8")
            ),
        )
        check(
            "6 migrate",
            "no '*Migrated from*' footer in a note",
            lambda: (
                not any(
                    "*Migrated from" in (root / f).read_text(encoding="utf-8")
                    for f in files
                    if not f.startswith("archive/")
                )
            ),
        )
        check(
            "6 migrate",
            "'Prefers Slack' is not a name",
            lambda: not any("Prefers Slack" in u["message"] for u in out.get("uncertain", [])),
        )

        plain = Path(tmp) / "obsidian-vault"
        shutil.copytree(FIXTURE, plain)
        before = sorted(p.name for p in plain.iterdir())
        links, t = memvault("links", "check", "--vault", str(plain))
        check(
            "7 README",
            "links check on an Obsidian vault: exit 1, nothing written",
            lambda: links.returncode == 1 and sorted(p.name for p in plain.iterdir()) == before,
            t,
        )
        demo = Path(tmp) / "demo"
        _made, t = memvault("init", "--example", str(demo))
        ctx, t2 = memvault(
            "context", "What did we decide about the database schema?", "--budget", "2000", cwd=demo
        )
        check(
            "7 README", "init --example, then context at once", lambda: ctx.returncode == 0, t + t2
        )

    passed = sum(1 for r in rows if r["ok"])
    if args.json:
        print(
            json.dumps(
                {"code": str(args.code), "notes": args.notes, "rows": rows, "passed": passed},
                indent=1,
            )
        )
        return
    print(f"code: {args.code}   person's folder: {args.notes + 14} notes   model: {args.model}")
    for r in rows:
        secs = f"{r['seconds']:.2f} s" if r["seconds"] is not None else ""
        print(f"  {'ok  ' if r['ok'] else 'FAIL'} {r['step']:<10} {r['check']:<70} {secs}")
    print(f"{passed}/{len(rows)} checks pass")


if __name__ == "__main__":
    main()
