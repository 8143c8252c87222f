"""The shape of the code, checked: imports flow one way, core is pure, SQL lives in
the store, and no module-level import circle exists (docs/ARCHITECTURE.md)."""

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
    "api": {"client", "config", "core", "engine", "errors", "index", "vault"},
    "migration": {"api", "config", "core", "errors", "vault"},
    "daemon": {"api", "config", "core", "engine", "errors", "index", "vault"},
    "interfaces": {
        "api", "client", "config", "core", "daemon", "engine", "errors", "index", "migration",
        "vault",
    },
    "__main__": {"interfaces"},
    "memvault": {"api", "core", "errors"},  # the package's lazy re-exports
}  # fmt: skip
THIRD_PARTY_IN_CORE = {"yaml"}


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


def test_sql_is_written_only_in_the_store() -> None:
    outside = [
        str(p.relative_to(PACKAGE))
        for p in sorted(PACKAGE.rglob("*.py"))
        if p.parent.name != "index" and (".execute(" in p.read_text(encoding="utf-8"))
    ]
    assert outside == []
