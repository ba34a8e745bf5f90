"""Count the import cycles of ``src/dperm``, lazy imports included.

Every ``import`` and ``from ... import`` statement of every module counts, wherever it
stands (module level, inside a function, under ``if TYPE_CHECKING``); relative imports
are resolved. A name taken from a package that only re-exports it counts for the module
that defines it (``from dperm.privacy import PrivacyBudget`` is an edge to
``dperm.privacy.budget``, not to ``dperm.privacy``). A cycle is a strongly connected
component of more than one module in that graph (a knot of seven modules is one cycle).

Usage: ``python tools/import_cycles.py [SRC_DIR]`` prints each cycle with one closed path
through it and exits 1 if there is any; ``--edges`` prints the whole graph.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = "dperm"


def _modules(src: Path) -> dict[str, Path]:
    found = {}
    for path in sorted((src / ROOT).rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return name in modules and modules[name].name == "__init__.py"


def _absolute(module: str, node: ast.ImportFrom, modules: dict[str, Path]) -> str:
    if not node.level:
        return node.module or ""
    base = module if _is_package(module, modules) else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def _raw_imports(module: str, tree: ast.AST, modules: dict[str, Path]):
    """(target module, imported name or None, line) for every import statement."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node, modules)
            for alias in node.names:
                yield target, alias.name, node.lineno


class Graph:
    def __init__(self, src: Path):
        self.modules = _modules(src)
        self.trees = {m: ast.parse(p.read_text(), str(p)) for m, p in self.modules.items()}
        # names a package's __init__ takes from elsewhere: package -> {name: (module, name)}
        self.reexports: dict[str, dict[str, tuple[str, str]]] = {}
        for m, tree in self.trees.items():
            if not _is_package(m, self.modules):
                continue
            table = {}
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    target = _absolute(m, node, self.modules)
                    for alias in node.names:
                        table[alias.asname or alias.name] = (target, alias.name)
            self.reexports[m] = table
        self.edges: dict[str, dict[str, int]] = {m: {} for m in self.modules}
        for m, tree in self.trees.items():
            for target, name, line in _raw_imports(m, tree, self.modules):
                resolved = self._resolve(target, name)
                if resolved and resolved != m:
                    self.edges[m].setdefault(resolved, line)

    def _resolve(self, target: str, name: str | None, depth: int = 0) -> str | None:
        if not (target == ROOT or target.startswith(ROOT + ".")):
            return None
        if name is None:  # import a.b.c
            return target if target in self.modules else None
        if f"{target}.{name}" in self.modules:  # from a.b import c (a submodule)
            return f"{target}.{name}"
        if target not in self.modules:
            return None
        if depth < 20 and name in self.reexports.get(target, {}):
            source, original = self.reexports[target][name]
            if source != target:
                resolved = self._resolve(source, original, depth + 1)
                if resolved:
                    return resolved
        return target

    def cycles(self) -> list[list[str]]:
        """The strongly connected components of more than one module (Tarjan)."""
        index: dict[str, int] = {}
        low: dict[str, int] = {}
        stack: list[str] = []
        on_stack: set[str] = set()
        components = []
        counter = [0]

        def visit(v: str) -> None:
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on_stack.add(v)
            for w in sorted(self.edges[v]):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

        sys.setrecursionlimit(10_000)
        for v in sorted(self.modules):
            if v not in index:
                visit(v)
        return sorted(components)

    def path(self, component: list[str]) -> list[str]:
        """One closed path through a component, starting at its first module."""
        inside = set(component)
        start = component[0]
        # breadth-first search back to start covering the component's edges from start
        from collections import deque

        parents = {start: None}
        queue = deque([start])
        while queue:
            v = queue.popleft()
            for w in sorted(self.edges[v]):
                if w == start:
                    chain = [v]
                    while parents[chain[-1]] is not None:
                        chain.append(parents[chain[-1]])
                    return list(reversed(chain)) + [start]
                if w in inside and w not in parents:
                    parents[w] = v
                    queue.append(w)
        return component


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    show_edges = "--edges" in args
    args = [a for a in args if a != "--edges"]
    src = Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src"
    graph = Graph(src)
    if show_edges:
        for m in sorted(graph.edges):
            for t, line in sorted(graph.edges[m].items()):
                print(f"{m} -> {t}  (line {line})")
    cycles = graph.cycles()
    for component in cycles:
        print(f"cycle of {len(component)} modules: {', '.join(component)}")
        print("  e.g. " + " -> ".join(graph.path(component)))
    print(f"{len(cycles)} import cycles in {len(graph.modules)} modules")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())
