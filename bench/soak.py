"""Months of an unattended daemon, compressed: a person's, git's and agents' changes at
random, the daemon stopped and killed now and then, and at each quiet point the
guarantees checked.

    python bench/soak.py --minutes 20                    # this checkout, hash embedder
    python bench/soak.py --minutes 20 --code /tmp/old    # another checkout, the same way
    python bench/soak.py --minutes 10 --model default    # the real model

A real daemon (``memvault daemon run``, a subprocess of ``--code``) watches a vault of
``--notes`` notes in mixed-case folders (``People/``, ``Archive/2024/``, ``Notizen/`` beside
memvault's own), named in several scripts. Changes come through the file system as
an editor or ``git pull`` makes them (appends, whole-file replaces, renames within and
across folders, folder renames, deletes, bursts of 50-150 at once) and through the HTTP
API as an agent makes them (``POST /log``, ``POST /notes``). Now and then the daemon is
stopped (SIGTERM) or killed (SIGKILL) and started again.

``--git``: the vault is a git repository (branch ``main``); everything is committed now
and then (``git add -A``, as a person syncing does, while the daemon writes), and now and
then a commit before is checked out (detached HEAD) and, 0.5-4 s later, ``main`` again:
that second checkout must go through (no tracked file written meanwhile), a failure if
git refuses it. ``--config-edits``: a person edits config.toml now and then (the people
section's ``limit``: 3, 8 or 40, saved as an editor saves), and the daemon must start
again on it (in-process, a new port: the script follows daemon.json) within 90 s.

Every ``--check-every`` seconds the script waits for the daemon to be idle and checks:

1. **no words lost**: every line the script wrote is in the note it wrote it to (followed
   through its renames), every agent's log line is under ``logs/``;
2. **links true**: each link the script wrote resolves to its target's current name while
   the target lives; ``links check`` reports only links to notes the script deleted;
3. **the same as a fresh index**: the vault's files copied with ``config.toml`` alone and
   synced from nothing give the same MEMORY.md, the same folder notes and the same
   note and chunk counts; MEMORY.md within its limits;
4. **health**: the daemon's RSS, open files, threads, ``.memvault/`` bytes, its log's
   bytes and ``/status`` warnings, and its child processes (the model's own, while it
   is loaded) and their RSS, written down each time (a ratchet shows there); a failure
   when it runs more than one child, or when one outlived a daemon stopped or killed.

Each check is a line of ``WORK/soak.jsonl``; the last line is the summary. Exit 1 when a
guarantee failed (each failure says what and where).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from daemon_bench import ROOT, Daemon, children_kb
from memvault.vault import runfile
from scale_bench import idle
from soak_months import QUERIES, Churn, Sampler, build, compare

FOLDERS = ["people", "projects", "decisions", "Archive/2024", "topics/ops", "Notizen"]
NAMES = ["Ana López", "Björn", "Zoë Park", "東京 plan", "Ωmega", "deploy notes", "Q3 review"]
_TEXT = "retrieval schema latency budget review cache index migration vector release"
WORDS = [*_TEXT.split(), "onboarding", "pricing", "roadmap", "incident", "backup", "queue"]
WEIGHTS = {
    "append": 30,
    "replace": 10,
    "create": 16,
    "link": 10,
    "rename": 12,
    "delete": 4,
    "agent_log": 5,
    "agent_note": 5,
    "folder_rename": 1,
    "burst": 2,
    "restart": 1,
    "kill": 1,
}
GIT_WEIGHTS = {"git_commit": 3, "git_back": 1}  # with --git
# with --realistic: a person's saves, MEMORY.md by hand, the day's log, the memory tool,
# searches and context; with --clone, a second machine's commits pulled
MONTHS_WEIGHTS = {
    "person_save": 20,
    "memory_edit": 2,
    "daily_log": 4,
    "memory_tool": 4,
    "query": 8,
}
CLONE_WEIGHTS = {"pull": 1, "git_commit": 2}
CONFIG_WEIGHTS = {"config": 1}  # with --config-edits
QUIET_AFTER_RENAME = 5.0  # a whole-file replace waits this long after a rename (see _replace)


class World:
    """What the script wrote, to check the vault against: notes by id (their path, the
    lines written, the ids they link), names of deleted notes, agents' log lines."""

    def __init__(self, root: Path, rng: random.Random) -> None:
        self.root = root
        self.rng = rng
        self.notes: dict[int, dict[str, Any]] = {}
        self.dead_names: set[str] = set()
        self.log_lines: list[str] = []
        self.next_id = 0
        self.next_mark = 0
        self.last_rename = 0.0
        self.folders = list(FOLDERS)
        self.counts: dict[str, int] = {}
        self.trace = open(root.parent / "trace.jsonl", "w")  # noqa: SIM115 (every change)
        self.daemon_up = False
        # while no daemon runs, a note is renamed or edited, not both: a rename is then
        # told from its content alone, and a stub renamed and edited is no rename
        # (changes.edited_moves; a running daemon has the kernel's word: reported_moves)
        self.down_renamed: set[int] = set()
        self.down_edited: set[int] = set()
        self.orphans: list[str] = []  # a daemon's child process that outlived it
        self.failures: list[str] = []  # git refused to check out main again, a config not taken
        self.commits = 0
        self.churn: Churn | None = None  # --realistic's changes beside these

    def said(self, kind: str, **what: Any) -> None:
        what.update(kind=kind, t=round(time.time(), 3), up=self.daemon_up)
        self.trace.write(json.dumps(what, ensure_ascii=False) + "\n")

    def mark(self) -> str:
        self.next_mark += 1
        return f"mk{self.next_mark}q"

    def name(self) -> str:
        self.next_id += 1
        return f"{self.rng.choice(NAMES)} {self.next_id}"

    def alive(self) -> list[int]:
        return sorted(self.notes)

    def stem(self, i: int) -> str:
        return Path(self.notes[i]["path"]).stem

    # --- changes ---------------------------------------------------------------------

    def create(self, folder: str | None = None) -> int:
        name = self.name()
        i = self.next_id
        folder = folder or self.rng.choice(self.folders)
        rel = f"{folder}/{name}.md"
        targets = self.rng.sample(self.alive(), min(len(self.notes), self.rng.randint(0, 3)))
        m = self.mark()
        links = " ".join(f"[[{self.stem(t)}]]" for t in targets)
        text = f"# {name}\n\nsk{i}x {m} {' '.join(self.rng.sample(WORDS, 6))}.\n\n{links}\n"
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.notes[i] = {"path": rel, "marks": [f"sk{i}x", m], "links": list(targets)}
        self.said("create", id=i, path=rel, links=targets)
        return i

    def append(self, i: int) -> None:
        m = self.mark()
        with open(self.root / self.notes[i]["path"], "a", encoding="utf-8") as fh:
            fh.write(f"\n{m} {' '.join(self.rng.sample(WORDS, 5))}.\n")
        self.notes[i]["marks"].append(m)
        self.said("append", id=i, mark=m)

    def replace(self, i: int) -> None:
        """An editor's save: the whole file written to a temp file and renamed over it.
        It reads the file first, so a link the daemon rewrote between the read and the
        rename would be put back as it was (as an editor holding the old text would); the
        script does it only when no rename happened for QUIET_AFTER_RENAME seconds."""
        if time.monotonic() - self.last_rename < QUIET_AFTER_RENAME:
            return self.append(i)
        path = self.root / self.notes[i]["path"]
        m = self.mark()
        text = path.read_text(encoding="utf-8")
        tmp = path.with_name(f".{path.name}.tmp{self.next_mark}")
        tmp.write_text(text + f"\n{m} edited.\n", encoding="utf-8")
        os.replace(tmp, path)
        self.notes[i]["marks"].append(m)
        self.said("replace", id=i, mark=m)
        return None

    def link(self, i: int) -> None:
        others = [t for t in self.alive() if t != i]
        if not others:
            return
        t = self.rng.choice(others)
        with open(self.root / self.notes[i]["path"], "a", encoding="utf-8") as fh:
            fh.write(f"\nsee [[{self.stem(t)}]]\n")
        self.notes[i]["links"].append(t)
        self.said("link", id=i, to=t)

    def rename(self, i: int) -> None:
        old = self.notes[i]["path"]
        folder = self.rng.choice(self.folders) if self.rng.random() < 0.5 else str(Path(old).parent)
        new = f"{folder}/{self.name()}.md"
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.root / old, self.root / new)
        self.notes[i].setdefault("was", []).append(old)
        self.notes[i]["path"] = new
        self.last_rename = time.monotonic()
        self.said("rename", id=i, old=old, new=new)

    def delete(self, i: int) -> None:
        note = self.notes.pop(i)
        rel = note["path"]
        os.unlink(self.root / rel)
        self.said("delete", id=i, path=rel)
        # every name it had: a link to one it had before a rename in the same batch as
        # the delete is not re-targeted (the note is gone either way)
        for had in (rel, *note.get("was", ())):
            self.dead_names.update({Path(had).stem.lower(), had[:-3].lower()})
        for note in self.notes.values():
            note["links"] = [t for t in note["links"] if t != i]

    def folder_rename(self) -> None:
        """A subfolder of the person's own renamed (``Archive/2024`` -> ``Archive/2024-N``)."""
        old = self.rng.choice([f for f in self.folders if "/" in f])
        new = f"{old.split('-')[0]}-{self.next_id}"
        self.next_id += 1
        if not (self.root / old).is_dir():
            return
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        os.rename(self.root / old, self.root / new)
        for note in self.notes.values():
            if note["path"].startswith(old + "/"):
                note["path"] = new + note["path"][len(old) :]
        self.folders[self.folders.index(old)] = new
        self.last_rename = time.monotonic()
        self.said("folder_rename", old=old, new=new)


