"""Shared helpers: real stores in tmp folders, real git, and a real `memory-mcp serve` subprocess
driven by the `mcp` SDK client over stdio. Nothing under test is mocked."""

from __future__ import annotations

import contextlib
import inspect
import os
import pty
import re
import socket
import subprocess
import sys
import threading
import time
import types
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from memory_mcp.app.store import Store, init_store
from memory_mcp.truth.ulids import new_ulid

ROOT = Path(__file__).resolve().parent.parent  # the repository
EXE = Path(sys.executable).parent / "memory-mcp"
ULID_CHARS = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


# ---------------------------------------------------------------- the `slow` marker
# `pytest -m "not slow"` is the inner loop: unit and in-process tests. A test is slow when it, one of
# its fixtures, or a helper of its module they call starts a process: `memory-mcp serve` (the `s`
# fixture, open_server, http_server), the CLI (EXE), or any other program or Python (Popen,
# sys.executable). Hypothesis tests (fuzzing) are slow too. Other long tests carry an explicit mark.
_PROCESS_NAMES = frozenset({"EXE", "open_server", "http_server", "server_params", "server_env", "Popen",
                            "executable"})


def _names(fn: object, module: types.ModuleType | None, depth: int = 2) -> set[str]:
    """Global and attribute names a function's code uses, its nested functions' and (to `depth`) those
    of the functions of `module` it calls."""
    code = getattr(inspect.unwrap(fn), "__code__", None)  # type: ignore[arg-type]
    if code is None:
        return set()
    names: set[str] = set()
    todo = [code]
    while todo:
        c = todo.pop()
        names |= set(c.co_names)
        todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
    if depth and module is not None:
        for name in list(names):
            helper = getattr(module, name, None)
            if inspect.isfunction(helper) and helper.__module__ == module.__name__:
                names |= _names(helper, module, depth - 1)
    return names


