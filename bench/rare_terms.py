"""Is the one note that holds a rare word found when it is searched for?

    python bench/rare_terms.py --work /tmp/rare/nr --only help --help-vault /tmp/help-src
    python bench/rare_terms.py --work /tmp/rare/nr --only synthetic
    python bench/rare_terms.py --work /tmp/rare/nr --grid g.json     # configs side by side
    python bench/rare_terms.py --work /tmp/rare/nr2 --seed 26 --vault-seed 11   # other probes
    python bench/rare_terms.py --work /tmp/rare/nr --context 1000,2000   # Vault.context
    python bench/rare_terms.py --work /tmp/rare/nr --pairs               # two words at once

An agent looking up an identifier (a ticket, a host, an error code, a rare surname)
must find the one note that holds it. The convex fusion scores that note's chunk 1.0
on the keyword side (its BM25 over the query's best) but, if its vector is the pool's
least like the query, 0 on the vector side; chunks without the word but near in
meaning, and their notes' evidence, can push it off the first page.

Two vaults, each indexed once into ``--work`` with the configured (default: the
bundled int8 ONNX) model:

- ``help``: Obsidian's help vault (as bench/note_recall.py reads it, the same
  ``--work`` folder: its index is shared). The probe terms are words (as the
  keyword table cuts them) held by the chunks of exactly one note, four
  characters or more, a letter in them.
- ``synthetic``: an agent's memory of a made-up company, generated here (seeded):
  people, projects, decisions and day logs in ordinary prose, with identifiers
  planted once each: tickets (PAY-4521), hosts (kestrel-db-04), error codes
  (ERR_LEDGER_STALE, E4417, 0x8007A3F1), CVEs, one-off rare surnames and code
  names. A probe is an identifier whose rarest query term the index holds in one
  note only.

Per probe, two queries: the bare term, and a question holding it ("what happened
with PAY-4521?"). The rank is that of the holding note among the notes of
``Vault.search(query, k=10)`` (hits deduped by note, as the help set's eval.py
ranks them). Printed per vault and config: hit@1 and hit@10 per query form, and
each miss (the query, the rank or null, the first note). ``--sample`` probes per
vault, drawn with ``--seed``. With ``--context``, ``Vault.context(query, budget)`` at
each budget instead: whether a cited source of the note covers a line holding the
word (``line``), the note is cited (``cited``), the word is in the text (``text``).

With ``--pairs``, two probes of different notes are asked in one query ("PAY-4521 and
kestrel-db-04", "did ERR_LEDGER_STALE come up with kestrel-db-04?"): the probes drawn
as above, paired in their drawn order (the next of another note); per pair, whether
both notes are on the first page (``both@10``), in the first two places (``both@2``),
and whether one is (``one@10``); with ``--context``, whether the context holds a line
with each word (``both``) or one of them (``one``).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))
sys.path.insert(0, str(ROOT / "bench"))

from locomo_eval import parse_sets  # noqa: E402
from memvault.api import Vault  # noqa: E402
from memvault.core import cjk  # noqa: E402
from memvault.core.ranking import STOPWORDS, query_terms  # noqa: E402

HELP_QUESTIONS = (
    "what do my notes say about {t}?",
    "where is {t} mentioned?",
    "how does {t} work in Obsidian?",
    "what is {t}?",
)
SYNTH_QUESTIONS = {
    "ticket": ("what happened with {t}?", "what was {t} about?", "status of ticket {t}"),
    "host": ("what runs on {t}?", "which incident involved {t}?", "what do we know about {t}"),
    "error": ("what causes {t}?", "how did we fix {t}?", "when did we see {t} last?"),
    "cve": ("are we affected by {t}?", "what did we do about {t}?"),
    "surname": ("who is {t}?", "when did I talk to {t}?", "what did {t} say?"),
    "codename": ("what was {t}?", "what came of the {t} idea?"),
}

PAIR_FORMS = (
    ("bare", "{a} and {b}"),
    ("question", "did {a} come up with {b}?"),
    ("question", "what links {a} and {b}?"),
    ("question", "{a} and {b}: what happened?"),
)


# --- the synthetic vault -----------------------------------------------------------------

FIRST = """Ana Ben Carla Dmitri Elena Farid Grace Hugo Ines Jonas Kira Liam Maya Noor Omar
Priya Quentin Rosa Sam Tara Umar Vera Wes Yara Zoe Marco Lena Ravi Sofia Tom""".split()  # noqa: SIM905 - word lists read best as text
LAST = """Lopez Chen Silva Novak Garcia Ahmed Kim Muller Rossi Park Patel Brown Costa Meyer
Singh Ito Wright Ortiz Berg Cohen Haas Nair Reyes Lund Moreau Bauer Gupta Young Fox Diaz""".split()  # noqa: SIM905 - word lists read best as text
RARE_SURNAMES = """Okonkwo Wojciechowski Thorvaldsdottir Nakashima-Brandt Quispe Oyelaran
Szczepanski Haugland Abernathy Vukovic Tshabalala Iruretagoyena Kowalczykowa Ferreirinha
Ljungqvist Ndiaye Papadopoulou Huanca Zubiri Khachatryan Okafor Rautenbach Wisniewska
Castellanos Aitmatova Nkemelu Brannigan Fitzwilliam Yilmazer Oduya Markovic Lindqvist
Threlkeld Pemberton Achterberg Vandermolen Grzelak Mbeki Tanabe Ishikawa Rasmussen
Delacroix Hallstrom Oyinlola Kuznetsova Bergstrand Montalvo Echeverria Halvorsen""".split()  # noqa: SIM905 - word lists read best as text
CODENAMES = """Marmoset Bluefin Quokka Tamarind Halyard Juniper Pangolin Sextant Wolverine
Cormorant Lodestar Nimbus Ocelot Peregrine Quillon Sassafras Tortuga Umbra Vireo Wyvern
Axolotl Bramble Caracal Dunlin Egret Fennec Gannet Heron Ibis Jacana""".split()  # noqa: SIM905 - word lists read best as text
HOST_WORDS = """kestrel osprey merlin harrier falcon condor plover avocet curlew godwit
shrike siskin linnet bunting dipper wagtail wheatear whinchat redpoll twite brambling
fieldfare redwing goldcrest firecrest treecreeper nuthatch dunnock bittern garganey
shoveler smew goosander pochard scaup eider scoter merganser grebe fulmar petrel
shearwater gadwall wigeon teal pintail""".split()  # noqa: SIM905 - word lists read best as text
ROLES = ("db", "cache", "api", "worker", "queue", "search", "etl", "edge")
PREFIXES = ("PAY", "INFRA", "WEB", "DATA", "MOB", "SEC", "OPS")
ERR_WORDS = """LEDGER STALE TIMEOUT QUOTA REPLICA LAG SCHEMA DRIFT TOKEN EXPIRED SHARD
FULL CURSOR LOST WEBHOOK RETRY BUDGET SPENT FENCE BROKEN SNAPSHOT TORN""".split()  # noqa: SIM905 - word lists read best as text
PROJECTS = {
    "ledger-migration": "moving the payments ledger from the old MySQL cluster to PostgreSQL",
    "search-relaunch": "rebuilding site search on a hybrid keyword and vector index",
    "mobile-onboarding": "shortening the mobile app's sign-up flow to three screens",
    "data-warehouse": "consolidating the reporting tables into one warehouse with daily loads",
    "oncall-rotation": "making the on-call rotation fairer and its alerts quieter",
    "billing-v2": "a usage-based billing engine with monthly invoices and proration",
    "edge-caching": "caching the public API at the edge to cut latency for Europe",
    "sso-rollout": "single sign-on for every internal tool through the identity provider",
    "cost-review": "cutting the cloud bill by a fifth without slowing the product",
    "incident-tooling": "a runbook bot and timeline capture for incident reviews",
}
TOPICS = (
    "latency in the {p} service",
    "the rollout plan for {p}",
    "flaky tests in the {p} pipeline",
    "the database migration for {p}",
    "alert noise from {p}",
    "the budget for {p}",
    "a retro on {p}",
    "hiring for the {p} team",
    "the deadline for {p}",
    "customer complaints about {p}",
)
LOG_LINES = (
    "Standup: {who} flagged {topic}; we agreed to look again on Thursday.",
    "Paired with {who} on {topic}. Most of the time went into reading old code.",
    "1:1 with {who}: talked about {topic} and about growth plans.",
    "Incident review with {who}: {topic}, root cause still unclear.",
    "Wrote up notes on {topic} for {who}.",
    "{who} asked for help with {topic}; pointed them to the runbook.",
    "Planning: {topic} moved to next sprint, {who} owns it.",
    "Long meeting on {topic}. {who} wants a decision by Friday.",
)
PLANTS = {
    "ticket": (
        "Opened {t} for {topic}.",
        "{who} closed {t} after fixing {topic}.",
        "Linked {t} to {topic}; it blocks the release.",
    ),
    "host": (
        "{t} ran out of disk during {topic}; {who} cleaned old snapshots.",
        "Restarted {t} twice while chasing {topic}.",
        "Moved the cron jobs off {t} as part of {topic}.",
    ),
    "error": (
        "Saw {t} in the logs during {topic}; retries hid it for a week.",
        "{who} traced {t} back to {topic}.",
        "The dashboard showed {t} spikes again, tied to {topic}.",
    ),
    "cve": (
        "Security flagged {t} in a dependency used by {topic}; patch scheduled.",
        "{who} confirmed {t} does not reach us, checked during {topic}.",
    ),
    "surname": (
        "Call with {t} from the vendor about {topic}; sharp questions on pricing.",
        "Met {t}, a candidate for the {topic} role; strong on systems design.",
        "{who} introduced me to {t}, who ran something like {topic} before.",
    ),
    "codename": (
        "Floated the {t} idea to {who}: a small spike on {topic}.",
        "Shelved {t} (the prototype for {topic}) until next quarter.",
    ),
}


class Planter:
    """Identifiers made unique and handed out once each (the rarest terms of a vault)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.numbers = [n for n in range(1100, 9999) if not 1990 <= n <= 2099]
        rng.shuffle(self.numbers)
        self.hosts = [f"{w}-{rng.choice(ROLES)}-{rng.randint(1, 19):02d}" for w in HOST_WORDS]
        self.surnames = list(RARE_SURNAMES)
        self.codes = list(CODENAMES)
        rng.shuffle(self.surnames)
        rng.shuffle(self.codes)
        pairs = [(a, b) for a in ERR_WORDS for b in ERR_WORDS if a != b]
        rng.shuffle(pairs)
        self.errors = [f"ERR_{a}_{b}" for a, b in pairs[:40]]
        self.planted: list[tuple[str, str]] = []  # (kind, identifier)

    def take(self) -> tuple[str, str] | None:
        rng = self.rng
        kinds = [
            k
            for k, left in (
                ("ticket", True),
                ("host", self.hosts),
                ("error", True),
                ("cve", True),
                ("surname", self.surnames),
                ("codename", self.codes),
            )
            if left
        ]
        kind = rng.choices(kinds, weights=[5 if k in ("ticket", "error") else 2 for k in kinds])[0]
        if kind == "ticket":
            ident = f"{rng.choice(PREFIXES)}-{self.numbers.pop()}"
        elif kind == "host":
            ident = self.hosts.pop()
        elif kind == "error":
            form = rng.random()
            if form < 0.4 and self.errors:
                ident = self.errors.pop()
            elif form < 0.7:
                ident = f"E{self.numbers.pop()}"
            else:
                ident = f"0x{rng.getrandbits(32):08X}"
        elif kind == "cve":
            ident = f"CVE-2025-{self.numbers.pop()}{rng.randint(1, 9)}"
        elif kind == "surname":
            ident = f"{rng.choice(FIRST)} {self.surnames.pop()}"
        else:
            ident = self.codes.pop()
        self.planted.append((kind, ident))
        return kind, ident


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def synthetic(root: Path, seed: int = 7, days: int = 150) -> list[tuple[str, str]]:
    """Write the synthetic memory vault under ``root``; the planted (kind, identifier)s."""
    rng = random.Random(seed)
    plant = Planter(rng)
    people = [f"{f} {ln}" for f, ln in zip(FIRST, LAST, strict=True)]
    slugs = [_slug(p) for p in people]
    projects = list(PROJECTS)

    def who() -> str:
        return f"[[{rng.choice(slugs)}]]"

    def topic() -> str:
        return rng.choice(TOPICS).format(p=rng.choice(projects).replace("-", " "))

    def planted_line() -> str:
        got = plant.take()
        assert got is not None
        kind, ident = got
        return rng.choice(PLANTS[kind]).format(t=ident, who=who(), topic=topic())

    def line() -> str:
        if rng.random() < 0.22:
            return planted_line()
        return rng.choice(LOG_LINES).format(who=who(), topic=topic())

    def write(rel: str, text: str) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    for name, slug in zip(people, slugs, strict=True):
        proj = rng.sample(projects, 2)
        body = [
            f"# {name}\n",
            f"Works on [[{proj[0]}]] and helps with [[{proj[1]}]].",
            f"Prefers written updates; usually around in the {rng.choice(['morning', 'afternoon'])}.",
            "",
            "## Notes",
            *(f"- {line()}" for _ in range(rng.randint(2, 5))),
        ]
        write(f"people/{slug}.md", "\n".join(body) + "\n")
    for slug, what in PROJECTS.items():
        body = [
            f"# {slug.replace('-', ' ').title()}\n",
            f"Goal: {what}.",
            f"Owner: {who()}. Also involved: {who()}, {who()}.",
            "",
            "## Status",
            *(f"- {line()}" for _ in range(rng.randint(3, 6))),
            "",
            "## Risks",
            *(f"- {topic().capitalize()} could slip the date." for _ in range(2)),
        ]
        write(f"projects/{slug}.md", "\n".join(body) + "\n")
    for i in range(40):
        proj = rng.choice(projects)
        day = f"2026-{1 + i % 11:02d}-{1 + (i * 7) % 27:02d}"
        title = f"{rng.choice(['Use', 'Drop', 'Keep', 'Adopt', 'Postpone'])} {topic()}"
        body = [
            "---",
            f"date: {day}",
            "---",
            f"# {title}\n",
            "## Context",
            f"For [[{proj}]]: {line()} {line()}",
            "",
            "## Decision",
            f"We decided with {who()} to go ahead, reviewing it after a month.",
            "",
            "## Consequences",
            f"{line()}",
        ]
        write(f"decisions/{day}-{_slug(title)[:40]}.md", "\n".join(body) + "\n")
    for d in range(days):
        month, dom = 1 + d // 28, 1 + d % 28
        entries = sorted(
            (f"{rng.randint(8, 18):02d}:{rng.randint(0, 59):02d}", line())
            for _ in range(rng.randint(3, 8))
        )
        body = [f"# 2026-{month:02d}-{dom:02d}\n", *(f"- {t} {text}" for t, text in entries)]
        write(f"logs/2026-{month:02d}-{dom:02d}.md", "\n".join(body) + "\n")
    return plant.planted