def git(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True)


def git_commit(world: World) -> None:
    """What a person syncing does, the daemon writing meanwhile."""
    git(world.root, "add", "-A")
    if git(world.root, "commit", "-q", "-m", f"soak {world.commits}").returncode == 0:
        world.commits += 1
        world.said("git_commit")


def git_back(world: World, d: Daemon) -> None:
    """Everything committed, the commit before checked out (detached HEAD), then ``main``
    again: the daemon writes no tracked file at a detached HEAD, so git must take the
    second checkout. The files are then the commit's, which are the world's."""
    wait_idle(d)
    git_commit(world)
    if git(world.root, "rev-parse", "-q", "--verify", "HEAD~1").returncode != 0:
        return
    r = git(world.root, "checkout", "-q", "--detach", "HEAD~1")
    if r.returncode != 0:  # the daemon wrote after the commit: a person would commit again
        world.said("git_back_refused", stderr=r.stderr[-300:])
        return
    world.said("git_detached")
    time.sleep(world.rng.uniform(0.5, 4))
    r = git(world.root, "checkout", "-q", "main")
    if r.returncode != 0:
        changed = git(world.root, "status", "--porcelain").stdout.splitlines()
        world.failures.append(
            f"git checkout main refused after a detached HEAD: {r.stderr.strip()[-300:]} "
            f"(status: {changed[:5]})"
        )
        git(world.root, "checkout", "-q", "-f", "main")  # the commit's files: the world's
    world.said("git_main")


