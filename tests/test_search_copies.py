"""A fact copied into many notes is one hit of a search, its copies counted and named on
it, so the page holds k different answers (core/copies.py, engine/reader.py), through
every door: the library, the CLI, HTTP (and the client reading it), MCP, the OpenAPI
document. On a real vault, SQLite and hnswlib with the hash embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from typer.testing import CliRunner

from helpers import open_vault, write
from memvault.core.copies import COPY_PATHS, copy_key, first_distinct, further
from memvault.core.results import Hit
from memvault.interfaces.cli import app
from memvault.interfaces.mcp_server import hit_for_model
from memvault.service.http_api import create_app
from memvault.service.http_schema import openapi_schema

FACT = "The deploy window is Tuesday 10:00 UTC.\n"
SERVICES = ["payments", "ledger", "search", "billing", "auth", "mail", "maps", "chat"]


def fact_vault(root: Path, copies: int, others: int = 16) -> None:
    """``copies`` notes fact-N.md holding one sentence word for word (as an agent's
    memory-tool creates of /memories/fact-N.md make them), and ``others`` notes each
    saying something else about a service's deploy window."""
    for i in range(1, copies + 1):
        write(root, f"fact-{i}.md", FACT)
    for i in range(others):
        svc = SERVICES[i % len(SERVICES)]
        write(
            root,
            f"deploys/{svc}-{i}.md",
            f"# Deploys of {svc} {i}\n\nThe {svc} deploy window closes at {8 + i % 9}:00 "
            f"on the day of release {i}.\n",
        )


def texts(hits: list[Hit]) -> list[str]:
    return [copy_key(h.text) for h in hits]


def the_fact(hits: list[Hit]) -> Hit:
    (hit,) = [h for h in hits if copy_key(h.text) == copy_key(FACT)]
    return hit


# -- the pure part ---------------------------------------------------------------------------


def test_first_distinct_keeps_each_text_once_and_counts_its_copies_past_the_page() -> None:
    items = [("a.md", "One  fact."), ("b.md", "one fact."), ("c.md", "Another"), ("a.md", "x")]
    items += [("d.md", "ONE FACT."), ("e.md", "y"), ("a.md", "one fact.")]
    kept = first_distinct(items, 3, lambda i: i[1], lambda i: i[0])
    assert [k.item for k in kept] == [("a.md", "One  fact."), ("c.md", "Another"), ("a.md", "x")]
    # b and d before and after the third place; a's own copy counted, not named
    assert (kept[0].copies, kept[0].copy_paths) == (3, ["b.md", "d.md"])
    assert [k.copies for k in kept[1:]] == [0, 0]
    grouped = first_distinct(items, 3, lambda i: i[1], lambda i: i[0], group=True)
    assert [k.item[0] for k in grouped] == ["a.md", "c.md", "e.md"]
    plain = first_distinct(items, 3, lambda i: i[1], lambda i: i[0], copies=False)
    assert [k.item for k in plain] == items[:3] and not any(k.copies for k in plain)


def test_the_notes_named_on_a_hit_stop_at_ten_and_the_count_goes_on() -> None:
    items = [(f"f{i}.md", "same") for i in range(30)]
    (kept,) = first_distinct(items, 5, lambda i: i[1], lambda i: i[0])
    assert kept.copies == 29 and kept.copy_paths == [f"f{i}.md" for i in range(1, 1 + COPY_PATHS)]


def hit(path: str, text: str, score: float, copies: int = 0, paths: tuple[str, ...] = ()) -> Hit:
    return Hit(path, path, (), 1, 1, text, score, text, copies=copies, copy_paths=paths)


def test_a_further_look_adds_its_copies_to_the_page_and_its_other_texts_after_it() -> None:
    page = [hit("f1.md", "fact", 0.9, 4, ("f2.md", "f3.md"))]
    more = [hit("f9.md", "Fact", 0.95, 2, ("f8.md",)), hit("o.md", "other", 0.97)]
    out = further(page, more, 3)
    assert [h.path for h in out] == ["f1.md", "o.md"]
    assert (out[0].copies, out[0].copy_paths) == (7, ("f2.md", "f3.md", "f9.md", "f8.md"))
    assert out[1].score == 0.9  # never above the hit before it: the page stays best first


# -- the engine ------------------------------------------------------------------------------


def test_a_fact_copied_into_twelve_notes_is_one_hit_naming_the_others(tmp_path: Path) -> None:
    root = tmp_path / "v"
    fact_vault(root, 12)
    with open_vault(root) as vault:
        vault.sync()
        hits = vault.search("deploy window", 10)
    assert len(hits) == 10 and len(set(texts(hits))) == 10, [h.path for h in hits]
    fact = the_fact(hits)
    assert fact.copies == 11
    assert len(fact.copy_paths) == COPY_PATHS and fact.path not in fact.copy_paths
    assert {fact.path, *fact.copy_paths} <= {f"fact-{i}.md" for i in range(1, 13)}
    assert sum(not h.path.startswith("fact-") for h in hits) == 9