# --- the probes --------------------------------------------------------------------------


def _holders(vault: Vault, term: str) -> set[str]:
    """The notes whose chunks hold ``term`` as the keyword table reads it."""
    store = vault.engine.store
    labels = [lab for lab, _ in store.keywords([term], 1000)]
    return {row.path for row in store.chunk_rows(labels).values()}


def _rarest(vault: Vault, query: str) -> tuple[str, int] | None:
    store = vault.engine.store
    counted = [(store.term_docs(t), t) for t in query_terms(query)]
    counted = [(n, t) for n, t in counted if n > 0]
    return (min(counted)[1], min(counted)[0]) if counted else None


def help_probes(vault: Vault, root: Path, rng: random.Random, n: int) -> list[dict[str, Any]]:
    """Words the chunks of one note hold, each with that note and a question of it."""
    seen: dict[str, set[str]] = {}
    spelt: dict[str, str] = {}
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        for word in cjk.words(path.read_text(encoding="utf-8")):
            low = word.lower()
            if len(low) >= 4 and low not in STOPWORDS and re.search(r"[^\W\d_]", low):
                seen.setdefault(low, set()).add(rel)
                spelt.setdefault(low, word)
    single = sorted(w for w, notes in seen.items() if len(notes) == 1)
    rng.shuffle(single)
    out = []
    for word in single:
        if len(out) >= n:
            break
        terms = query_terms(word)
        if len(terms) != 1:
            continue
        holders = _holders(vault, terms[0])
        if len(holders) != 1:  # stemming joins it with another note's word, or no chunk
            continue
        note = next(iter(holders))
        q = rng.choice(HELP_QUESTIONS).format(t=spelt[word])
        out.append({"kind": "word", "term": spelt[word], "note": note, "question": q})
    return out


