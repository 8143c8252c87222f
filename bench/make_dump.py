"""Generate a realistic giant MEMORY.md: the failure memvault exists to prevent.

    python bench/make_dump.py dump.md --lines 52847

Years of an agent appending to one file: dated sections in every heading
format people use, meeting notes, decisions ("we decided ...", "Decision:",
"ADR-12"), sections about people and projects, code blocks, and noise. It is
deterministic (seeded), so tests and the README demo see the same dump.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
from pathlib import Path

PEOPLE = [
    "Sarah Chen",
    "Marcus Webb",
    "Priya Raman",
    "Tom Okafor",
    "Lena Vogel",
    "Diego Alvarez",
    "Aiko Tanaka",
    "Noah Fischer",
]
ROLES = [
    "backend lead",
    "product manager",
    "SRE",
    "data scientist",
    "designer",
    "CTO",
    "frontend engineer",
    "security lead",
]
PROJECTS = [
    "Billing v2",
    "Assistant Refactor",
    "Search Revamp",
    "Mobile App",
    "Data Platform",
    "User Service",
]
TOPICS = [
    "the deploy pipeline",
    "flaky integration tests",
    "the on-call rotation",
    "latency in search",
    "the quarterly roadmap",
    "customer onboarding",
    "the retry policy",
    "error budgets",
    "the cache layer",
    "feature flags",
    "the schema migration",
    "rate limiting",
]
DECISIONS = [
    (
        "use PostgreSQL for the user service database schema",
        "one table per aggregate, JSONB for preferences, and migrations run with the service",
    ),
    ("adopt Kafka for domain events", "the outbox pattern keeps events and rows consistent"),
    ("move CI to self-hosted runners", "build minutes cost more than two runners"),
    ("keep the monorepo", "shared tooling outweighs slower checkouts"),
    ("ship feature flags through LaunchDarkly", "rollouts need per-customer targeting"),
    (
        "split the user service schema into accounts and profiles",
        "profile writes were locking logins",
    ),
    ("deprecate the v1 API by June", "three customers still call it; they agreed to migrate"),
    ("use UUIDv7 keys in new tables", "time-ordered ids keep indexes compact"),
]
FOLLOW_UPS = [
    "agreed to revisit",
    "I need to write up",
    "they will send notes on",
    "open question about",
    "next step is to measure",
    "follow up next week on",
]
WHEN = [
    "before the next release",
    "by Friday",
    "after the offsite",
    "once the metrics are in",
    "in the next planning meeting",
    "when Sarah is back",
]
DATE_FORMATS = [
    "## {d:%Y-%m-%d}",
    "## {d:%b} {d.day}, {d:%Y}",
    "### {d:%Y-%m-%d} — standup",
    "## {d:%Y-%m-%d}T09:30:00Z",
    "## {d.day} {d:%B} {d:%Y}",
]


def make_dump(lines: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    out: list[str] = ["# MEMORY", "", "Everything I need to remember, appended as it happens.", ""]
    day = dt.date(2021, 3, 1)
    while len(out) < lines:
        # several sections on many days (a morning entry, a standup, an evening note)
        day += dt.timedelta(days=rng.choice([0, 0, 1, 1, 1]))
        roll = rng.random()
        if roll < 0.04:
            person = rng.choice(PEOPLE)
            out += [
                f"## {person} ({rng.choice(ROLES)})",
                "",
                f"- prefers {rng.choice(['async updates', 'short calls', 'written specs'])}",
                f"- owns {rng.choice(PROJECTS)}; ask about {rng.choice(TOPICS)}",
                "",
            ]
            continue
        if roll < 0.07:
            project = rng.choice(PROJECTS)
            out += [
                f"## Project: {project}",
                "",
                f"Goal for {day:%B %Y}: finish {rng.choice(TOPICS)}.",
                f"- status: {rng.choice(['on track', 'at risk', 'blocked on review'])}",
                "",
            ]
            continue
        out.append(rng.choice(DATE_FORMATS).format(d=day))
        out.append("")
        for _ in range(rng.randint(6, 24)):
            r = rng.random()
            if r < 0.025:
                what, why = rng.choice(DECISIONS)
                out.append(
                    f"- {rng.randint(9, 17):02}:{rng.choice(['00', '15', '30', '45'])} "
                    f"We decided to {what}: {why}."
                )
            elif r < 0.035:
                what, why = rng.choice(DECISIONS)
                out += ["", f"Decision: {what[0].upper()}{what[1:]}. Reason: {why}.", ""]
            elif r < 0.05:
                out += ["```", f"## {day:%Y-%m-%d} this is code, not a heading", "SELECT 1;", "```"]
            else:
                who = rng.choice(PEOPLE)
                out.append(
                    f"- {rng.randint(8, 18):02}:{rng.choice(['00', '20', '40'])} "
                    f"{rng.choice(['Talked with', 'Paired with', 'Reviewed a PR from', 'Synced with'])} "
                    f"{who} about {rng.choice(TOPICS)} for {rng.choice(PROJECTS)}; "
                    f"{rng.choice(FOLLOW_UPS)} {rng.choice(TOPICS)} {rng.choice(WHEN)}."
                )
        out.append("")
    return "\n".join(out[:lines]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--lines", type=int, default=52_847)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    args.path.write_text(make_dump(args.lines, args.seed), encoding="utf-8")
    size = args.path.stat().st_size
    print(f"wrote {args.path}: {args.lines} lines, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