def test_copies_past_the_candidates_are_looked_past_once(tmp_path: Path) -> None:
    """Thirty copies among twenty candidates: the page had one answer; the candidates
    past those read are looked at once, and the other notes fill it."""
    root = tmp_path / "v"
    fact_vault(root, 30)
    overrides = {"search": {"candidates": 20}}
    with open_vault(root, overrides=overrides) as vault:
        vault.sync()
        hits = vault.search("deploy window is Tuesday", 10)
    assert len(hits) == 10 and len(set(texts(hits))) == 10, [h.path for h in hits]
    assert the_fact(hits).copies >= 19
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_group_and_filters_still_hold_with_copies(tmp_path: Path) -> None:
    root = tmp_path / "v"
    fact_vault(root, 12)
    write(root, "deploys/fact-copy.md", "# Copy\n\n" + FACT + "\nAnd a second part on rollbacks.\n")
    with open_vault(root) as vault:
        vault.sync()
        grouped = vault.search("deploy window", 10, group=True)
        inside = vault.search("deploy window", 10, folder="deploys")
    assert len({h.path for h in grouped}) == len(grouped) == 10
    assert len(set(texts(grouped))) == 10
    assert all(h.path.startswith("deploys/") for h in inside) and len(inside) == 10
    assert len(set(texts(inside))) == 10


def test_related_notes_of_a_copied_fact_are_not_its_copies(tmp_path: Path) -> None:
    root = tmp_path / "v"
    fact_vault(root, 12)
    with open_vault(root) as vault:
        vault.sync()
        near = vault.related("fact-1.md", k=5)
    assert len(set(texts(near))) == len(near) == 5
    copy = the_fact(near)
    assert copy.copies == 10 and "fact-1.md" not in (copy.path, *copy.copy_paths)


def test_context_still_gives_the_fact_once(tmp_path: Path) -> None:
    root = tmp_path / "v"
    fact_vault(root, 12)
    with open_vault(root) as vault:
        vault.sync()
        ctx = vault.context("when is the deploy window?", 2000)
    # (MEMORY.md's excerpt lists the notes: core/memory_md, left as it is)
    cited = [s for s in ctx.sources if s.why != "index"]
    assert sum(s.path.startswith("fact-") for s in cited) == 1
    assert ctx.text.split("\n\n[[", 1)[1].count("deploy window is Tuesday") == 1


# -- the doors -------------------------------------------------------------------------------


def test_the_cli_says_the_copies_under_the_hit(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("MEMVAULT_INDEX_MODEL", "hash")
    root = tmp_path / "v"
    fact_vault(root, 3)
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(root)]).exit_code == 0
    assert runner.invoke(app, ["sync", "--vault", str(root)]).exit_code == 0
    result = runner.invoke(app, ["search", "deploy window Tuesday", "--vault", str(root)])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "deploy window is Tuesday" in line)
    said = lines[at + 1]
    assert said.startswith("    + 2 copies of this text: fact-"), said
    assert sum("deploy window is Tuesday" in line for line in lines) == 1


def test_http_hands_the_copies_on_and_the_client_reads_them_back(tmp_path: Path) -> None:
    root = tmp_path / "v"
    fact_vault(root, 4)
    token = "t0k3n-for-tests-" + "x" * 27
    with open_vault(root) as vault:
        vault.sync()
        served = create_app(vault, token, dict, port=48124, keepalive_seconds=0.05)
        try:
            with TestClient(
                served,
                base_url="http://127.0.0.1:48124",
                headers={"Authorization": f"Bearer {token}"},
            ) as client:
                body = client.post("/search", json={"query": "deploy window Tuesday"}).json()
        finally:
            served.state.close()
    fact = [h for h in body["hits"] if h["text"] == FACT.strip("\n") or h["text"] == FACT]
    assert len(fact) == 1 and fact[0]["copies"] == 3 and len(fact[0]["copy_paths"]) == 3
    again = Hit.from_dict(fact[0])
    assert again.copies == 3 and again.copy_paths == tuple(fact[0]["copy_paths"])
    schema = openapi_schema()["paths"]["/search"]["post"]["responses"]["200"]
    item = schema["content"]["application/json"]["schema"]["properties"]["hits"]["items"]
    assert set(fact[0]) == set(item["properties"])  # the document names what is sent


def test_mcp_says_copies_only_where_there_are_some() -> None:
    plain = hit("a.md", "one", 0.5)
    copied = hit("b.md", "two", 0.4, 3, ("c.md", "d.md"))
    assert "copies" not in hit_for_model(plain) and "copy_paths" not in hit_for_model(plain)
    said = hit_for_model(copied)
    assert (said["copies"], said["copy_paths"]) == (3, ["c.md", "d.md"])


def test_a_further_look_never_brings_back_a_hit_or_a_copy_already_read(tmp_path: Path) -> None:
    """The copies point at one note (a hop: engine/evidence brings a linked note's first
    chunk in): the further look, pointed at it again, neither shows it twice nor counts
    a hit as its own copy."""
    root = tmp_path / "v"
    linked = "The deploy window is Tuesday 10:00 UTC, as [[ops]] says.\n"
    for i in range(1, 31):
        write(root, f"fact-{i}.md", linked)
    write(root, "ops.md", "# Ops\n\nWho is on call rotates weekly.\n")
    for i in range(12):
        write(root, f"deploys/d-{i}.md", f"# D {i}\n\nRelease {i} waits for the deploy window.\n")
    with open_vault(root, overrides={"search": {"candidates": 20}}) as vault:
        vault.sync()
        hits = vault.search("deploy window is Tuesday", 10)
    labels = [h.label for h in hits]
    assert len(labels) == len(set(labels)) and len(set(texts(hits))) == len(hits)
    (ops,) = [h for h in hits if h.path == "ops.md"]
    assert ops.copies == 0 and ops.copy_paths == ()
    (fact,) = [h for h in hits if h.path.startswith("fact-")]
    assert fact.copies == 29 and fact.path not in fact.copy_paths