def synthetic_probes(
    vault: Vault, planted: Sequence[tuple[str, str]], rng: random.Random, n: int
) -> list[dict[str, Any]]:
    out = []
    order = list(planted)
    rng.shuffle(order)
    for kind, ident in order:
        if len(out) >= n:
            break
        rarest = _rarest(vault, ident)
        if rarest is None:
            continue
        holders = _holders(vault, rarest[0])
        if len(holders) != 1:
            continue
        q = rng.choice(SYNTH_QUESTIONS[kind]).format(t=ident)
        out.append({"kind": kind, "term": ident, "note": next(iter(holders)), "question": q})
    return out


def note_rank(vault: Vault, query: str, note: str) -> tuple[int | None, str]:
    seen: list[str] = []
    for hit in vault.search(query, k=10):
        if hit.path not in seen:
            seen.append(hit.path)
    rank = seen.index(note) + 1 if note in seen else None
    return rank, seen[0] if seen else ""


def _rates(ranks: Sequence[int | None]) -> dict[str, Any]:
    n = max(len(ranks), 1)
    return {
        "hit@1": round(sum(r == 1 for r in ranks) / n, 3),
        "hit@10": round(sum(r is not None for r in ranks) / n, 3),
        "missed@10": sum(r is None for r in ranks),
    }


