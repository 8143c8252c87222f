"""The shape of the code, checked: imports flow one way, core is pure, SQL lives in
the store, no module-level import circle exists (docs/ARCHITECTURE.md), and nothing
grows past ~600 lines a module or ~400 a class without a reason (docs/sizes.py)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "daemon" / "memvault"
_spec = importlib.util.spec_from_file_location("import_graph", ROOT / "docs" / "import_graph.py")
assert _spec is not None and _spec.loader is not None
graph_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(graph_tool)
_spec = importlib.util.spec_from_file_location("sizes", ROOT / "docs" / "sizes.py")
assert _spec is not None and _spec.loader is not None
sizes_tool = importlib.util.module_from_spec(_spec)
sys.modules["sizes"] = sizes_tool  # (its dataclass looks its module up)
_spec.loader.exec_module(sizes_tool)

# part -> the parts it may import (each below it); anything else is a layer leak
ALLOWED = {
    "errors": set(),
    "core": set(),
    "config": {"core", "errors"},
    "vault": {"config", "core", "errors"},
    "index": {"config", "core", "errors"},
    # a running daemon's HTTP API, for Vault (writes go to the daemon) and the adapters
    "client": {"config", "core", "errors", "vault"},
    "engine": {"config", "core", "errors", "index", "vault"},
    # the two backends a Vault holds (the engine and its lock, or the daemon's client)
    "backends": {"client", "config", "core", "engine", "errors", "index", "vault"},
    "api": {"backends", "client", "config", "core", "engine", "errors", "index", "vault"},
    "migration": {"api", "config", "core", "errors", "vault"},
    "service": {"api", "config", "core", "engine", "errors", "index", "vault"},
    # a vault kept between an adapter's calls (the MCP server's, the memory tool's)
    # (and its watcher while it is kept: service/door_watch.py)
    "door": {"api", "backends", "config", "errors", "service"},
    "interfaces": {
        "api", "backends", "client", "config", "core", "door", "engine", "errors", "index",
        "migration", "service", "vault",
    },
    # other tools' memory kept by a vault (memvault.integrations.anthropic): over the API
    "integrations": {"api", "core", "door", "errors"},
    "__main__": {"interfaces"},
    "memvault": {"api", "core", "errors"},  # the package's lazy re-exports
}  # fmt: skip
THIRD_PARTY_IN_CORE = {"yaml", "snowballstemmer", "hanziconv"}  # pure: a parser, tables


def test_every_part_imports_only_the_parts_below_it() -> None:
    leaks = []
    for module, deps in graph_tool.graph().items():
        mine = graph_tool.part(module)
        assert mine in ALLOWED, f"{module}: a new part; give it a place in ALLOWED"
        for dep in deps:
            theirs = graph_tool.part(dep)
            if dep != "memvault" and theirs != mine and theirs not in ALLOWED[mine]:
                leaks.append(f"{module} imports {dep}")
    assert leaks == []


def test_core_imports_only_core_the_standard_library_and_yaml() -> None:
    bad = []
    for path in sorted((PACKAGE / "core").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                inside = name == "memvault.core" or name.startswith("memvault.core.")
                if not (inside or top in sys.stdlib_module_names or top in THIRD_PARTY_IN_CORE):
                    bad.append(f"{path.name}: {name}")
    assert bad == []


def test_the_checks_see_a_leak_when_there_is_one(tmp_path: Path) -> None:
    leaky = tmp_path / "leak.py"
    leaky.write_text("def f():\n    from memvault.engine import Engine\n", encoding="utf-8")
    assert graph_tool.imports(leaky) == {"memvault.engine"}
    assert graph_tool.imports(leaky, top_level=True) == set()


def test_no_module_level_import_circle() -> None:
    modules = graph_tool.graph(top_level=True)
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        if module in path:
            pytest.fail("import circle: " + " -> ".join((*path[path.index(module) :], module)))
        if module in done:
            return
        for dep in sorted(modules.get(module, ())):
            visit(dep, (*path, module))
        done.add(module)

    for module in sorted(modules):
        visit(module, ())


def test_no_import_circle_even_through_lazy_imports() -> None:
    assert graph_tool.circles(graph_tool.graph()) == []


def test_the_circle_check_sees_a_circle() -> None:
    modules = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert graph_tool.circles(modules) == [["a", "b", "c"]]


def test_sql_is_written_only_in_the_store() -> None:
    outside = [
        str(p.relative_to(PACKAGE))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.parent.name != "index" and (".execute(" in p.read_text(encoding="utf-8"))
    ]
    assert outside == []


def test_no_module_past_600_lines_or_class_past_400_without_a_reason_at_its_top() -> None:
    unexplained = [
        f"{s.name}: {s.lines} lines" for s in sizes_tool.sizes() if s.over and not s.reason
    ]
    assert unexplained == [], "split it, or say why not in a 'Size:' paragraph of its docstring"


def test_the_size_check_sees_a_long_module_and_class_and_reads_their_reasons(
    tmp_path: Path,
) -> None:
    package = tmp_path / "memvault"
    package.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(sizes_tool.CLASS_LINES))
    (package / "long.py").write_text(
        '"""A module.\n\nSize: one parser, cut anywhere it reads worse."""\n\n\n'
        + "class Long:\n"
        + body
        + "\n" * (sizes_tool.MODULE_LINES - sizes_tool.CLASS_LINES),
        encoding="utf-8",
    )
    (package / "short.py").write_text("class Short:\n    pass\n", encoding="utf-8")
    found = {s.name: s for s in sizes_tool.sizes(package)}
    assert found["memvault.long"].over
    assert found["memvault.long"].reason == "Size: one parser, cut anywhere it reads worse."
    assert found["memvault.long.Long"].over and found["memvault.long.Long"].reason is None
    assert not found["memvault.short"].over and not found["memvault.short.Short"].over