def _starts_a_process(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    funcs = [getattr(item, "obj", None)]
    info = getattr(item, "_fixtureinfo", None)
    for defs in (info.name2fixturedefs.values() if info else ()):
        funcs += [d.func for d in defs]
    return any(_PROCESS_NAMES & _names(f, sys.modules.get(getattr(f, "__module__", "")) or module)
               for f in funcs if f is not None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        obj = getattr(item, "obj", None)
        if getattr(obj, "is_hypothesis_test", False) or _starts_a_process(item):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _isolated_git(tmp_path_factory: pytest.TempPathFactory) -> None:
    """No git identity, no system config, no MEMORY_MCP_ROOT from the person running the tests:
    every run sees the same environment (the fallback identity is what commits)."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        for var in ("MEMORY_MCP_ROOT", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                    "GIT_COMMITTER_EMAIL", "GIT_DIR", "GIT_WORK_TREE", "XDG_CONFIG_HOME"):
            mp.delenv(var, raising=False)
        yield


# ---------------------------------------------------------------- stdio server
@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """A store path of the test module's own (not created yet: the first call creates it)."""
    return tmp_path_factory.mktemp(request.module.__name__.removeprefix("test_")) / "store"


@pytest.fixture(scope="module")
async def s(store: Path):
    """One `memory-mcp serve` process for the whole module, over stdio."""
    async with open_server(store) as session:
        await session.call("memory_status")
        yield session


def server_env(store: Path, home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    if not store.exists():
        # `serve` refuses a store path a person named that does not exist (a typo must not start an
        # empty store); the tests name new paths, so the store is made first, as `install` would.
        init_store(store)
    user = (extra or {}).get("MEMORY_MCP_USER_ROOT")
    if user and not Path(user).exists():
        init_store(Path(user))  # a named user store is refused the same way
    # The config folder of this process: a project store the test made above is trusted there
    # (app/consent.py), and the server must see that decision under its own HOME.
    env = {"MEMORY_MCP_ROOT": str(store), "HOME": str(home), "PATH": os.environ["PATH"],
           "GIT_CONFIG_NOSYSTEM": "1",
           "XDG_CONFIG_HOME": os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")}
    env.update(extra or {})
    return env


def server_params(store: Path, home: Path, extra: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=str(EXE), args=["serve"], env=server_env(store, home, extra))


class ToolFailed(AssertionError):
    def __init__(self, name: str, text: str) -> None:
        super().__init__(f"{name} failed: {text}")
        self.text = text


class Session:
    """A thin wrapper over the SDK client: `call` returns structured content, `error` the error text."""

    def __init__(self, client: Client, store: Path) -> None:
        self.client = client
        self.store = store

    async def raw(self, name: str, **args):  # type: ignore[no-untyped-def]
        return await self.client.call_tool(name, args)

    async def call(self, name: str, **args) -> dict:
        r = await self.client.call_tool(name, args)
        if r.is_error:
            raise ToolFailed(name, "".join(getattr(c, "text", "") for c in r.content))
        assert isinstance(r.structured_content, dict), f"{name}: no structured content"
        return r.structured_content

    async def error(self, name: str, **args) -> str:
        """The error text of a call that must be refused (as a tool error, not a protocol error)."""
        r = await self.client.call_tool(name, args)
        assert r.is_error, f"{name}({args}) was expected to fail but returned {r.structured_content}"
        return "".join(getattr(c, "text", "") for c in r.content)

    async def recall_ids(self, query: str = "", **args) -> list[str]:
        r = await self.call("memory_recall", query=query, **args)
        return [h["id"] for h in r["results"]]


@contextlib.asynccontextmanager
async def open_server(store: Path, home: Path | None = None, extra_env: dict[str, str] | None = None,
                      **client_kwargs) -> AsyncIterator[Session]:
    home = home or store.parent / "home"
    home.mkdir(parents=True, exist_ok=True)
    async with Client(server_params(store, home, extra_env), **client_kwargs) as client:
        yield Session(client, store)


# ---------------------------------------------------------------- stores and files
def git(store: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True,
                          check=check).stdout


def pair(tmp_path: Path, seed: int = 0) -> tuple[Store, Store, Path]:
    """Store `a` (Ann) with `seed` memories pushed to a bare remote, and `b` (Bob) cloned from it."""
    a = Store.open(tmp_path / "a")
    git(a.root, "config", "user.name", "Ann")
    git(a.root, "config", "user.email", "ann@example.org")
    for i in range(seed):
        a.remember(f"Seed fact number {i} about the auk cluster's node {i}.")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(bare)], check=True)
    git(a.root, "remote", "add", "origin", str(bare))
    a.sync()
    subprocess.run(["git", "clone", "-q", str(bare), str(tmp_path / "b")], check=True)
    git(tmp_path / "b", "config", "user.name", "Bob")
    git(tmp_path / "b", "config", "user.email", "bob@example.org")
    return a, Store.open(tmp_path / "b"), bare


def delete_all_and_push(b: Store) -> None:
    """Bob empties memories/ with plain git and pushes (what an emptied or force-pushed branch brings)."""
    git(b.root, "rm", "-q", "-r", "memories")
    git(b.root, "commit", "-q", "-m", "remove everything")
    git(b.root, "push", "-q", "origin", "HEAD:main")


def commit_count(store: Path) -> int:
    return int(git(store, "rev-list", "--count", "HEAD").strip())


def subjects(store: Path, n: int | None = None) -> list[str]:
    args = ["log", "--format=%s"] + ([f"-n{n}"] if n else [])
    return git(store, *args).splitlines()


def new_id() -> str:
    return new_ulid()


def make_store(path: Path) -> Path:
    return init_store(path)


def open_store(path: Path) -> Store:
    return Store.open(path)


def fm_file(store: Path, name: str, body: str, **fields: object) -> Path:
    """Write a memory file by hand, the way a person would in an editor. `fields` go to the
    frontmatter in order (lists as flow sequences); an `id` is made up when not given."""
    fields.setdefault("id", new_id())
    lines = ["---"]
    for key, value in fields.items():
        if isinstance(value, list):
            lines.append(f"{key}: [{', '.join(str(v) for v in value)}]")
        elif value is not None:
            lines.append(f"{key}: {value}")
    lines.append("---")
    path = store / "memories" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n" + body, encoding="utf-8")
    return path


def fm_value(path: Path, key: str) -> str | None:
    """The raw text of one top-level frontmatter key as the file holds it (None when absent)."""
    text = path.read_text(encoding="utf-8")
    head = text.split("\n---\n", 1)[0]
    for line in head.splitlines()[1:]:
        if line.startswith(f"{key}:"):
            return line[len(key) + 1:].strip()
    return None


# ---------------------------------------------------------------- HTTP server
def free_port() -> int:
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        return sk.getsockname()[1]


@contextlib.contextmanager
def http_server(store: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[int]:
    """`memory-mcp serve --http` on a free port (extra `args` after it); yields the port once the
    server accepts connections on loopback, and stops it afterwards."""
    port = free_port()
    log = store.parent / f"http-{port}.log"
    store.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as err:
        proc = subprocess.Popen([str(EXE), "serve", "--http", "--port", str(port), *args],
                                env=server_env(store, store.parent, env), stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, f"server exited: {log.read_text(errors='replace')[-500:]}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "server did not start listening"
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def start_watch(store: Path, home: Path) -> tuple[subprocess.Popen[str], list[str]]:
    """`memory-mcp watch --store store` as a person runs it, once it has printed its first line
    ("watching ...", after the first reconcile); the list fills with its output lines as they come."""
    proc = subprocess.Popen([str(EXE), "watch", "--store", str(store)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=server_env(store, home))
    lines: list[str] = []
    assert proc.stdout is not None  # stdout=PIPE
    out = proc.stdout
    threading.Thread(target=lambda: lines.extend(iter(out.readline, "")), daemon=True).start()
    while not lines:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.05)
    return proc, lines


def run_on_terminal(args: list[str], env: dict[str, str], timeout: float) -> tuple[subprocess.CompletedProcess[str], bytes]:
    """Run a command with its stderr on a pseudo-terminal, as a person at a shell sees it: the
    finished process (stdout captured) and every byte it drew on the terminal."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=follower, env=env, timeout=timeout, text=True)
        os.close(follower)
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: everything was read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(leader)
    return done, drawn


def auto_memory(env: dict[str, str]) -> Path:
    """A Claude Code auto-memory folder for the project of a hook environment (`hook_env`), with an
    index and one note, as Claude Code keeps them under ~/.claude/projects/<folder key>/memory."""
    key = re.sub(r"[^A-Za-z0-9]", "-", str(Path(env["PROJECT"]).resolve()))
    folder = Path(env["HOME"]) / ".claude" / "projects" / key / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- [Build tool](build.md) - which tool builds\n")
    (folder / "build.md").write_text("---\nname: Build with make\ndescription: The project builds with make "
                                     "targets.\ntype: project\n---\nRun make all.\n")
    return folder


def hook_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A home, a plugin data folder and a project (a git repository) of a hook test's own, the
    home and data folder set in this process too; the consent file follows the home."""
    home, data, project = tmp_path / "home", tmp_path / "data", tmp_path / "proj"
    for folder in (home, data, project):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    values = {"HOME": str(home), "CLAUDE_PLUGIN_DATA": str(data), "PATH": os.environ["PATH"],
              "GIT_CONFIG_NOSYSTEM": "1", "PROJECT": str(project)}
    for key in ("HOME", "CLAUDE_PLUGIN_DATA"):
        monkeypatch.setenv(key, values[key])
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return values