def config_edit(world: World, d: SoakDaemon) -> None:
    """The people section's limit changed in config.toml as an editor saves it; the
    daemon must start again on it (in-process: the same pid, a new port)."""
    path = world.root / ".memvault" / "config.toml"
    text = path.read_text(encoding="utf-8")
    limit = world.rng.choice([3, 8, 40])
    new = re.sub(r'(name = "people"\n(?:[^\[]*?\n)??limit = )\d+', rf"\g<1>{limit}", text, count=1)
    if new == text:
        return
    tmp = path.with_name(".config.toml.tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, path)
    world.said("config", limit=limit)
    was = d.info
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        info = runfile.read(world.root)
        if info is not None and info.pid == d.proc.pid and info.token != was.token:
            d.info = info
            return
        if d.proc.poll() is not None:
            break
        time.sleep(0.2)
    world.failures.append(
        f"config.toml's people limit {limit}: the daemon did not start again on it"
    )


class SoakDaemon(Daemon):
    """A daemon the script follows when it starts again in-process on new settings."""

    def call(self, method: str, path: str, body: Any = None, timeout: float = 120) -> Any:
        try:
            return super().call(method, path, body, timeout)
        except OSError:
            info = runfile.read(self.root)
            if info is None or info.pid != self.proc.pid or info.token == self.info.token:
                raise
            self.info = info
            return super().call(method, path, body, timeout)


def step(world: World, d: Daemon, kind: str) -> None:
    alive = world.alive()
    pick = (lambda: world.rng.choice(alive)) if alive else None
    if not world.daemon_up and pick is not None:
        i = pick()
        pick = lambda: i  # noqa: E731
        edit = kind in ("append", "replace", "link")
        if (edit and i in world.down_renamed) or (kind == "rename" and i in world.down_edited):
            return
        (world.down_edited if edit else world.down_renamed).add(i)
    if kind == "create" or pick is None:
        world.create()
    elif kind == "append":
        world.append(pick())
    elif kind == "replace":
        world.replace(pick())
    elif kind == "link":
        world.link(pick())
    elif kind == "rename":
        world.rename(pick())
    elif kind == "delete" and len(alive) > 20:
        world.delete(pick())
    elif kind == "folder_rename":
        world.folder_rename()
    elif kind == "agent_log":
        m = world.mark()
        d.call("POST", "/log", {"text": f"{m} agent log line"})
        world.log_lines.append(m)
        world.said("agent_log", mark=m)
    elif kind == "agent_note":
        title = world.name()
        i = world.next_id
        m = world.mark()
        body = {"category": "people", "title": title, "summary": f"sk{i}x", "body": f"{m} met."}
        r = d.call("POST", "/notes", body)
        world.notes[i] = {"path": r["path"], "marks": [f"sk{i}x", m], "links": []}
        world.said("agent_note", id=i, path=r["path"])
    world.counts[kind] = world.counts.get(kind, 0) + 1


# --- checks --------------------------------------------------------------------------


def run(code: Path, model: str | None, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMVAULT_")}
    env["PYTHONPATH"] = str(code / "daemon")
    if model:
        env["MEMVAULT_INDEX_MODEL"] = model
    return subprocess.run(
        [sys.executable, "-m", "memvault", *argv], env=env, capture_output=True, text=True
    )


def wait_idle(d: Daemon, limit: float = 900) -> float:
    started = time.monotonic()
    while not idle(d):
        if time.monotonic() - started > limit:
            raise RuntimeError("the daemon was not idle within the limit")
        time.sleep(0.5)
    return time.monotonic() - started


def files_of(root: Path) -> dict[str, str]:
    out = {}
    for p in root.rglob("*.md"):
        rel = p.relative_to(root).as_posix()
        if not rel.startswith((".memvault/", ".obsidian/")):
            out[rel] = p.read_text(encoding="utf-8", errors="replace")
    return out


def check_words(world: World, files: dict[str, str]) -> list[str]:
    bad = []
    for i, note in world.notes.items():
        text = files.get(note["path"])
        if text is None:
            bad.append(f"note {i} is gone: {note['path']}")
            continue
        bad.extend(f"{note['path']}: lost {m}" for m in note["marks"] if m not in text)
    logs = "\n".join(t for p, t in files.items() if p.lower().startswith("logs/"))
    bad.extend(f"agent log line lost: {m}" for m in world.log_lines if m not in logs)
    return bad


def check_links(world: World, files: dict[str, str], problems: list[dict[str, Any]]) -> list[str]:
    bad = []
    for note in world.notes.values():
        text = (files.get(note["path"]) or "").lower()
        for t in note["links"]:
            stem, rel = world.stem(t).lower(), world.notes[t]["path"][:-3].lower()
            if f"[[{stem}" not in text and f"[[{rel}" not in text:
                bad.append(f"{note['path']}: no link to {world.notes[t]['path']}")
    dead = world.dead_names | (world.churn.dead if world.churn else set())
    for p in problems:
        if p["target"].lower() not in dead and p["target"].lower().rsplit("/", 1)[-1] not in dead:
            bad.append(f"links check: {p['source']}:{p['line']} {p['text']} ({p['verdict']})")
    return bad


def check_fresh(code: Path, model: str | None, root: Path, scratch: Path) -> tuple[list[str], Any]:
    """The vault's files copied with config.toml alone, synced from nothing: the same
    MEMORY.md and folder notes, and the same counts, as the running daemon's index."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(root, scratch, ignore=shutil.ignore_patterns(".memvault"))
    (scratch / ".memvault").mkdir()
    shutil.copy2(root / ".memvault" / "config.toml", scratch / ".memvault" / "config.toml")
    before = files_of(scratch)
    r = run(code, model, "sync", "--vault", str(scratch), "--json")
    if r.returncode not in (0, 1):
        return [f"fresh sync failed ({r.returncode}): {r.stderr[-500:]}"], None
    after = files_of(scratch)
    bad = [f"a fresh index rewrote {p}" for p in sorted(after) if before.get(p) != after[p]]
    bad += [f"a fresh index wrote {p}" for p in sorted(set(after) - set(before))]
    st = json.loads(run(code, model, "status", "--vault", str(scratch), "--json").stdout)
    return bad, st


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def outlived(kids: list[int], within: float = 10.0) -> list[int]:
    """Those of a stopped daemon's children still running ``within`` seconds later."""
    deadline = time.monotonic() + within
    while any(alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [k for k in kids if alive(k)]


def health(d: Daemon, root: Path) -> dict[str, Any]:
    pid = d.proc.pid
    st = d.call("GET", "/status")
    mem = root / ".memvault"
    kids_kb = children_kb(pid, "VmRSS")
    return {
        "rss_mb": round(d.status_kb("VmRSS") / 1024, 1),
        "hwm_mb": round(d.status_kb("VmHWM") / 1024, 1),
        "children": len(kids_kb),  # the model's own process while it is loaded
        "children_rss_mb": round(sum(kids_kb) / 1024, 1),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": d.status_kb("Threads"),
        "memvault_bytes": sum(p.stat().st_size for p in mem.rglob("*") if p.is_file()),
        "daemon_log_bytes": Path(d.log.name).stat().st_size,  # since its last start
        "warnings": len(st["daemon"].get("warnings") or []),
        "last_warnings": (st["daemon"].get("warnings") or [])[-3:],
        "last_error": st["daemon"].get("last_error"),
        "restarts": st["daemon"].get("restarts"),
        "overflows": st["daemon"].get("overflows"),
        "notes": st["notes"],
        "chunks": st["index"]["chunks"],
        "memory_lines": st["memory"]["lines"],
        "memory_over": st["memory"]["over_budget"],
    }


def check(world: World, d: Daemon, code: Path, model: str | None, work: Path) -> dict[str, Any]:
    waited = wait_idle(d)
    root = world.root
    files = files_of(root)
    problems = json.loads(run(code, model, "links", "check", "--vault", str(root), "--json").stdout)
    h = health(d, root)
    fails = check_words(world, files) + check_links(world, files, problems["problems"])
    if world.churn is not None:
        memory = files.get("MEMORY.md", "")
        fails += [f"MEMORY.md lost {m}" for m in world.churn.memory_marks if m not in memory]
    fresh_bad, fresh = check_fresh(code, model, root, work / "fresh")
    fails += fresh_bad
    if fresh is not None:
        for key, mine in (("notes", h["notes"]), ("chunks", h["chunks"])):
            theirs = fresh["notes"] if key == "notes" else fresh["index"]["chunks"]
            if theirs != mine:
                fails.append(f"{key}: the daemon's index {mine}, a fresh one {theirs}")
    if h["memory_over"]:
        fails.append(f"MEMORY.md over its limits: {h['memory_lines']} lines")
    if h["children"] > 1:
        fails.append(f"the daemon runs {h['children']} child processes (at most its model's)")
    fails += [f"a child process outlived its daemon: {o}" for o in world.orphans]
    world.orphans.clear()
    fails += world.failures
    world.failures.clear()
    return {"idle_after_s": round(waited, 1), "alive": len(world.notes), **h, "failures": fails}


LOG_FILE: tuple[str, ...] = ()  # ("--log-file",) with --log-file


def start(root: Path, model: str | None, code: Path) -> Daemon:
    d = SoakDaemon(root, model, code=code, args=LOG_FILE)
    wait_idle(d)
    return d


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--notes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--model", default="hash", help="MEMVAULT_INDEX_MODEL ('default': the real one)"
    )
    ap.add_argument("--code", type=Path, default=ROOT, help="a checkout whose daemon/ runs")
    ap.add_argument("--check-every", type=float, default=180, help="seconds between checks")
    ap.add_argument("--pause", type=float, default=0.3, help="mean seconds between changes")
    ap.add_argument("--no-restarts", action="store_true", help="the daemon is never stopped")
    ap.add_argument("--work", type=Path, default=Path("/tmp/memvault-soak"))
    ap.add_argument("--git", action="store_true", help="a git repository: commits, checkouts")
    ap.add_argument("--config-edits", action="store_true", help="config.toml edited now and then")
    ap.add_argument("--realistic", type=int, default=0, help="this many real-ish notes more")
    ap.add_argument("--clone", action="store_true", help="--git, a bare remote, a clone's pulls")
    ap.add_argument("--sample-every", type=float, default=0, help="seconds between samples")
    ap.add_argument("--log-file", action="store_true", help="the daemon logs to daemon.log")
    a = ap.parse_args()
    global LOG_FILE
    LOG_FILE = ("--log-file",) if a.log_file else ()
    a.git = a.git or a.clone
    model = None if a.model == "default" else a.model
    code = a.code.resolve()
    shutil.rmtree(a.work, ignore_errors=True)
    root = a.work / "vault"
    root.mkdir(parents=True)
    r = run(code, model, "init", str(root))
    if r.returncode != 0:
        raise SystemExit(f"init failed: {r.stderr}")
    rng = random.Random(a.seed)
    world = World(root, rng)
    for _ in range(a.notes):
        world.create()
    if a.realistic:
        world.churn = Churn(root, a.work, rng, world.said)
        world.churn.tracked = lambda: {n["path"] for n in world.notes.values()}
        build(root, a.realistic, random.Random(a.seed + 1000))
        WEIGHTS.update(MONTHS_WEIGHTS)
    started = time.monotonic()
    run(code, model, "sync", "--vault", str(root))
    print(f"first index: {time.monotonic() - started:.0f} s", flush=True)
    if a.git:
        git(root, "init", "-q", "-b", "main")
        git(root, "config", "user.email", "soak@example.com")
        git(root, "config", "user.name", "soak")
        git_commit(world)
        WEIGHTS.update(GIT_WEIGHTS)
    if a.clone:
        assert world.churn is not None, "--clone needs --realistic"
        world.churn.make_clone()
        WEIGHTS.update(CLONE_WEIGHTS)
        WEIGHTS.pop("git_back")
    if a.config_edits:
        WEIGHTS.update(CONFIG_WEIGHTS)
    out = open(a.work / "soak.jsonl", "w")  # noqa: SIM115
    d = start(root, model, code)
    world.daemon_up = True
    current = [d]
    sampler = None
    if a.sample_every:
        log = root / ".memvault" / "daemon.log" if a.log_file else root.parent / "daemon-bench.log"
        churn = world.churn or Churn(root, a.work, rng, world.said)
        sampler = Sampler(
            a.sample_every, a.work / "samples.jsonl", root, lambda: current[0].proc.pid, log, churn
        )
        sampler.start()
    next_probe = time.monotonic() + (a.sample_every or 1e9)
    if a.no_restarts:
        WEIGHTS.update(restart=0, kill=0)
    kinds, weights = zip(*WEIGHTS.items(), strict=True)
    ends = time.monotonic() + a.minutes * 60
    next_check = time.monotonic() + a.check_every
    checks, failed = 0, 0
    while True:
        now = time.monotonic()
        if now >= next_check or now >= ends:
            report = {
                "t_min": round((now - ends) / 60 + a.minutes, 1),
                **check(world, d, code, model, a.work),
            }
            report["ops"] = dict(world.counts)
            print(json.dumps({k: v for k, v in report.items() if k != "ops"}), flush=True)
            out.write(json.dumps(report) + "\n")
            out.flush()
            checks += 1
            failed += bool(report["failures"])
            if now >= ends:
                break
            next_check = time.monotonic() + a.check_every
        kind = rng.choices(kinds, weights)[0]
        if kind == "burst":
            for _ in range(rng.randint(50, 150)):
                step(world, d, rng.choices(kinds[:6], weights[:6])[0])
        elif kind in ("restart", "kill"):
            world.daemon_up = False
            world.said(kind)
            kids = d.children()
            if kind == "kill":
                d.proc.send_signal(signal.SIGKILL)
                d.proc.wait(30)
                d.log.close()
            else:
                d.stop()
            world.orphans += [f"pid {k} after a {kind}" for k in outlived(kids)]
            for _ in range(rng.randint(0, 20)):  # changes while no daemon runs
                step(world, d, rng.choices(kinds[:6], weights[:6])[0])
            if world.churn is not None:
                world.churn.close()
            d = start(root, model, code)
            current[0] = d
            world.daemon_up = True
            world.down_renamed.clear()
            world.down_edited.clear()
            world.said("started")
        elif kind == "git_commit":
            git_commit(world)
        elif kind == "git_back":
            git_back(world, d)
        elif kind == "config":
            config_edit(world, d)
        elif kind in MONTHS_WEIGHTS or kind == "pull":
            c = world.churn
            assert c is not None
            if kind == "query":
                c.query(d)
            elif kind == "pull":
                c.pull()
            else:
                getattr(c, kind)()
            world.counts[kind] = world.counts.get(kind, 0) + 1
        else:
            step(world, d, kind)
        world.counts[kind] = world.counts.get(kind, 0) + (
            kind in ("burst", "restart", "kill", "git_commit", "git_back", "config")
        )
        if world.churn is not None and time.monotonic() >= next_probe:
            world.churn.probe(d)
            next_probe = time.monotonic() + a.sample_every
        time.sleep(rng.expovariate(1 / a.pause))
    if sampler is not None:
        sampler.stop.set()
    end: dict[str, Any] = {}
    if world.churn is not None:
        c = world.churn
        world.churn.close()
        lat = sorted(c.latencies)
        qs = sorted(c.query_seconds)
        end = {
            "probe_s": [round(lat[int(q * (len(lat) - 1))], 3) for q in (0.5, 0.95, 1)]
            if lat
            else None,
            "query_s": [round(qs[int(q * (len(qs) - 1))], 3) for q in (0.5, 0.95, 1)]
            if qs
            else None,
            "pulls": c.pulls,
        }
    d.stop()
    if world.churn is not None:  # the long-run index against the last check's fresh one
        end.update(compare(lambda *argv: run(code, model, *argv), root, a.work / "fresh"))
        # the same vault under a daemon just started, after the same queries: what the
        # long-run daemon holds beyond it is what the run left behind
        last_rss = report.get("rss_mb")
        d = start(root, model, code)
        for q in QUERIES:
            d.call("POST", "/search", {"query": q, "k": 10})
            d.call("POST", "/context", {"query": q, "budget": 1500})
        wait_idle(d)
        end["rss_long_mb"] = last_rss
        end["rss_restarted_mb"] = round(d.status_kb("VmRSS") / 1024, 1)
        end["fds_restarted"] = len(os.listdir(f"/proc/{d.proc.pid}/fd"))
        d.stop()
        (a.work / "compare.json").write_text(json.dumps(end, indent=1, ensure_ascii=False))
    summary = {"summary": True, "checks": checks, "failed_checks": failed, "ops": world.counts}
    summary.update({k: v for k, v in end.items() if k != "searches"})
    print(json.dumps(summary), flush=True)
    out.write(json.dumps(summary) + "\n")
    out.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