def run_probes(vault: Vault, probes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"probes": len(probes)}
    misses = []
    for form, key in (("bare", "term"), ("question", "question")):
        ranks = []
        for p in probes:
            rank, first = note_rank(vault, p[key], p["note"])
            ranks.append(rank)
            if rank != 1:
                misses.append(
                    {"form": form, "query": p[key], "kind": p["kind"], "note": p["note"]}
                    | {"rank": rank, "first": first}
                )
        out[form] = {
            fold: _rates(ranks[start::step])
            for fold, start, step in (("A", 0, 2), ("B", 1, 2), ("all", 0, 1))
        }
    out["misses"] = misses
    return out


def pair_up(probes: Sequence[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The ``probes`` two by two, in order (a probe whose note is its partner's is put
    back for the next), each pair asked bare and as one of ``PAIR_FORMS``'s questions."""
    out: list[dict[str, Any]] = []
    left = list(probes)
    while len(left) >= 2:
        a = left.pop(0)
        at = next((i for i, b in enumerate(left) if b["note"] != a["note"]), None)
        if at is None:
            break
        b = left.pop(at)
        form = rng.choice([f for k, f in PAIR_FORMS if k == "question"])
        out.append(
            {
                "a": a,
                "b": b,
                "bare": PAIR_FORMS[0][1].format(a=a["term"], b=b["term"]),
                "question": form.format(a=a["term"], b=b["term"]),
            }
        )
    return out


def note_ranks(vault: Vault, query: str, notes: Sequence[str]) -> list[int | None]:
    seen: list[str] = []
    for hit in vault.search(query, k=10):
        if hit.path not in seen:
            seen.append(hit.path)
    return [seen.index(n) + 1 if n in seen else None for n in notes]


def run_pairs(vault: Vault, pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per query form and fold (A: even pairs, B: odd), the share of pairs with both
    notes among the first 2 (``both@2``) and 10 (``both@10``), one among 10 (``one@10``)."""
    out: dict[str, Any] = {"pairs": len(pairs)}
    misses = []
    for form in ("bare", "question"):
        got = []
        for p in pairs:
            ranks = note_ranks(vault, p[form], [p["a"]["note"], p["b"]["note"]])
            got.append(ranks)
            if not all(r is not None and r <= 2 for r in ranks):
                misses.append({"form": form, "query": p[form], "ranks": ranks})
        out[form] = {
            fold: {
                "both@2": _share_of(part, lambda r: all(x is not None and x <= 2 for x in r)),
                "both@10": _share_of(part, lambda r: all(x is not None for x in r)),
                "one@10": _share_of(part, lambda r: any(x is not None for x in r)),
            }
            for fold, part in (("A", got[0::2]), ("B", got[1::2]), ("all", got))
        }
    out["misses"] = misses
    return out


def run_pairs_context(
    vault: Vault, root: Path, pairs: Sequence[dict[str, Any]], budgets: Sequence[int]
) -> dict[str, Any]:
    """Per query form, budget and fold, the share of pairs whose context holds a line of
    each note with its word (``both``), of one of them (``one``)."""
    out: dict[str, Any] = {"pairs": len(pairs), "mode": "context"}
    misses = []
    for form in ("bare", "question"):
        for budget in budgets:
            got = []
            for p in pairs:
                ctx = vault.context(p[form], budget=budget)
                found = []
                for probe in (p["a"], p["b"]):
                    lines = _holding_lines(root, probe["note"], probe["term"])
                    mine = [s for s in ctx.sources if s.path == probe["note"]]
                    found.append(any(s.line_start <= i <= s.line_end for s in mine for i in lines))
                got.append(found)
                if not all(found):
                    misses.append(
                        {"form": form, "budget": budget, "query": p[form], "found": found}
                    )
            out[f"{form}@{budget}"] = {
                fold: {"both": _share_of(part, all), "one": _share_of(part, any)}
                for fold, part in (("A", got[0::2]), ("B", got[1::2]), ("all", got))
            }
    out["misses"] = misses
    return out


def _share_of(found: Sequence[Any], ok: Callable[[Any], bool]) -> float:
    return round(sum(ok(f) for f in found) / max(len(found), 1), 3)


def _holding_lines(root: Path, note: str, term: str) -> set[int]:
    """The lines (1-based, as a context cites them) of ``note`` that hold ``term`` as a
    word (case aside)."""
    word = _word_re(term)
    text = (root / note).read_text(encoding="utf-8")
    return {i for i, line in enumerate(text.splitlines(), start=1) if word.search(line)}


def _word_re(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(term) + r"(?!\w)", re.IGNORECASE)


def context_found(
    vault: Vault, query: str, budget: int, note: str, term: str, lines: set[int]
) -> tuple[str, bool]:
    """Where the probe's note stands in ``Vault.context(query, budget)``: ``line`` (a
    source of the note covers a line holding the word), ``cited`` (the note is a
    source, not with that line), or ``out``; and whether the word is in the context's
    text at all (a word only in a heading, "### Webpack", is not: a context cites a
    chunk's lines under its first heading)."""
    ctx = vault.context(query, budget=budget)
    mine = [s for s in ctx.sources if s.path == note]
    text = bool(_word_re(term).search(ctx.text))
    if any(s.line_start <= i <= s.line_end for s in mine for i in lines):
        return "line", text
    return ("cited" if mine else "out"), text


def run_context(
    vault: Vault, root: Path, probes: Sequence[dict[str, Any]], budgets: Sequence[int]
) -> dict[str, Any]:
    """Per query form and budget, the share of probes whose context holds the note's
    line with the word (``line``), cites the note at all (``cited``), holds the word
    anywhere (``text``), per fold; a miss is a probe without the line."""
    out: dict[str, Any] = {"probes": len(probes), "mode": "context"}
    misses = []
    held = [_holding_lines(root, p["note"], p["term"]) for p in probes]
    for form, key in (("bare", "term"), ("question", "question")):
        for budget in budgets:
            found: list[tuple[str, bool]] = []
            for p, lines in zip(probes, held, strict=True):
                got = context_found(vault, p[key], budget, p["note"], p["term"], lines)
                found.append(got)
                if got[0] != "line":
                    misses.append(
                        {"form": form, "budget": budget, "query": p[key], "note": p["note"]}
                        | {"kind": p["kind"], "got": got[0], "in_text": got[1]}
                    )
            out[f"{form}@{budget}"] = {
                fold: {
                    "line": _share(part, lambda f: f[0] == "line"),
                    "cited": _share(part, lambda f: f[0] != "out"),
                    "text": _share(part, lambda f: f[1]),
                    "missed": sum(f[0] != "line" for f in part),
                }
                for fold, part in (("A", found[0::2]), ("B", found[1::2]), ("all", found))
            }
    out["misses"] = misses
    return out


def _share(found: Sequence[tuple[str, bool]], ok: Callable[[tuple[str, bool]], bool]) -> float:
    return round(sum(ok(f) for f in found) / max(len(found), 1), 3)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True, help="where the indexed copies live")
    parser.add_argument("--only", choices=("help", "synthetic"), action="append")
    parser.add_argument("--help-vault", type=Path, default=Path("/work/data/obsidian-help"))
    parser.add_argument("--set", action="append", default=[], help="section.key=value")
    parser.add_argument("--grid", type=Path, help="a JSON list of {name, set: [...]}")
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--seed", type=int, default=25, help="draws the probes")
    parser.add_argument("--vault-seed", type=int, default=7, help="writes the synthetic vault")
    parser.add_argument("--misses", action="store_true", help="print each miss")
    parser.add_argument(
        "--context",
        metavar="BUDGETS",
        help="probe Vault.context at these budgets (e.g. 1000,2000), not Vault.search",
    )
    parser.add_argument("--pairs", action="store_true", help="two probes in one query")
    args = parser.parse_args(argv)
    configs = json.loads(args.grid.read_text()) if args.grid else [{"name": "run", "set": args.set}]
    args.work.mkdir(parents=True, exist_ok=True)
    for which in args.only or ("help", "synthetic"):
        root = args.work / which
        planted: list[tuple[str, str]] = []
        if which == "help":
            from note_recall import prepare

            root = prepare("help", args.work, args.help_vault)
            source = args.help_vault
        else:
            source = root
            if not root.is_dir():
                planted = synthetic(root, seed=args.vault_seed)
                (root / ".memvault").mkdir(parents=True, exist_ok=True)
                (args.work / "synthetic-planted.json").write_text(json.dumps(planted))
            planted = [
                tuple(p) for p in json.loads((args.work / "synthetic-planted.json").read_text())
            ]  # type: ignore[misc]
        probes: list[dict[str, Any]] | None = None
        for config in configs:
            started = time.perf_counter()
            with Vault.open(root, overrides=parse_sets(config["set"])) as vault:
                vault.sync()
                synced = time.perf_counter() - started
                if probes is None:  # drawn once, from the index, for every config
                    rng = random.Random(args.seed)
                    probes = (
                        help_probes(vault, source, rng, args.sample)
                        if which == "help"
                        else synthetic_probes(vault, planted, rng, args.sample)
                    )
                budgets = [int(b) for b in args.context.split(",")] if args.context else []
                if args.pairs:
                    pairs = pair_up(probes, random.Random(args.seed))
                    result = (
                        run_pairs_context(vault, root, pairs, budgets)
                        if budgets
                        else run_pairs(vault, pairs)
                    )
                elif budgets:
                    result = run_context(vault, root, probes, budgets)
                else:
                    result = run_probes(vault, probes)
            if not args.misses:
                result["misses"] = len(result["misses"])
            result.update(
                vault=which,
                config=config["name"],
                sync_s=round(synced, 1),
                s=round(time.perf_counter() - started, 1),
            )
            print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
