"""Print memvault's import graph between its parts (packages and top-level modules).

    python docs/import_graph.py            # part -> parts it imports, then any circle
    python docs/import_graph.py --modules  # module -> modules

Every ``import``/``from ... import`` of ``memvault`` anywhere in a module counts,
including the lazy ones inside functions and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "daemon" / "memvault"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, top_level: bool = False) -> set[str]:
    """The memvault modules ``path`` imports (``top_level``: only those imported when it
    loads — not inside functions, not under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = _top_level(tree.body) if top_level else ast.walk(tree)
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("memvault")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memvault"):
            assert node.module is not None
            # ``from memvault.service import runfile`` imports the module memvault.service.runfile
            # (its package runs first, as for any submodule: that is no edge of its own)
            folder = PACKAGE.parent / node.module.replace(".", "/")
            for alias in node.names:
                if (folder / f"{alias.name}.py").exists():
                    found.add(f"{node.module}.{alias.name}")
                else:
                    found.add(node.module)
    return found


def _top_level(body: list[ast.stmt]) -> list[ast.AST]:
    out: list[ast.AST] = []
    for node in body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        elif isinstance(node, ast.If | ast.Try):
            out += _top_level(node.body) + _top_level(node.orelse)
    return out


def part(module: str) -> str:
    """memvault.engine.reader -> engine; memvault.api -> api; memvault -> memvault."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else pieces[0]


def graph(top_level: bool = False) -> dict[str, set[str]]:
    return {module_name(p): imports(p, top_level) for p in sorted(PACKAGE.rglob("*.py"))}


def circles(modules: dict[str, set[str]]) -> list[list[str]]:
    """The modules that import each other round a circle (strongly connected groups of
    more than one), each group sorted; lazy imports count: a circle is a circle."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for dep in sorted(modules.get(module, ())):
            if dep not in modules:
                continue
            if dep not in order:
                visit(dep)
                low[module] = min(low[module], low[dep])
            elif dep in stack:
                low[module] = min(low[module], order[dep])
        if low[module] == order[module]:
            group = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(modules):
        if module not in order:
            visit(module)
    return sorted(found)


def main() -> None:
    modules = graph()
    if "--modules" in sys.argv:
        for mod, deps in modules.items():
            print(f"{mod} -> {', '.join(sorted(deps)) or '-'}")
        return
    parts: dict[str, set[str]] = defaultdict(set)
    for mod, deps in modules.items():
        parts[part(mod)] |= {part(d) for d in deps if d != "memvault"} - {part(mod)}
    for name in sorted(parts):
        print(f"{name:<12} -> {', '.join(sorted(parts[name])) or '-'}")
    found = circles(modules)
    print("import circles: " + ("; ".join(" <-> ".join(c) for c in found) if found else "none"))


if __name__ == "__main__":
    main()
