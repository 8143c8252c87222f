"""bench/soak.py's long-run parts (``--realistic``, ``--clone``, ``--sample-every``): a
vault of real-ish notes, the churn a person, a second machine (git) and agents make on
it, a sampler of what a long-running daemon holds and leaves, and the end's comparison
of the long-run index with a fresh one.

- ``build(root, n, rng)``: ``n`` notes of sentences in people/, projects/, decisions/,
  logs/, a person's own folders (``Reading/2023``, ``Recipes``, ``Work notes``), a German
  and a Japanese folder; links between them. Their names are slugs (no space): the
  script's other notes (soak.World's) have spaces, so the two never mix.
- ``Churn``: a person's saves (temp file + rename, as Obsidian saves), MEMORY.md edited by
  hand above memvault's sections, the day's log appended, Claude's memory tool (the
  Python API through the daemon), searches and ``context`` calls, and ``pull``: a
  second clone's commits (edits, renames, deletes, new notes, a folder renamed) pulled
  into the vault through a bare remote, the vault's own commits pushed first.
- ``Sampler``: a thread that every ``every`` seconds writes a line of ``samples.jsonl``:
  the daemon's RSS and its model process's, open files, threads, the sizes of index.db,
  its -wal, cache.db, vectors.bin and ``.memvault/``, index.db's free pages, the saved
  graph's elements (live, deleted) against the index's chunks, cache.db's vectors,
  pending chunks, the daemon log's bytes, temp files in the vault and in ``.memvault/``,
  and the last save -> searchable latency (``Churn.probe``).
- ``compare(...)``: after the daemon stopped, the vault's index against a fresh one of
  the same files: sizes, and the top 10 of each query by ``memvault search``.
"""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from daemon_bench import Daemon, children_kb, status_kb
from memvault.index.vectors_file import inspect_index_file

PEOPLE = [
    "ana-lopez", "bjorn-olsen", "zoe-park", "sarah-chen", "omar-haddad", "mei-tanaka",
    "lukas-weber", "priya-nair", "diego-ramos", "fatima-zahra", "kenji-sato", "olga-ivanova",
]  # fmt: skip
TOPICS = [
    "retrieval", "billing", "search latency", "onboarding", "the data pipeline", "pricing",
    "the mobile app", "backups", "the vector index", "hiring", "the release train",
    "incident response", "customer interviews", "the migration to PostgreSQL", "caching",
]  # fmt: skip
VERBS = [
    "agreed to", "proposed to", "decided not to", "will try to", "asked whether we could",
    "reminded everyone to", "wants to", "is worried we cannot", "suggested we",
]  # fmt: skip
ACTS = [
    "move the queue to Kafka", "cut the p95 below 200 ms", "drop the legacy endpoint",
    "write the runbook first", "pair on the schema change", "review the budget in March",
    "ship behind a flag", "keep the old index for a week", "measure before optimising",
    "split the service in two", "ask legal about the contract", "freeze the API",
]  # fmt: skip
GERMAN = [
    "Die Besprechung über {t} wurde auf Donnerstag verschoben.",
    "Wir müssen die Übergabe an das Betriebsteam noch schriftlich festhalten.",
    "Größere Änderungen am Schema brauchen eine Prüfung durch zwei Personen.",
    "Für {t} gibt es noch keine Entscheidung; nächste Woche erneut besprechen.",
]  # fmt: skip
JAPANESE = [
    "{t}についての会議は木曜日に延期されました。",
    "検索の遅延を二百ミリ秒以下にする必要があります。",
    "新しいスキーマの変更は二人のレビューが必要です。",
    "来週までにバックアップの手順を確認してください。",
]  # fmt: skip
OWN = ["Reading/2023", "Reading/2024", "Recipes", "Work notes"]
QUERIES = [
    "what did we decide about the migration to PostgreSQL",
    "search latency p95",
    "who leads hiring",
    "Kafka queue",
    "runbook for incident response",
    "Besprechung Schema Änderungen",
    "検索の遅延",
    "customer interviews pricing",
    "backups restore test",
    "release train flag",
]


def sentence(rng: random.Random) -> str:
    who = rng.choice(PEOPLE).split("-")[0].title()
    return f"{who} {rng.choice(VERBS)} {rng.choice(ACTS)} for {rng.choice(TOPICS)}."


