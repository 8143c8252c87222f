"""Links on a whole vault: the link check, then a batch of renames followed by memvault.

    python bench/links_bench.py [VAULT]          # any Obsidian vault (it is copied first)
    python bench/links_bench.py --generate 1500  # a generated docs-style vault of N notes

Reported: notes, attachments and links read; what `links check` finds, by verdict, and
how long it takes on a vault never indexed (in memory); then a batch of renames done
on disk as a person would (the most linked notes, the most embedded attachment, the
largest folder of notes, a folder of attachments) and one `sync`: links re-targeted,
notes written, links whose destination changed (must be 0: every link leads to the
same file it led to before), and bytes changed outside link targets (must be 0).
The index uses the hash embedder (links do not depend on the model).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "daemon"))

from memvault.api import Vault  # noqa: E402
from memvault.core.notes import parse_note  # noqa: E402
from memvault.core.wikilinks import LinkIndex, find_links  # noqa: E402
from memvault.index.embedder import HashEmbedder  # noqa: E402

ATTACHMENT_KINDS = ("png", "jpg", "pdf", "mp3", "mp4", "canvas", "base", "svg")
WORDS = """sync vault plugin canvas graph link embed heading block search publish theme
property template daily note folder attachment callout table query file hotkey""".split()  # noqa: SIM905


# -- a generated vault -------------------------------------------------------------------------


def generate(root: Path, notes: int, seed: int = 12) -> None:
    """A docs-style vault: folders of notes linking each other in every form Obsidian
    reads (anchors, blocks, aliases, embeds, markdown links with <> and %20, links in
    tables, code and comments), attachments of eight types, a few broken links."""
    rng = random.Random(seed)
    folders = ["Getting started", "Editing", "Plugins", "Sync", "Publish", "Reference", ""]
    titles = []
    for i in range(notes):
        words = rng.sample(WORDS, 2)
        titles.append(f"{words[0].title()} {words[1]} {i}")
    paths = [
        f"{folders[i % len(folders)]}/{t}.md" if folders[i % len(folders)] else f"{t}.md"
        for i, t in enumerate(titles)
    ]
    attachments = []
    for i in range(notes // 5):
        kind = ATTACHMENT_KINDS[i % len(ATTACHMENT_KINDS)]
        sub = "Attachments/icons" if kind == "svg" else "Attachments"
        attachments.append(f"{sub}/{rng.choice(WORDS)} {i}.{kind}")
    for i, rel in enumerate(attachments):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(rng.getrandbits(8) for _ in range(64 + i)))
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "app.json").write_text('{"alwaysUpdateLinks": true}\n')
    popular = paths[: max(4, notes // 50)]  # a few notes everyone links
    headings = [
        [f"{rng.choice(WORDS).title()} `{rng.choice(WORDS)}()` {h}?" for h in range(3)]
        for _ in paths
    ]
    for i, rel in enumerate(paths):
        title = titles[i]
        lines = [f"# {title}", "", f"How {title.lower()} works. ^intro-{i}", ""]
        for h in range(3):
            lines += [f"## {headings[i][h]}", ""]
            for _ in range(rng.randint(2, 5)):
                other = rng.choice(popular if rng.random() < 0.4 else paths)
                name = other.rsplit("/", 1)[-1][:-3]
                form = rng.random()
                if form < 0.3:
                    link = f"[[{name}]]"
                elif form < 0.45:
                    link = f"[[{name}|the {rng.choice(WORDS)} page]]"
                elif form < 0.6:
                    k = paths.index(other)
                    link = f"[[{name}#^intro-{k}]]"
                elif form < 0.7:
                    link = f"![[{rng.choice(attachments).rsplit('/', 1)[-1]}]]"
                elif form < 0.8:
                    link = f"[{name}](<{other}>)"
                elif form < 0.9:
                    link = f"[{name}]({other.replace(' ', '%20')})"
                else:  # as a person types it: no backticks, no "?" (Obsidian matches it)
                    wanted = rng.choice(headings[paths.index(other)])
                    link = f"[[{other[:-3]}#{wanted.replace('`', '').rstrip('?')}]]"
                lines.append(f"- {rng.choice(WORDS)} {link} and more text.")
            lines.append("")
        lines += [
            "| what | where |",
            "| --- | --- |",
            f"| see | [[{rng.choice(popular).rsplit('/', 1)[-1][:-3]}\\|table link]] |",
            "",
            "```",
            "[[not a link in code]]",
            "```",
            "<!-- [[not a link in a comment]] -->",
            "",
        ]
        if i % 97 == 0:
            lines.append(f"A broken one: [[Nothing here {i}]]")
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# -- measuring ---------------------------------------------------------------------------------


def vault_files(root: Path) -> tuple[dict[str, str], list[str]]:
    notes, files = {}, []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if not path.is_file() or any(p.startswith(".") for p in rel.split("/")):
            continue
        files.append(rel)
        if rel.endswith(".md"):
            notes[rel] = path.read_text(encoding="utf-8")
    return notes, files


def skeleton(text: str) -> list[str]:
    pieces, pos = [], 0
    for link in find_links(text):
        pieces.append(text[pos : link.target_start])
        pos = link.target_end
    return [*pieces, text[pos:]]


def destinations(notes: dict[str, str], files: list[str]) -> dict[tuple[str, int], str | None]:
    aliases = {p: parse_note(p, t).aliases for p, t in notes.items()}
    idx = LinkIndex(files, {p: a for p, a in aliases.items() if a})
    out = {}
    for path, text in notes.items():
        for k, link in enumerate(find_links(text)):
            res = idx.resolve(link.target, path)
            out[(path, k)] = res.path if res.verdict == "resolved" else None
    return out


def pick_renames(notes: dict[str, str], files: list[str]) -> list[tuple[str, str]]:
    """The most linked notes, the most embedded attachment, the biggest folder of notes,
    a folder of attachments (as a person would rename them, on disk)."""
    dest = Counter(d for d in destinations(notes, files).values() if d)
    top_notes = [p for p, _ in dest.most_common() if p.endswith(".md") and p != "MEMORY.md"][:4]
    top_attachment = next(p for p, _ in dest.most_common() if not p.endswith(".md"))
    folders = Counter(p.rsplit("/", 1)[0] for p in notes if "/" in p)
    busiest = next(
        f for f, _ in folders.most_common() if not any(n.startswith(f + "/") for n in top_notes)
    )
    renames = [(p, p[:-3] + " (renamed).md") for p in top_notes]
    renames.append(
        (
            top_attachment,
            top_attachment.rsplit("/", 1)[0]
            + "/moved/"
            + "picture."
            + top_attachment.rsplit(".", 1)[-1],
        )
    )
    renames.append((busiest, busiest + " (old)"))
    att_folders = sorted(
        {p.rsplit("/", 1)[0] for p in files if not p.endswith(".md") and "/" in p},
        key=len,
        reverse=True,
    )
    if att_folders and att_folders[0] != top_attachment.rsplit("/", 1)[0]:
        renames.append((att_folders[0], "Media/" + att_folders[0].rsplit("/", 1)[-1]))
    return renames


def moved_path(path: str, renames: list[tuple[str, str]]) -> str:
    for old, new in renames:
        if path == old:
            path = new
        elif path.startswith(old + "/"):
            path = new + path[len(old) :]
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault", nargs="?", type=Path)
    parser.add_argument("--generate", type=int, default=1500, help="notes in a generated vault")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the link check (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        if args.vault is not None:
            shutil.copytree(
                args.vault,
                root,
                copy_function=shutil.copy,
                ignore=shutil.ignore_patterns(".memvault", ".git"),
            )
            source = str(args.vault)
        else:
            generate(root, args.generate)
            source = f"generated, {args.generate} notes (bench/links_bench.py --generate)"
        notes, files = vault_files(root)
        links = sum(len(find_links(t)) for t in notes.values())
        print(f"vault: {source}")
        print(f"notes {len(notes)}, attachments {len(files) - len(notes)}, links {links}")
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            with Vault.open(root, read_only=True) as v:  # never indexed: read in memory
                problems = v.links_check()
            times.append(time.perf_counter() - started)
        assert not (root / ".memvault").exists(), "links check wrote into the vault"
        counts = Counter(p.verdict for p in problems)
        print(
            f"links check (never indexed, in memory): {dict(sorted(counts.items()))}, "
            f"median {statistics.median(times):.2f} s of {args.repeat}"
        )
        with Vault.open(root, embedder=HashEmbedder()) as v:
            v.sync()
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                v.links_check()
                times.append(time.perf_counter() - started)
            print(
                f"links check (indexed: the links table, notes with a problem parsed): "
                f"median {statistics.median(times):.2f} s of {args.repeat}"
            )
            notes, files = vault_files(root)
            before = destinations(notes, files)
            renames = pick_renames(notes, files)
            for old, new in renames:
                (root / new).parent.mkdir(parents=True, exist_ok=True)
                (root / old).rename(root / new)
            started = time.perf_counter()
            report = v.sync()
            seconds = time.perf_counter() - started
            after_problems = v.links_check()
        new_notes, new_files = vault_files(root)
        after = destinations(new_notes, new_files)
        retargeted = changed_dest = 0
        outside = 0
        for path, text in notes.items():
            new_path = moved_path(path, renames)
            new_text = new_notes[new_path]
            old_links, new_links = find_links(text), find_links(new_text)
            assert len(old_links) == len(new_links), path
            for k, (a, b) in enumerate(zip(old_links, new_links, strict=True)):
                if text[a.target_start : a.target_end] != new_text[b.target_start : b.target_end]:
                    retargeted += 1
                was = before[(path, k)]
                if was is not None and after[(new_path, k)] != moved_path(was, renames):
                    changed_dest += 1
            if skeleton(text) != skeleton(new_text):
                outside += sum(
                    abs(len(x) - len(y)) + sum(c != d for c, d in zip(x, y, strict=False))
                    for x, y in zip(skeleton(text), skeleton(new_text), strict=True)
                )
        print("renames: " + "; ".join(f"{o} -> {n}" for o, n in renames))
        print(
            f"sync after the renames: {seconds:.2f} s; notes moved {len(report.moved)}, "
            f"attachments moved {len(report.attachments_moved)}, notes relinked "
            f"{len(report.relinked)}, links re-targeted {retargeted}"
        )
        print(f"links whose destination changed: {changed_dest}")
        print(f"bytes changed outside link targets: {outside}")
        after_counts = Counter(p.verdict for p in after_problems)
        print(f"links check after: {dict(sorted(after_counts.items()))}")


if __name__ == "__main__":
    main()
