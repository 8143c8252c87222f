"""What agents and people met writing through memvault's interfaces (the field, round 2).

Each test reproduces a defect found by using the real CLI, HTTP API, MCP server and
Python API on a scratch vault as a careless or hostile user would: the real filesystem,
SQLite and the HTTP app in-process; the hash embedder (the model is not the point).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from helpers import new_vault, note, open_vault, write
from memvault.api import Vault
from memvault.core.text import decode
from memvault.errors import (
    LockHeld,
    MemvaultError,
    NoteExists,
    NoteNotFound,
    UnsafePath,
    VaultNotFound,
)
from memvault.index.embedder import HashEmbedder
from memvault.interfaces.cli import app as cli_app
from memvault.service.http_api import create_app

DAEMON_DIR = Path(__file__).resolve().parents[1] / "daemon"
PORT = 48131
TOKEN = "field-writes-token-" + "x" * 24
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@contextmanager
def http(vault: Vault) -> Iterator[TestClient]:
    app = create_app(vault, TOKEN, lambda: {"port": PORT}, port=PORT)
    try:
        with TestClient(app, base_url=f"http://127.0.0.1:{PORT}", headers=AUTH) as client:
            yield client
    finally:
        app.state.close()


def readable(root: Path) -> None:
    """Every note of the vault is still text memvault (and an editor) can read."""
    for path in root.rglob("*.md"):
        if ".memvault" not in path.parts:
            decode(path.read_bytes())  # raises NotText for a file turned binary


# -- a NUL character an agent sends ---------------------------------------------------------
#
# It was written as it came: `POST /log {"text": "a\u0000b"}` put a NUL into today's log,
# which memvault then read as a binary file: that write and every later `log` of the day
# failed ("binary file (NUL bytes)") and the day's log left the index. A NUL in a title
# did the same to the new note (the `# title` heading), and one in a summary to MEMORY.md
# and the folder note (the entry's description), which memvault could no longer keep.


NUL_WRITES = [
    ("/log", {"text": "deployed a\x00b"}),
    ("/notes", {"category": "people", "title": "Nul\x00Title"}),
    ("/notes", {"category": "people", "title": "Nul body", "body": "one\x00two"}),
    ("/notes", {"category": "people", "title": "Nul summary", "summary": "one\x00two"}),
]


@pytest.mark.parametrize(("route", "body"), NUL_WRITES)
def test_a_nul_character_is_refused_with_400_and_nothing_is_written(
    tmp_path: Path, route: str, body: dict
) -> None:
    root = new_vault(tmp_path)
    memory = (root / "MEMORY.md").read_bytes()
    with open_vault(root) as v:
        v.sync()
        v.log("before")  # today's log exists
        with http(v) as client:
            r = client.post(route, json=body)
            assert r.status_code == 400, r.text
            assert "NUL" in r.json()["error"]["message"]
            # the day's log still takes entries
            assert client.post("/log", json={"text": "after"}).status_code == 200
    assert list((root / "people").iterdir()) == []
    (log,) = (root / "logs").glob("*.md")
    entries = [ln.split(" ", 2)[2] for ln in log.read_text("utf-8").splitlines() if ln[:2] == "- "]
    assert entries == ["before", "after"]
    assert (root / "MEMORY.md").read_bytes() != memory  # the log is listed
    readable(root)


def test_the_cli_refuses_a_nul_from_stdin_with_exit_2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    result = CliRunner().invoke(
        cli_app,
        ["add", "people", "--title", "Ana", "--body", "-", "--vault", str(root)],
        input="line one\x00line two\n",
    )
    assert result.exit_code == 2, result.output
    assert "NUL" in result.stderr
    assert list((root / "people").iterdir()) == []


def test_a_summary_holding_a_nul_in_a_persons_note_keeps_memory_md_text(tmp_path: Path) -> None:
    # YAML's "\0" escape is how a person (or a sync tool) can put one in a note
    root = new_vault(tmp_path)
    write(root, "people/ana.md", '---\nsummary: "Ana\\0Lopez\\x07 runs ops"\n---\n# Ana\n')
    write(root, "projects/beta.md", note("Beta", "the beta", status="active"))
    with open_vault(root) as v:
        v.sync()
        write(root, "projects/gamma.md", note("Gamma", "the gamma", status="active"))
        report = v.sync()
    assert list(report.created) == ["projects/gamma.md"]
    text = (root / "MEMORY.md").read_text(encoding="utf-8")
    assert "- [[people/ana]] - Ana Lopez runs ops" in text.splitlines()
    assert "[[projects/gamma]]" in text  # MEMORY.md is still kept
    readable(root)


# -- the Python API used carelessly ---------------------------------------------------------


def test_a_closed_vault_says_it_is_closed(tmp_path: Path) -> None:
    # was: sqlite3.ProgrammingError ("Cannot operate on a closed database") for a read,
    # and "this vault was opened read-only" for a write on a vault opened for writing
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        v.sync()
    calls = {
        "search": lambda: v.search("anything"),
        "context": lambda: v.context("anything"),
        "get": lambda: v.get("MEMORY.md"),
        "status": v.status,
        "links_check": v.links_check,
        "add": lambda: v.add("people", "Ana"),
        "log": lambda: v.log("an entry"),
        "sync": v.sync,
    }
    for name, call in calls.items():
        with pytest.raises(MemvaultError, match="is closed") as caught:
            call()
        assert type(caught.value) is MemvaultError, name
    v.close()  # a second close is harmless
    assert list((root / "people").iterdir()) == [] and not list((root / "logs").iterdir())
    with open_vault(root) as again:  # and the vault opens again
        assert again.get("MEMORY.md").text.startswith("# Memory Index")


def test_opening_a_file_of_a_vault_names_the_vault(tmp_path: Path) -> None:
    # was: "not a folder (create one with `memvault init <vault>/MEMORY.md`)"
    root = new_vault(tmp_path)
    write(root, "people/ana.md", note("Ana"))
    for path in (root / "MEMORY.md", root / "people/ana.md"):
        with pytest.raises(VaultNotFound) as caught:
            Vault.open(path, embedder=HashEmbedder())
        message = str(caught.value)
        assert f"the vault is the folder holding it, {root}" in message
        assert "memvault init" not in message
    loose = write(tmp_path, "loose/MEMORY.md", "# an agent's own memory\n")
    with pytest.raises(VaultNotFound, match="is a file, not a folder: a vault is a folder"):
        Vault.open(loose, embedder=HashEmbedder())


# -- a vault inside a vault -----------------------------------------------------------------
#
# `memvault init people` run in a vault (or `up`, or following the CLI's own advice for
# `--vault people`: "`memvault init people` makes it one") made people/ a vault of its own:
# its MEMORY.md and four templates were then indexed as people of the outer vault and
# listed under MEMORY.md's Key People, and Obsidian found a vault inside its vault.


@pytest.mark.parametrize("command", ["init", "up"])
def test_init_inside_a_vault_is_refused_and_names_the_vault(tmp_path: Path, command: str) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana.md", note("Ana"))
    # a subprocess: `up` that does not refuse serves in the foreground until killed
    env = {**os.environ, "PYTHONPATH": str(DAEMON_DIR), "MEMVAULT_INDEX_MODEL": "hash"}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "memvault", command, str(root / "people")],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`memvault {command}` inside a vault ran on instead of refusing")
    # a refusal, exit 5 (it was 3, "no vault": issue 24 item 13)
    assert result.returncode == 5, result.stdout + result.stderr
    assert f"inside the vault {root}" in result.stderr
    assert sorted(p.name for p in (root / "people").iterdir()) == ["ana.md"]
    with open_vault(root) as v:
        v.sync()
        assert [n for n in v.status()["folders"]] == ["people"]
        assert v.status()["folders"]["people"] == 1


def test_the_cli_names_the_vault_for_a_folder_or_file_inside_it(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana.md", note("Ana"))
    for inside in (root / "people", root / "MEMORY.md", root / "people/ana.md"):
        result = CliRunner().invoke(cli_app, ["status", "--vault", str(inside)])
        assert result.exit_code == 3, result.output
        assert str(root) in result.stderr and "memvault init" not in result.stderr
    assert not (root / "people" / ".memvault").exists()


def test_create_inside_a_vault_is_refused(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with pytest.raises(VaultNotFound, match=f"inside the vault {root}"):
        Vault.open(root / "projects" / "new", create=True, embedder=HashEmbedder())
    assert list((root / "projects").iterdir()) == []


def key(path: str) -> str:
    return unicodedata.normalize("NFC", path)


# -- a note a person named in Obsidian --------------------------------------------------------
#
# Obsidian names a note by its title: "people/Sarah Chen.md". An agent asked to record
# Sarah Chen (`memvault add people --title "Sarah Chen"`) got a second note about her,
# people/sarah-chen.md, listed twice in MEMORY.md, because only the slug's own path was
# checked; `--update` changed the copy, not her note. On Linux "people/Alice.md" and an
# agent's "alice" made two notes that no Mac or Windows disk can hold side by side.


@pytest.mark.parametrize(
    ("existing", "category", "title"),
    [
        ("people/Sarah Chen.md", "people", "Sarah Chen"),
        ("people/Alice.md", "people", "alice"),
        ("projects/team/Apollo Launch.md", "projects", "apollo launch"),
        # the names `memvault migrate` gives: punctuation dropped
        ("people/con-oneill.md", "people", "Con O'Neill"),
        ("people/dr-smith.md", "people", "Dr. Smith"),
        # cloned from a Mac: the name on disk decomposed (NFD), the title typed composed
        (unicodedata.normalize("NFD", "people/José Café.md"), "people", "José Café"),
        # across accents, as Obsidian's quick switcher matches
        ("people/ana-lópez.md", "people", "Ana Lopez"),
        ("people/Ana Lopez.md", "people", "Ana López"),
        ("projects/Café Über.md", "projects", "cafe uber"),
    ],
)
def test_add_finds_the_note_a_person_named_by_its_title(
    tmp_path: Path, existing: str, category: str, title: str
) -> None:
    root = new_vault(tmp_path)
    mine = "---\nstatus: active\n---\n# Mine\n\nWhat I wrote myself.\n"
    write(root, existing, mine)
    with open_vault(root) as v:
        v.sync()
        with pytest.raises(NoteExists) as caught:
            v.add(category, title, summary="from the agent")
        found = caught.value.path
        assert found is not None and unicodedata.normalize("NFC", found) == key(existing)
        assert caught.value.updatable
        assert found in str(caught.value)
        result = v.add(category, title, summary="from the agent", update=True)
        assert result.path == found and not result.created
    files = sorted(str(p.relative_to(root)) for p in (root / category).rglob("*.md"))
    assert [f for f in files if not f.endswith(f"{category}.md")] == [existing]
    text = (root / existing).read_text(encoding="utf-8")
    assert "summary: from the agent" in text and "What I wrote myself." in text


# -- a long file name a person chose ----------------------------------------------------------
#
# A note's name may take 255 bytes (ext4, APFS): 81 Chinese characters. memvault's temp
# file for a write was "." + the name + ".memvault-tmp-" + 8 hex digits, 23 bytes more:
# no note whose name passed 232 bytes could be written. Renaming a note such a note
# links to made every sync fail ("File name too long") and the link repair never ended.


def test_a_note_with_a_name_of_255_bytes_is_relinked(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    name = "長" * 84  # 252 bytes, + ".md" = 255
    write(root, f"projects/{name}.md", "# Long\n\nSee [[bob]] and [[people/bob|Bob]].\n")
    write(root, "people/bob.md", note("Bob"))
    with open_vault(root) as v:
        v.sync()
        (root / "people/bob.md").rename(root / "people/robert.md")
        report = v.sync()
        assert f"projects/{name}.md" in report.relinked
        assert v.links_check() == []
        assert v.add("people", "長" * 81).created  # 243 bytes: its temp file's name fits too
    text = (root / "projects" / f"{name}.md").read_text(encoding="utf-8")
    assert "See [[robert]] and [[robert|Bob]]." in text
    assert sorted(p.name for p in (root / "projects").iterdir()) == [f"{name}.md"]


@pytest.mark.parametrize("category", ["people", "projects", "decisions"])
@pytest.mark.parametrize("title", ["😀" * 100, "𝓐" * 79, "長" * 80 + " next", "é " * 98 + "é"])
def test_add_makes_a_name_that_fits_from_a_long_title(
    tmp_path: Path, category: str, title: str
) -> None:
    # was: "a file or folder name is too long (323 bytes; at most 255)" for 80 emoji
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        path = v.add(category, title).path
    assert path.startswith(f"{category}/") and len(path.split("/")[-1].encode()) <= 255
    assert (root / path).read_text(encoding="utf-8").count(title) >= 1


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Con", "con-note"),
        ("NUL", "nul-note"),
        ("aux.txt", "aux-note.txt"),
        ("COM1", "com1-note"),
        ("Lpt9", "lpt9-note"),
        ("Console", "console"),  # not a device: kept
        ("Con Artist", "con-artist"),
        ("Nullable", "nullable"),
    ],
)
def test_a_name_windows_keeps_for_a_device_is_not_made(
    tmp_path: Path, title: str, name: str
) -> None:
    # people/con.md cannot be checked out by git for Windows nor made by Obsidian there:
    # a vault synced to a Windows machine lost the note ("Con" is a first name)
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        assert v.add("people", title).path == f"people/{name}.md"
        with pytest.raises(NoteExists):
            v.add("people", title)


@pytest.mark.parametrize("made", ["con.md", "con-note.md"])  # an older add; `memvault migrate`
def test_a_note_named_for_con_before_is_still_found_by_its_title(tmp_path: Path, made: str) -> None:
    root = new_vault(tmp_path)
    write(root, f"people/{made}", note("Con"))
    with open_vault(root) as v:
        v.sync()
        assert v.add("people", "Con", summary="Con O'Neill", update=True).path == f"people/{made}"
    assert sorted(p.name for p in (root / "people").iterdir()) == [made]


# -- a day's log is not replaced ----------------------------------------------------------------
#
# memory_write(category="logs", title="Deploy", body="Deployed v2") answered 409 "send
# update: true to change it"; an agent that did so replaced today's log with its body:
# every entry of the day gone, a person's lines among them, and "# <date>" turned "# Deploy".


def test_writing_a_body_over_todays_log_is_refused_and_the_day_is_kept(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        log = v.log("the agent's entry").path
        with (root / log).open("a", encoding="utf-8") as fh:
            fh.write("- 23:59 what the person typed in Obsidian\n")
        v.sync()
        before = (root / log).read_bytes()
        with http(v) as client:
            asked = {"category": "logs", "title": "Deploy", "body": "Deployed v2"}
            for request in (asked, {**asked, "update": True}):
                # a body is never a log's (tests/test_note_update.py: on a new day too)
                r = client.post("/notes", json=request)
                assert r.status_code == 400, r.text
                message = r.json()["error"]["message"]
                assert "takes no body" in message and "POST /log" in message
                assert "update" not in message
        with pytest.raises(ValueError, match="takes no body"):
            v.add("logs", "Deploy", body="Deployed v2", update=True)
        assert (root / log).read_bytes() == before
        # what is not a body still goes through: a field of the day's log
        assert not v.add("logs", "Deploy", fields={"mood": "calm"}, update=True).created
    text = (root / log).read_text(encoding="utf-8")
    assert "mood: calm" in text and "what the person typed in Obsidian" in text
    assert "the agent's entry" in text


# -- invisible characters in a title ------------------------------------------------------------
#
# A zero-width space pasted from a web page, or bidi marks, went into the file name as
# they were: a title of only such characters made "people/\u200b.md", a note whose name
# looks empty in Obsidian and in MEMORY.md ("[[people/\u200b]]"); "Sarah\u200bChen"
# made a name that looks like "sarahchen" but is not it; U+202E made one read backwards.


@pytest.mark.parametrize("title", ["\u200b", "\u200f\u200e", "\ufeff", "\u200d"])
def test_a_title_of_invisible_characters_only_is_refused(tmp_path: Path, title: str) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as v, pytest.raises(ValueError, match="no characters usable"):
        v.add("people", title)
    assert list((root / "people").iterdir()) == []


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Sarah\u200bChen", "sarahchen"),
        ("\u2060evil", "evil"),  # a word joiner (a bidi override is refused: test_title_controls)
        ("\ufeffAna", "ana"),
        ("می\u200cخواهم", "می\u200cخواهم"),  # the joiners a word is spelt with stay
        ("👨\u200d👩\u200d👧 family", "👨\u200d👩\u200d👧-family"),
        ("Ana\u200f Lo\u200dpez", "ana-lopez"),  # no Latin word needs a joiner
        ("Zed\u200cKay", "zedkay"),
    ],
)
def test_invisible_characters_stay_out_of_the_file_name(
    tmp_path: Path, title: str, name: str
) -> None:
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        path = v.add("people", title).path
    assert path == f"people/{name}.md"
    assert f"# {title}\n" in (root / path).read_text(encoding="utf-8")  # the title as given


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ("Ana\u200f Lo\u200dpez", "Ana Lopez"),  # a file made before, with the joiner kept
        ("می\u200cخواهم", "میخواهم"),  # Persian with and without its non-joiner
    ],
)
def test_a_name_spelt_with_or_without_a_joiner_is_one_note(
    tmp_path: Path, first: str, again: str
) -> None:
    """A field test: ``add people "Ana Lo<ZWJ>pez"`` then ``"Ana Lopez"`` made two notes
    of one person. A joiner changes how a word is drawn, not the name: ``add`` finds
    the note already there (a file an older memvault named with the joiner too) and
    says so, as for any other spelling of a name it holds."""
    root = new_vault(tmp_path)
    write(root, f"people/{first.lower().replace(chr(0x200F), '').replace(' ', '-')}.md", "# x\n")
    (made,) = [p.name for p in (root / "people").iterdir()]
    with open_vault(root) as v:
        v.sync()
        with pytest.raises(NoteExists, match=f"people/{made} already exists"):
            v.add("people", again)
    assert [p.name for p in (root / "people").iterdir()] == [made]


# -- reading a note by the link MEMORY.md shows -----------------------------------------------
#
# MEMORY.md lists "[[people/ana-lopez]]"; an agent that asked for "people/ana-lopez"
# (memory_get, GET /notes/..., `memvault get`) got "no note at people/ana-lopez", and so
# did "people/Ana-Lopez.md" on Linux, which Obsidian opens. A path that names no file is
# now read the way Obsidian resolves it as a link, and the answer says which note it is.


@pytest.mark.parametrize(
    "asked", ["people/ana-lopez", "people/Ana-Lopez.md", "PEOPLE/ana-lopez", "ana-lopez"]
)
def test_get_reads_a_note_by_the_link_that_names_it(tmp_path: Path, asked: str) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-lopez.md", note("Ana Lopez", "Runs ops"))
    with open_vault(root) as v:
        v.sync()
        got = v.get(asked, heading="Ana Lopez")
        assert got.path == "people/ana-lopez.md" and "About Ana Lopez." in got.text
        with http(v) as client:
            r = client.get(f"/notes/{asked}")
            assert r.status_code == 200, r.text
            assert r.json()["path"] == "people/ana-lopez.md"


@pytest.mark.parametrize(
    "asked",
    [
        "[[people/ana-lopez#Role|Ana]]",  # a context's citation, pasted whole
        "people/ana-lopez#Role",
        "![[people/ana-lopez#Role]]",
        " [[people/ana-lopez.md#Role]] ",
    ],
)
def test_get_of_a_whole_address_reads_its_section(tmp_path: Path, asked: str) -> None:
    # memory_get was told to split [[path#heading]] itself; an agent that passed the
    # address as the context cites it got 404 for a note that is there
    root = new_vault(tmp_path)
    write(
        root,
        "people/ana-lopez.md",
        "# Ana Lopez\n\nRuns ops.\n\n## Role\n\nOn call.\n\n## Later\n\nx\n",
    )
    with open_vault(root) as v:
        v.sync()
        got = v.get(asked)
        assert (got.path, got.heading, got.text) == (
            "people/ana-lopez.md",
            "Role",
            "## Role\n\nOn call.\n",
        )
        with http(v) as client:
            r = client.get("/notes/people/ana-lopez%23Role")
            assert r.status_code == 200, r.text
            assert r.json()["heading"] == "Role"


def test_get_of_an_address_whose_section_is_not_there_is_not_found(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/ana-lopez.md", "# Ana Lopez\n\n## Role\n\nOn call.\n")
    with open_vault(root) as v:
        v.sync()
        with pytest.raises(NoteNotFound, match="no heading 'Nope'"):
            v.get("[[people/ana-lopez#Nope]]")
        with pytest.raises(NoteNotFound):  # two sections asked for: which one is not guessed
            v.get("people/ana-lopez#Role", heading="Ana Lopez")
        for asked in ("[[#Role]]", "[[people/ana-lopez]] [[x]]", "[[]]", "#"):
            with pytest.raises((NoteNotFound, UnsafePath)):
                v.get(asked)


def test_get_of_a_name_two_notes_share_or_none_has_is_still_not_found(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "people/sam.md", note("Sam"))
    write(root, "projects/sam.md", note("Sam", status="active"))
    with open_vault(root) as v:
        v.sync()
        for asked in ("sam", "people/nobody", "../people/sam", "people"):
            with pytest.raises((NoteNotFound, UnsafePath)):
                v.get(asked)


def test_opening_a_vault_this_process_has_open_says_so(tmp_path: Path) -> None:
    # a notebook cell `v = Vault.open(...)` run twice: the refusal named this very
    # process as "already writing to this vault" and said "stop it"
    root = new_vault(tmp_path)
    with open_vault(root) as first:
        with pytest.raises(LockHeld) as caught:
            open_vault(root)
        message = str(caught.value)
        assert "this process (pid" in message and "close() it first" in message
        assert "stop it" not in message
        first.log("still the writer")
    with open_vault(root) as again:  # closed: it opens again
        again.log("and again")


def test_names_that_differ_by_a_symbol_stay_two_notes(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    write(root, "projects/c.md", note("C", status="active"))
    with open_vault(root) as v:
        v.sync()
        assert v.add("projects", "C++").path == "projects/c++.md"


def test_a_tool_output_logged_whole_is_refused_and_the_day_stays_readable(
    tmp_path: Path,
) -> None:
    """An agent logged a 0.9 MB tool output (11,000 lines): its line breaks joined, it was
    one line of 940,000 characters in the day's log, the day 1.9 MB. Refused at every
    door, saying where such a text goes; the day keeps its lines, a line fits."""
    root = new_vault(tmp_path)
    dump = "\n".join(f"{i:06d} timeout retry payments ledger frame" for i in range(11_000))
    with open_vault(root) as v:
        log = v.log("ran the payments job").path
        before = (root / log).read_bytes()
        with pytest.raises(ValueError, match="nothing was logged: a log entry is one line"):
            v.log(dump)
        with http(v) as client:
            r = client.post("/log", json={"text": dump})
            assert r.status_code == 400, r.text
            assert "keep a long text in a note" in r.json()["error"]["message"]
        assert (root / log).read_bytes() == before
        v.log("x" * 4_000)  # a long line still is one
    assert max(len(line) for line in (root / log).read_text("utf-8").splitlines()) < 4_010


def test_the_same_line_logged_again_in_the_same_minute_is_not_written_twice(
    tmp_path: Path,
) -> None:
    """A loop (or a retried call) logged "deployed payments v2 to staging" 500 times:
    500 identical lines ``- 15:32 deployed ...`` in one day. The same words at the same
    minute are written once; the file is not rewritten; another minute or other words
    are a new entry."""
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        minute = [dt.datetime(2026, 3, 5, 15, 32).astimezone()]
        v.engine.writer.clock = lambda: minute[0]
        log = v.log("deployed payments v2 to staging").path
        stamp = (root / log).stat().st_mtime_ns
        for _ in range(20):
            v.log("deployed  payments v2 to staging")
        assert (root / log).stat().st_mtime_ns == stamp
        v.log("deployed payments v2 to prod")
        minute[0] = minute[0] + dt.timedelta(minutes=1)
        v.log("deployed payments v2 to staging")
    lines = (root / log).read_text("utf-8").splitlines()
    assert [line for line in lines if line.startswith("- ")] == [
        "- 15:32 deployed payments v2 to staging",
        "- 15:32 deployed payments v2 to prod",
        "- 15:33 deployed payments v2 to staging",
    ]


def test_a_line_the_day_has_already_is_answered_as_not_written_through_every_door(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same line at the same minute is written once, but each door answered the agent
    as for a line written (``logged to ...``, ``{"path", "created": false}``): it could not
    tell its retried call changed nothing. The answers say ``written`` (false), the text
    answer says nothing was written; a line written says ``written`` true."""
    import json

    from helpers import running_daemon

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    minute = dt.datetime(2026, 3, 5, 15, 32).astimezone()
    with open_vault(root) as v, running_daemon(v):
        v.engine.writer.clock = lambda: minute
        first = v.log("deployed payments v2 to staging")
        assert first.written is True and first.to_dict()["written"] is True
        again = v.log("deployed payments v2  to staging")  # the Python API, in-process
        assert (again.path, again.created, again.written) == (first.path, False, False)
        assert again.to_dict()["written"] is False
        with http(v) as client:  # HTTP
            r = client.post("/log", json={"text": "deployed payments v2 to staging"})
            assert r.status_code == 200 and r.json()["written"] is False, r.text
            assert r.json()["path"] == first.path and r.json()["created"] is False
            r = client.post("/log", json={"text": "deployed payments v2 to prod"})
            assert r.json()["written"] is True
        with Vault.open(root, embedder=HashEmbedder()) as door:  # the API through the daemon
            assert door.daemon is not None
            assert door.log("deployed payments v2 to staging").written is False
            assert door.log("rolled back payments v2").written is True
    lines = (root / first.path).read_text("utf-8").splitlines()
    assert [ln for ln in lines if ln.startswith("- ")] == [
        "- 15:32 deployed payments v2 to staging",
        "- 15:32 deployed payments v2 to prod",
        "- 15:32 rolled back payments v2",
    ]
    # The CLI (its own process clock): the line is in its day's log at this minute and
    # the next, so the call finds it whichever of the two it runs in.
    now = dt.datetime.now().astimezone()
    for t in (now, now + dt.timedelta(minutes=1)):
        day = root / "logs" / f"{t.date().isoformat()}.md"
        head = day.read_text("utf-8") if day.exists() else f"# {t.date().isoformat()}\n\n"
        day.write_text(head + f"- {t:%H:%M} checked the backups\n", encoding="utf-8")
    before = {p: p.read_bytes() for p in (root / "logs").glob("*.md")}
    said = CliRunner().invoke(cli_app, ["log", "checked the backups", "--vault", str(root)])
    assert said.exit_code == 0, said.output
    assert "has this line at this minute already: nothing written" in said.stdout
    assert "logged to" not in said.stdout
    said = CliRunner().invoke(
        cli_app, ["log", "checked the backups", "--json", "--vault", str(root)]
    )
    answer = json.loads(said.stdout)
    assert answer["written"] is False and answer["created"] is False
    assert {p: p.read_bytes() for p in (root / "logs").glob("*.md")} == before


def test_an_update_whose_body_the_note_holds_is_answered_as_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``add --update`` with a body the note holds already writes nothing (every word
    stays, none twice), but said "updated projects/x.md" as for a change."""
    import json

    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = new_vault(tmp_path)
    with open_vault(root) as v:
        made = v.add("projects", "Key rotation", body="Monthly, by the on-call.")
        assert made.written is True and made.created is True
        held = v.add("projects", "Key rotation", body="Monthly, by the on-call.", update=True)
        assert (held.created, held.written) == (False, False)
        assert v.add("projects", "Key rotation", body="Logged in the ops log.", update=True).written
    before = (root / made.path).read_bytes()
    args = ["add", "projects", "Key rotation", "--body", "Monthly, by the on-call.", "--update"]
    said = CliRunner().invoke(cli_app, [*args, "--vault", str(root)])
    assert said.exit_code == 0, said.output
    assert said.stdout.strip() == "projects/key-rotation.md holds this already: nothing written"
    said = CliRunner().invoke(cli_app, [*args, "--json", "--vault", str(root)])
    assert json.loads(said.stdout)["written"] is False
    assert (root / made.path).read_bytes() == before