def paragraph(rng: random.Random, n: int) -> str:
    return " ".join(sentence(rng) for _ in range(n))


def note_text(rng: random.Random, title: str, folder: str, links: list[str]) -> str:
    if folder == "Notizen":
        body = " ".join(rng.choice(GERMAN).format(t=rng.choice(TOPICS)) for _ in range(6))
    elif folder == "日本語":
        body = "".join(rng.choice(JAPANESE).format(t=rng.choice(TOPICS)) for _ in range(6))
    else:
        body = "\n\n".join(paragraph(rng, rng.randint(2, 6)) for _ in range(rng.randint(1, 4)))
    see = " ".join(f"[[{t}]]" for t in links)
    head = f"---\ntags: [{rng.choice(['work', 'team', 'ideas'])}]\n---\n"
    return f"{head}# {title}\n\n{body}\n\n## Notes\n\n{paragraph(rng, 2)}\n\nSee {see}\n"


def build(root: Path, n: int, rng: random.Random) -> int:
    """``n`` slug-named notes (see the module's doc); returns how many were written."""
    folders = ["people", "projects", "decisions", *OWN, "Notizen", "日本語"]
    made: list[str] = []
    for p in PEOPLE:
        made.append(f"people/{p}")
    day = 0
    for i in range(n - len(PEOPLE)):
        if i % 8 == 0:  # a day's log
            day += 1
            y, rest = divmod(day, 336)
            rel = f"logs/{2023 + y}-{1 + rest // 28:02}-{1 + rest % 28:02}"
        else:
            folder = folders[(i * 7) % len(folders)]
            rel = f"{folder}/{folder.split('/')[0].lower()[:4]}-{i:05}"
        made.append(rel)
    for rel in made:
        links = rng.sample(made, 3)
        title = rel.rsplit("/", 1)[1].replace("-", " ").title()
        path = root / f"{rel}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, title, rel.split("/")[0], links), encoding="utf-8")
    return len(made)


def is_base(rel: str) -> bool:
    """A note of ``build``'s (a slug, no space), not a folder note, MEMORY.md or a template."""
    parts = rel.split("/")
    return (
        rel.endswith(".md")
        and " " not in parts[-1]
        and len(parts) > 1
        and parts[0] not in ("templates", ".memvault", ".obsidian", "archive")
        and parts[-1][:-3] != parts[-2]
    )


