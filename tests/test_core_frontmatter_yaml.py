"""core/frontmatter_yaml.py: hostile frontmatter is refused quickly, in bounded memory."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import pytest

from memvault.core.frontmatter_yaml import MAX_DEPTH, FrontmatterRejected, load
from memvault.core.notes import parse_note

DAEMON = str(Path(__file__).resolve().parents[1] / "daemon")


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """Nine anchors, each a list of nine aliases of the one before: 9^9 strings."""
    names = [chr(97 + i) if levels <= 26 else f"n{i}" for i in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"{names[i]}: &{names[i]} [{', '.join([f'*{names[i - 1]}'] * width)}]")
    return "\n".join(lines)


BOMB_NOTE = f"---\n{alias_bomb()}\n---\n# Still here\n\nThe body is read: [[linked note]] #tagged\n"


def test_the_alias_bomb_is_a_few_hundred_bytes() -> None:
    assert len(BOMB_NOTE.encode()) < 500


def test_an_alias_bomb_is_refused_with_a_reason_and_the_body_is_still_read() -> None:
    note = parse_note("notes/bomb.md", BOMB_NOTE)
    assert note.frontmatter == {}
    assert len(note.warnings) == 1
    assert "alias" in note.warnings[0] and "frontmatter ignored" in note.warnings[0]
    assert [h.text for h in note.headings] == ["Still here"]
    assert [link.target for link in note.links] == ["linked note"]
    assert "tagged" in note.tags
    assert note.summary == "The body is read: linked note #tagged"


def test_refusing_the_bomb_allocates_little() -> None:
    tracemalloc.start()
    try:
        parse_note("notes/bomb.md", BOMB_NOTE)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # expanding it needs gigabytes (9^9 strings); measuring it, a few hundred node records
    assert peak < 2_000_000


@pytest.mark.parametrize(
    "raw",
    [
        alias_bomb(),
        alias_bomb(levels=30, width=2),  # 2^30 through long chains
        "a: &a [x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
        + "c: ["
        + ", ".join(["*b"] * 2000)
        + "]",
        "a: &a " + "x" * 2000 + "\nb: [" + ", ".join(["*a"] * 1000) + "]",  # 2 MB of text
    ],
    ids=["9x9", "2^30", "wide", "long-strings"],
)
def test_alias_expansion_past_the_bounds_is_refused(raw: str) -> None:
    with pytest.raises(FrontmatterRejected, match="alias"):
        load(raw)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("a: &a [*a]", "contains it"),
        ("a: &a {k: *a}", "contains it"),
        ("a: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5), "nested deeper"),
        ("a: " + "[" * 1_500 + "]" * 1_500, "nested deeper"),  # the pure-Python parser's range
        ("a: " + "[" * 100_000 + "]" * 100_000, "nested deeper"),  # crashed libyaml's composer
        ("a:\n" + "- " * 100_000 + "x", "nested deeper"),
        (
            "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5)) + "  " * 69 + "end: 1",
            "nested",
        ),
    ],
    ids=["self-list", "self-map", "flow-69", "flow-1500", "flow-100k", "compact-100k", "block-69"],
)
def test_loops_and_deep_nesting_are_refused(raw: str, reason: str) -> None:
    with pytest.raises(FrontmatterRejected, match=reason):
        load(raw)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (
            "base: &b {role: CTO}\nsarah: *b\nana: *b",
            {"base": {"role": "CTO"}, "sarah": {"role": "CTO"}, "ana": {"role": "CTO"}},
        ),
        ("tags: &t [a, b]\nalso: *t", {"tags": ["a", "b"], "also": ["a", "b"]}),
        ("a: " + "[" * 60 + "]" * 60, None),
        ("a: [" + ", ".join(["*x"] * 3) + "]\nx: &x 1", None),
        (
            "date: 2024-01-01\ntime: 10:00\nok: yes",
            {"date": "2024-01-01", "time": "10:00", "ok": "yes"},
        ),
        ("", None),
    ],
    ids=["map-aliases", "list-aliases", "nested-60", "alias-before-anchor", "yaml-1.2", "empty"],
)
def test_ordinary_frontmatter_still_loads(raw: str, value: object) -> None:
    import yaml

    try:
        loaded = load(raw)
    except yaml.YAMLError:
        loaded = "error"
    if raw.startswith("a: [*x"):
        assert loaded == "error"  # an alias used before its anchor is a YAML error, as before
    elif raw.startswith("a: ["):
        depth, node = 0, loaded["a"]
        while isinstance(node, list) and node:
            depth, node = depth + 1, node[0]
        assert depth == 59
    else:
        assert loaded == value


CHILD = textwrap.dedent(
    """
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
    sys.path.insert(0, sys.argv[1])
    from memvault.core.notes import parse_note
    out = []
    for text in json.loads(sys.stdin.read()):
        note = parse_note("n.md", text)
        out.append([list(note.warnings), [link.target for link in note.links]])
    print(json.dumps(out))
    """
)


def test_hostile_frontmatter_in_a_process_capped_at_768_mb() -> None:
    # a crash (libyaml's stack) or a MemoryError (the bomb expanded) fails this process, not pytest
    texts = [
        BOMB_NOTE,
        "---\na: " + "[" * 100_000 + "]" * 100_000 + "\n---\nbody [[b]]\n",
        "---\na:\n" + "- " * 100_000 + "x\n---\nbody [[b]]\n",
        "---\na: &a [*a]\n---\nbody [[b]]\n",
    ]
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    assert limit == resource.RLIM_INFINITY or limit > 768 << 20
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, DAEMON],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    results = json.loads(proc.stdout)
    assert [len(warnings) for warnings, _ in results] == [1, 1, 1, 1]
    assert all(warnings[0].startswith("frontmatter ignored: ") for warnings, _ in results)
    assert results[0][1] == ["linked note"]
    assert all("b" in links for _, links in results[1:])