def atomic_save(path: Path, text: str) -> None:
    """As Obsidian saves: a temp file beside the note, renamed over it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def git(root: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *argv], capture_output=True, text=True)


class Churn:
    """The long run's changes beside soak.World's (see the module's doc)."""

    def __init__(self, root: Path, work: Path, rng: random.Random, said: Callable[..., None]):
        self.root, self.work, self.rng, self.said = root, work, rng, said
        self.clone: Path | None = None
        self.seq = 0
        self.memory_marks: list[str] = []
        self.dead: set[str] = set()  # names of base notes the clone deleted (lower case)
        self.latencies: list[float] = []  # save -> searchable, seconds
        self.query_seconds: list[float] = []
        self.pulls = {"ok": 0, "conflict": 0, "refused": 0}
        self._vault: Any = None  # the Python API's Vault, through the daemon
        self._listed: list[str] = []
        self._listed_at = 0.0
        # soak.World's notes (their paths now): the clone leaves them alone, as an agent's
        # note named as a slug (people/björn-1952.md) looks like one of build's
        self.tracked: Callable[[], set[str]] = set

    def base_notes(self, root: Path | None = None) -> list[str]:
        here = root or self.root
        if root is None and time.monotonic() - self._listed_at < 20:
            return self._listed
        out = sorted(
            p.relative_to(here).as_posix()
            for p in here.rglob("*.md")
            if is_base(p.relative_to(here).as_posix())
        )
        if root is None:
            self._listed, self._listed_at = out, time.monotonic()
        return out

    def mark(self, kind: str) -> str:
        self.seq += 1
        return f"zz{kind}{self.seq}q"

    # --- a person -------------------------------------------------------------------

    def person_save(self) -> None:
        notes = self.base_notes()
        if not notes:
            return
        rel = self.rng.choice(notes)
        path = self.root / rel
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return  # moved meanwhile (a pull)
        atomic_save(path, text + f"\n{sentence(self.rng)}\n")
        self.said("person_save", path=rel)

    def memory_edit(self) -> None:
        """A line typed into MEMORY.md above memvault's sections, saved atomically."""
        path = self.root / "MEMORY.md"
        text = path.read_text(encoding="utf-8")
        at = text.find("<!-- memvault:begin")
        if at < 0:
            return
        m = self.mark("mem")
        if len(self.memory_marks) >= 3:  # a person's list stays short: the oldest line goes
            old = self.memory_marks.pop(0)
            text = text.replace(f"- remember {old}\n", "", 1)
            at = text.find("<!-- memvault:begin")
        head = text[:at].rstrip("\n").rsplit("\n## ", 1)[0]  # before the section's heading
        new = head + f"\n- remember {m}\n" + text[len(head) :]
        atomic_save(path, new)
        self.memory_marks.append(m)
        self.said("memory_edit", mark=m)

    def daily_log(self) -> None:
        path = self.root / "logs" / f"{time.strftime('%Y-%m-%d')}.md"
        path.parent.mkdir(exist_ok=True)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"- {time.strftime('%H:%M')} {sentence(self.rng)}\n")
        self.said("daily_log")

    # --- agents ---------------------------------------------------------------------

    def vault(self) -> Any:
        from memvault.api import Vault

        if self._vault is None:
            self._vault = Vault.open(self.root)
        return self._vault

    def close(self) -> None:
        if self._vault is not None:
            self._vault.close()
            self._vault = None

    def memory_tool(self) -> None:
        """Claude's memory tool's commands, as VaultMemoryTool runs them (Vault.memory_tool)."""
        v = self.vault()
        n = self.seq + 1
        name = f"/memories/soak-topic-{self.rng.randint(1, 40)}.md"
        kind = self.rng.choice(["create", "view", "str_replace", "view_root"])
        cmd: dict[str, Any]
        if kind == "create":
            cmd = {
                "command": "create",
                "path": name,
                "file_text": f"# Topic\n\n{sentence(self.rng)}\n",
            }
        elif kind == "view_root":
            cmd = {"command": "view", "path": "/memories"}
        elif kind == "view":
            cmd = {"command": "view", "path": name}
        else:
            cmd = {
                "command": "str_replace",
                "path": name,
                "old_str": "# Topic",
                "new_str": f"# Topic {n}",
            }
        try:
            v.memory_tool(cmd)
        except Exception as exc:
            self.said("memory_tool_refused", cmd=kind, error=str(exc)[:120])
            return
        self.said("memory_tool", cmd=kind)

    def query(self, d: Daemon) -> None:
        q = self.rng.choice(QUERIES)
        started = time.perf_counter()
        if self.rng.random() < 0.5:
            d.call("POST", "/search", {"query": q, "k": 10})
        else:
            d.call("POST", "/context", {"query": q, "budget": 1500})
        self.query_seconds.append(time.perf_counter() - started)

    def probe(self, d: Daemon, limit: float = 60) -> float | None:
        """A person's save of a new word -> the search that finds it, seconds."""
        notes = self.base_notes()
        if not notes:
            return None
        rel = self.rng.choice(notes)
        path = self.root / rel
        word = self.mark("probe")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError:
            return None
        atomic_save(path, text + f"\nprobe {word}\n")
        started = time.perf_counter()
        while time.perf_counter() - started < limit:
            hits = d.call("POST", "/search", {"query": word, "k": 3}).get("hits", [])
            if any(word in (h.get("text") or "") for h in hits):
                seconds = time.perf_counter() - started
                self.latencies.append(seconds)
                return seconds
            time.sleep(0.05)
        self.said("probe_lost", path=rel, word=word)
        return None

    # --- a second machine -----------------------------------------------------------

    def make_clone(self) -> None:
        bare = self.work / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
        git(self.root, "remote", "add", "origin", str(bare))
        git(self.root, "push", "-q", "origin", "main")
        self.clone = self.work / "clone"
        subprocess.run(["git", "clone", "-q", str(bare), str(self.clone)], check=True)
        git(self.clone, "config", "user.email", "laptop@example.com")
        git(self.clone, "config", "user.name", "laptop")

    def _commit_here(self) -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", "desktop")

    def _merge(self) -> bool:
        self._commit_here()
        r = git(self.root, "pull", "-q", "--no-rebase", "--no-edit", "origin", "main")
        if r.returncode == 0:
            return True
        if git(self.root, "rev-parse", "-q", "--verify", "MERGE_HEAD").returncode == 0:
            self.pulls["conflict"] += 1
            self.said("pull_conflict", stderr=r.stderr[-300:])
            git(self.root, "merge", "--abort")
        else:
            self.pulls["refused"] += 1
            self.said("pull_refused", stderr=r.stderr[-300:])
        return False

    def pull(self) -> None:
        """The vault's commits pushed, a second clone's made and pushed, then pulled."""
        assert self.clone is not None
        if self._merge():
            git(self.root, "push", "-q", "origin", "main")
        c = self.clone
        git(c, "pull", "-q", "--no-rebase", "--no-edit")
        theirs = self.tracked()
        notes = [
            n for n in self.base_notes(c) if n.lower()[:-3] not in self.dead and n not in theirs
        ]
        done = []
        for _ in range(self.rng.randint(1, 6)):
            if not notes:
                break
            rel = self.rng.choice(notes)
            kind = self.rng.choices(
                ["edit", "rename", "delete", "create", "folder"], [5, 3, 1, 2, 0.3]
            )[0]
            path = c / rel
            if not path.exists():
                continue
            if kind == "edit":
                lines = path.read_text(encoding="utf-8").split("\n")
                lines.insert(min(6, len(lines)), f"Laptop: {sentence(self.rng)}")
                path.write_text("\n".join(lines), encoding="utf-8")
            elif kind == "rename":
                new = f"{rel.rsplit('/', 1)[0]}/{path.stem}-r{self.seq}.md"
                self.seq += 1
                git(c, "mv", rel, new)
                notes.remove(rel)
            elif kind == "delete":
                git(c, "rm", "-q", rel)
                self.dead.update({path.stem.lower(), rel[:-3].lower()})
                notes.remove(rel)
            elif kind == "create":
                self.seq += 1
                folder = rel.rsplit("/", 1)[0]
                new = c / folder / f"laptop-{self.seq}.md"
                new.write_text(note_text(self.rng, f"Laptop {self.seq}", folder, [path.stem]))
            elif kind == "folder":
                old = self.rng.choice(["Reading/2023", "Reading/2024"])
                hits = [f for f in (c / "Reading").iterdir() if f.name.startswith(old[8:])]
                if not hits:
                    continue
                src = hits[0].relative_to(c).as_posix()
                dst = f"Reading/{old[8:]}-{self.seq}"
                self.seq += 1
                git(c, "mv", src, dst)
                notes = [n for n in notes if not n.startswith(src + "/")]
            done.append(kind)
        git(c, "add", "-A")
        if git(c, "commit", "-q", "-m", f"laptop {self.seq}").returncode != 0:
            return
        if git(c, "push", "-q", "origin", "main").returncode != 0:
            self.said("clone_push_refused")
            return
        if self._merge():
            self.pulls["ok"] += 1
            self.said("pull", changes=done)
            git(self.root, "push", "-q", "origin", "main")
        self._listed_at = 0.0


# --- the sampler -------------------------------------------------------------------------


def _db_counts(path: Path, queries: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error as exc:
        return {"error": str(exc)}
    try:
        for key, sql in queries.items():
            try:
                out[key] = con.execute(sql).fetchone()[0]
            except sqlite3.Error as exc:
                out[key] = f"error: {exc}"
    finally:
        con.close()
    return out


def graph_counts(mem: Path) -> dict[str, Any]:
    path = mem / "vectors.bin"
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    dim = int.from_bytes(data[-8:-4], "little") if data[-4:] == b"MVG1" else 0
    try:
        info = inspect_index_file(data, dim)
    except Exception as exc:
        return {"graph_error": str(exc)[:100]}
    deleted = int(info.deleted.sum())
    return {"graph_elements": len(info.labels), "graph_deleted": deleted}


def temp_files(root: Path) -> list[str]:
    out = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for f in files:
            if (
                ".memvault-tmp-" in f
                or f.endswith((".tmp", "-journal"))
                or f.startswith("memvault-vectors-")
            ):
                out.append(os.path.relpath(os.path.join(dirpath, f), root))
    return out


def sample(pid: int, root: Path, log: Path | None) -> dict[str, Any]:
    mem = root / ".memvault"

    def size(name: str) -> int:
        try:
            return (mem / name).stat().st_size
        except OSError:
            return 0

    kids = children_kb(pid, "VmRSS")
    out: dict[str, Any] = {
        "t": round(time.time(), 1),
        "rss_mb": round(status_kb(pid, "VmRSS") / 1024, 1),
        "model_rss_mb": round(sum(kids) / 1024, 1),
        "children": len(kids),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "threads": status_kb(pid, "Threads"),
        "index_db": size("index.db"),
        "index_wal": size("index.db-wal"),
        "cache_db": size("cache.db"),
        "cache_wal": size("cache.db-wal"),
        "vectors_bin": size("vectors.bin"),
        "memvault_bytes": sum(p.stat().st_size for p in mem.rglob("*") if p.is_file()),
        "memvault_files": sorted(p.name for p in mem.iterdir()),
        "log_bytes": log.stat().st_size if log and log.exists() else None,
        "temps": temp_files(root),
        "tmp_dir_loads": len([f for f in os.listdir("/tmp") if f.startswith("memvault-vectors-")]),
    }
    out.update(
        _db_counts(
            mem / "index.db",
            {
                "freelist": "PRAGMA freelist_count",
                "pages": "PRAGMA page_count",
                "chunks": "SELECT count(*) FROM chunks",
                "notes_rows": "SELECT count(*) FROM notes",
                "links_rows": "SELECT count(*) FROM links",
                "pending": "SELECT count(*) FROM pending",
                "max_label": "SELECT max(label) FROM chunks",
                "fts_data_rows": "SELECT count(*) FROM chunks_fts_data",
                "memory_owned": "SELECT count(*) FROM memory_owned",
            },
        )
    )
    out.update(
        {
            f"cache_{k}": v
            for k, v in _db_counts(
                mem / "cache.db",
                {"rows": "SELECT count(*) FROM vectors", "freelist": "PRAGMA freelist_count"},
            ).items()
        }
    )
    out.update(graph_counts(mem))
    return out


class Sampler(threading.Thread):
    """A line of ``out`` every ``every`` seconds (see the module's doc)."""

    def __init__(
        self,
        every: float,
        out: Path,
        root: Path,
        pid: Callable[[], int],
        log: Path | None,
        churn: Churn,
    ):
        super().__init__(daemon=True, name="soak-sampler")
        self.every, self.root, self.pid, self.log, self.churn = every, root, pid, log, churn
        self.out = open(out, "a")  # noqa: SIM115
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.every):
            try:
                s = sample(self.pid(), self.root, self.log)
            except Exception as exc:
                s = {"t": round(time.time(), 1), "error": repr(exc)[:200]}
            lat = self.churn.latencies[-10:]
            s["probe_s"] = [round(x, 3) for x in lat]
            self.out.write(json.dumps(s, ensure_ascii=False) + "\n")
            self.out.flush()


# --- the end -----------------------------------------------------------------------------


def compare(
    run: Callable[..., subprocess.CompletedProcess[str]], root: Path, fresh: Path
) -> dict[str, Any]:
    """The long-run index against the fresh one (the daemon stopped): sizes, searches."""

    def sizes(r: Path) -> dict[str, int]:
        mem = r / ".memvault"
        out = {p.name: p.stat().st_size for p in mem.iterdir() if p.is_file()}
        out["total"] = sum(out.values())
        return out

    hits = []
    for q in QUERIES:
        tops = []
        for r in (root, fresh):
            res = run("search", q, "--vault", str(r), "--json", "-k", "10")
            try:
                tops.append([h["path"] for h in json.loads(res.stdout)["hits"]])
            except (ValueError, KeyError):
                tops.append([f"error {res.returncode}: {res.stderr[-200:]}"])
        same = len(set(tops[0]) & set(tops[1]))
        hits.append(
            {
                "query": q,
                "same_top1": tops[0][:1] == tops[1][:1],
                "overlap10": same,
                "long": tops[0],
                "fresh": tops[1],
            }
        )
    return {"sizes_long": sizes(root), "sizes_fresh": sizes(fresh), "searches": hits}
