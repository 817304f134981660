"""What broke from outside (issue 32, "Outages and losses"), each driven as the person met it: the CLI
as a subprocess, the hooks on stdin, the stdio server. Real git, real SQLite, nothing mocked."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import EXE
from mcp import Client, StdioServerParameters

from memory_mcp.app.store import Store
from memory_mcp.truth import roots

ID = "01JD2K3A9FZQ4W8XVBH5T6N7RM"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A home, a plugin data folder and a project (a git repository) of the test's own, for this
    process too (the project's store is found from HOME)."""
    home, data, project = tmp_path / "home", tmp_path / "data", tmp_path / "proj"
    for folder in (home, data, project):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    return {"HOME": str(home), "CLAUDE_PLUGIN_DATA": str(data), "PATH": os.environ["PATH"],
            "GIT_CONFIG_NOSYSTEM": "1", "PROJECT": str(project)}


def cli(env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], capture_output=True, encoding="utf-8", errors="replace", env=env, cwd=cwd,
                          timeout=timeout)


def hook(env: dict[str, str], event: str, session: str = "s1", **fields: object) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": session, "transcript_path": str(Path(env["HOME"]) / "t.jsonl"), "cwd": env["PROJECT"],
               "permission_mode": "default", "hook_event_name": event, **fields}
    return subprocess.run([str(EXE), "hook", event], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60)


def hook_log(env: dict[str, str]) -> str:
    log = Path(env["CLAUDE_PLUGIN_DATA"]) / "state" / "hooks.log"
    return log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""


# ------------------------------------------------------------------ one field of one record
def test_a_date_only_updated_written_by_hand_fails_no_recall_and_no_hook(env: dict[str, str]) -> None:
    # `updated: 2026-01-01` parsed to a date-time without a zone, and the age shown in results
    # subtracted it from an aware "now": every recall including the memory failed with a TypeError,
    # and the prompt and file hooks said nothing for the project.
    root = roots.project_store(Path(env["PROJECT"]))
    Store.open(root).close()
    (root / "memories" / "quokka.md").write_text(
        f"---\nid: {ID}\nupdated: 2026-01-01\npaths: [src/**]\n---\n# Quokka habitat\n\n"
        "The quokka lives on Rottnest island, off the coast near Perth.\n", encoding="utf-8")
    done = cli(env, "--store", str(root), "recall", "quokka island")
    assert done.returncode == 0, done.stderr
    assert ID in done.stdout and "old" in done.stdout  # an age, counted from midnight UTC
    prompt = hook(env, "UserPromptSubmit", prompt="where does the quokka live on the island?")
    assert ID in prompt.stdout, (prompt.stdout, hook_log(env))
    file = hook(env, "PreToolUse", "s2", tool_name="Read", tool_input={"file_path": f"{env['PROJECT']}/src/a.py"})
    assert ID in file.stdout, (file.stdout, hook_log(env))


# ------------------------------------------------------------------ a project path that is not UTF-8
def test_store_names_of_utf8_paths_are_kept_when_the_path_bytes_are_hashed(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # The names are hashes of the path; a store found by its name must keep it after the fix.
    from memory_mcp.truth import layout

    monkeypatch.setenv("MEMORY_MCP_HOME", str(tmp_path / "mh"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("proj", "prøject ünïcode", "项目"):
        folder = (tmp_path / name)
        folder.mkdir()
        digest = hashlib.sha256(str(folder.resolve()).encode("utf-8")).hexdigest()[:8]
        assert roots.project_store(folder).name.endswith(f"-{digest}")
        assert layout.cache_folder(folder.resolve()).name.endswith(f"-{digest}")


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
@pytest.mark.anyio
async def test_a_project_path_that_is_not_utf8_gets_a_store_a_server_and_hooks(env: dict[str, str],
                                                                              tmp_path: Path) -> None:
    # str(root).encode("utf-8") raised UnicodeEncodeError on the surrogates Python uses for such a
    # name: the plugin server exited with a traceback and `init` failed.
    project = Path(os.fsdecode(bytes(tmp_path) + b"/caf\xe9-latin1"))
    project.mkdir()
    subprocess.run(["git", "init", "-q", os.fsencode(project)], check=True)
    env = {**env, "PROJECT": str(project)}
    done = cli(env, "init", str(project / ".memory"))
    assert done.returncode == 0, done.stderr
    params = StdioServerParameters(command=sys.executable, args=["-m", "memory_mcp.adapters.serve.plugin"], cwd=project,
                                   env={k: v for k, v in env.items() if k != "PROJECT"})
    async with Client(params) as client:
        r = await client.call_tool("memory_remember", {"content": "Quokka notes\n\nThe quokka lives on Rottnest."})
        assert not r.is_error, r.content
        r = await client.call_tool("memory_recall", {"query": "quokka"})
        assert not r.is_error and r.structured_content and r.structured_content["results"], r.content
    prompt = hook(env, "UserPromptSubmit", prompt="where does the quokka live these days?")
    assert "Quokka notes" in prompt.stdout, hook_log(env)
    # A project without .memory/ gets its store under the memory home, named from the path's bytes.
    other = Path(os.fsdecode(bytes(tmp_path) + b"/na\xefve"))
    other.mkdir()
    start = hook({**env, "PROJECT": str(other)}, "SessionStart", source="startup")
    assert start.returncode == 0 and start.stdout.startswith("{"), (start.stdout, hook_log(env))
    assert [p.name for p in (Path(env["HOME"]) / ".memory-mcp" / "projects").iterdir()][0].startswith("na-ve-")


# ------------------------------------------------------------------ globs that backtrack
BACKTRACKING = "**?" * 16 + "**Q"  # a regex took minutes on it: (.*[^/]){16}.*Q against a long path


def _old_glob_regex(pattern: str) -> str:
    """The translation to a regex that matching used until issue 32, the reference for its semantics."""
    import fnmatch
    import re
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] in "*?":
            out.append("[^/]*" if pattern[i] == "*" else "[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 1)) >= 0:
            out.append(fnmatch.translate(pattern[i:end + 1])[4:-3])
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def test_a_backtracking_glob_costs_the_file_hook_and_recall_by_file_nothing(env: dict[str, str]) -> None:
    # Every PreToolUse ran into its 5 s watchdog (the other file memories were lost for the call) and
    # `recall --file` took 25 s holding the store lock, on one memory's glob written by hand.
    root = roots.project_store(Path(env["PROJECT"]))
    Store.open(root).close()
    (root / "memories" / "odd.md").write_text(f"---\nid: {ID}\npaths: ['{BACKTRACKING}']\n---\n# Odd glob\n\nx\n",
                                              encoding="utf-8")
    billing = cli(env, "--store", str(root), "remember", "Invoices are immutable once sent.", "--paths", "src/**")
    assert billing.returncode == 0, billing.stderr
    deep = "src/" + "/".join(["abcdefgh"] * 40) + "/invoice.py"
    done = cli(env, "--store", str(root), "recall", "--file", str(Path(env["PROJECT"]) / deep), cwd=Path(env["PROJECT"]),
               timeout=20)
    assert done.returncode == 0 and "Invoices are immutable" in done.stdout, done.stderr
    file = hook(env, "PreToolUse", tool_name="Read", tool_input={"file_path": f"{env['PROJECT']}/{deep}"})
    assert "Invoices are immutable" in file.stdout, hook_log(env)


def test_a_glob_too_long_or_too_many_globs_are_refused_with_a_clear_error(env: dict[str, str]) -> None:
    from memory_mcp.truth import globs

    root = Path(env["HOME"]) / "store"
    assert cli(env, "init", str(root)).returncode == 0
    long = cli(env, "--store", str(root), "remember", "A note about one file.", "--paths", "src/" + "a" * 300)
    assert long.returncode != 0 and "[invalid_argument]" in long.stderr and "at most 256" in long.stderr
    many = ",".join(f"src/f{n}.py" for n in range(globs.MAX_GLOBS + 1))
    refused = cli(env, "--store", str(root), "remember", "A note about many files.", "--paths", many)
    assert refused.returncode != 0 and "at most 32" in refused.stderr, refused.stderr
    assert "no memories" in cli(env, "--store", str(root), "recall").stdout  # nothing was written


@pytest.mark.slow
def test_glob_matching_keeps_the_semantics_of_the_regex_it_replaced() -> None:
    import re

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from memory_mcp.truth import globs

    atoms = st.sampled_from(["**/", "**", "*", "?", "a", "b", "/", ".", "[ab]", "[!a]", "[a-]", "[]", "[!]", "]",
                             "\n", "Q", "[/]", "[z-a]"])

    @settings(max_examples=3000, deadline=None, derandomize=True)
    @given(st.lists(atoms, max_size=7).map("".join), st.text("ab/.Q]\n[", max_size=12))
    def same(pattern: str, path: str) -> None:
        pattern = pattern.strip().lstrip("/")
        expected = re.fullmatch(_old_glob_regex(pattern + ("**" if pattern.endswith("/") else "")),
                                path.lstrip("/")) is not None
        assert globs.glob_match(pattern, path) is expected, (pattern, path)

    same()


# ------------------------------------------------------------------ the Stop hook's transcript
def _stop_with_rss(env: dict[str, str], transcript: str, session: str) -> tuple[str, float, int]:
    """The Stop hook's output on `transcript`, its seconds and its peak memory in KiB (measured in a
    parent of its own, so no other child of the test run counts)."""
    payload = json.dumps({"session_id": session, "transcript_path": transcript, "cwd": env["PROJECT"],
                          "hook_event_name": "Stop", "stop_hook_active": False})
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.monotonic()\n"
             f"done = subprocess.run([{str(EXE)!r}, 'hook', 'Stop'], input=sys.stdin.read(), capture_output=True,"
             " text=True)\n"
             "print(time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.stdout.write(done.stdout)\n")
    done = subprocess.run([sys.executable, "-c", probe], input=payload, capture_output=True, text=True, env=env,
                          timeout=60)
    first, _, out = done.stdout.partition("\n")
    seconds, rss = first.split()
    return out, float(seconds), int(rss)


def test_the_stop_hook_reads_only_the_tail_of_a_regular_transcript(env: dict[str, str], tmp_path: Path) -> None:
    # The transcript was read whole, line by line: 1.6 GB of memory on the zero device (one endless
    # line), 1.3 GB on a sparse 2 GB file, and a pipe blocked the hook until its watchdog.
    work = "".join(json.dumps({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": f"t{n}", "name": "Edit", "input": {}}]}}) + "\n" for n in range(3))
    sparse = tmp_path / "sparse.jsonl"
    with open(sparse, "wb") as f:
        f.truncate(2 * 1024 ** 3)
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + work.encode())
    out, seconds, rss = _stop_with_rss(env, str(sparse), "sparse")
    assert "memory_remember" in out, hook_log(env)  # the work at the end is still seen
    assert rss < 300 * 1024 and seconds < 4, (rss, seconds)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for name, path in (("zero", "/dev/zero"), ("pipe", str(fifo)), ("folder", str(tmp_path))):
        out, seconds, rss = _stop_with_rss(env, path, name)
        assert out == "" and rss < 300 * 1024 and seconds < 4, (name, rss, seconds)


# ------------------------------------------------------------------ SessionStart's folder
@pytest.mark.parametrize("kind", ["missing", "file"])
def test_session_start_in_a_folder_that_is_gone_or_a_file_creates_no_store(env: dict[str, str], tmp_path: Path,
                                                                           kind: str) -> None:
    # `cwd` naming no folder still chose a project store, and SessionStart (which imports Claude
    # Code's auto memory) created it under ~/.memory-mcp/projects/.
    cwd = tmp_path / "gone"
    if kind == "file":
        cwd.write_text("not a folder\n")
    done = hook({**env, "PROJECT": str(cwd)}, "SessionStart", source="startup")
    assert done.returncode == 0 and done.stderr == ""
    assert not (Path(env["HOME"]) / ".memory-mcp" / "projects").exists()
    assert "is not a folder" in hook_log(env)


# ------------------------------------------------------------------ a store another user owns
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             # to reach this Python and the test's folders (under root's own); it grants no writes
             "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]


def _can_run_as_nobody() -> bool:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return False
    done = subprocess.run([*AS_NOBODY, "sh", "-c", "test $(id -u) = 65534"], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not _can_run_as_nobody(), reason="needs root and setpriv to run the CLI as another user")
def test_a_store_another_user_owns_can_be_read_whole_without_changing_git_config() -> None:
    # git refuses a repository another user owns (safe.directory): `status` failed with the refusal
    # and `recall --as-of` said the history starts later, while recall, digest and export worked.
    # A folder everyone may read, as a shared one is (pytest's own folders are root's alone).
    with tempfile.TemporaryDirectory(prefix="memory-mcp-shared-") as shared:
        os.chmod(shared, 0o755)
        _read_as_nobody(Path(shared))


def _read_as_nobody(tmp_path: Path) -> None:
    store = tmp_path / "shared"
    env = {"HOME": str(tmp_path / "owner"), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    assert cli(env, "init", str(store)).returncode == 0
    mem = cli(env, "--store", str(store), "remember", "The gannet colony has 400 pairs.")
    assert mem.returncode == 0, mem.stderr
    mem_id = mem.stdout.split("[", 1)[1].split("]", 1)[0]
    home = tmp_path / "reader"
    home.mkdir()
    os.chown(home, 65534, 65534)
    # What an owner could set to run a command as whoever reads the store: both must stay unrun.
    ran = home / "ran"  # where the reader can write
    hook_script = tmp_path / "run.sh"
    hook_script.write_text(f"#!/bin/sh\ntouch {ran}\ncat\n")
    hook_script.chmod(0o755)
    subprocess.run(["git", "-C", str(store), "config", "core.fsmonitor", str(hook_script)], check=True)
    subprocess.run(["git", "-C", str(store), "config", "filter.owner.clean", str(hook_script)], check=True)
    (store / ".git" / "info" / "attributes").write_text("*.md filter=owner\n")
    for memory in (store / "memories").rglob("*.md"):
        os.utime(memory, (1, 1))  # a stat change, so status looks at the content (through the filter)
    reader = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    before = (home / ".gitconfig").exists()

    def read(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*AS_NOBODY, str(EXE), "--store", str(store), *args], capture_output=True,
                              text=True, env=reader, timeout=60)

    status = read("status")
    assert status.returncode == 0 and "git: main @" in status.stdout, status.stderr
    assert "remember: The gannet colony" in read("read", mem_id).stdout
    today = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
    as_of = read("recall", "gannet", "--as-of", today)
    assert as_of.returncode == 0 and mem_id in as_of.stdout, as_of.stderr
    for args in (("recall", "gannet"), ("digest",), ("export",)):
        assert read(*args).returncode == 0
    written = read("remember", "The puffins arrive in April.")
    assert written.returncode != 0 and "[store_unwritable]" in written.stderr
    assert not ran.exists()
    assert (home / ".gitconfig").exists() == before  # no safe.directory added to the reader's config


# ------------------------------------------------------------------ the stat gate
def test_a_same_size_edit_with_its_mtime_put_back_is_seen_by_the_cli(env: dict[str, str]) -> None:
    # The stat gate compared mtime and size only: an edit of the same size whose mtime was restored
    # (`touch -r`, some editors and sync tools) went unseen with the watcher off and by the CLI.
    root = Path(env["HOME"]) / "store"
    assert cli(env, "init", str(root)).returncode == 0
    assert cli(env, "--store", str(root), "remember", "The heron nests in the alder carr.").returncode == 0
    path = next((root / "memories").rglob("*.md"))
    old = path.stat().st_mtime_ns - 3600 * 10 ** 9  # well before the last scan: not racily clean
    os.utime(path, ns=(old, old))
    assert cli(env, "--store", str(root), "status").returncode == 0  # the index takes that stat
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("heron", "egret"), encoding="utf-8")  # same size
    os.utime(path, ns=(old, old))  # touch -r: the mtime put back
    found = cli(env, "--store", str(root), "recall", "egret")
    assert "The egret nests" in found.stdout, found.stdout


# ------------------------------------------------------------------ as-of indexes on disk
def test_as_of_builds_a_killed_process_left_and_kept_indexes_past_a_byte_bound_are_removed(
        env: dict[str, str]) -> None:
    # A build killed midway left its copy of the index (the size of the live one) for an hour, and
    # the kept as-of indexes were bounded by count only.
    from memory_mcp.app import asof

    root = Path(env["HOME"]) / "store"
    assert cli(env, "init", str(root)).returncode == 0
    assert cli(env, "--store", str(root), "remember", "The heron nests in the alder carr.").returncode == 0
    folder = root / ".derived" / asof.FOLDER
    folder.mkdir(parents=True)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a process id that no process has now
    dead = [folder / f"{'a' * 40}.{gone.pid}-7.building{suffix}" for suffix in ("", "-wal")]
    alive = folder / f"{'b' * 40}.{os.getpid()}-7.building"  # a build still running (this process)
    big = [folder / f"{c * 40}.sqlite3" for c in "cde"]  # past days' indexes, sparse, 100 MiB each
    for n, path in enumerate([*dead, alive, *big]):
        with open(path, "wb") as f:
            f.truncate(100 * 1024 * 1024 if path in big else 4096)
        os.utime(path, (1_000_000 + n, 1_000_000 + n) if path in big else None)
    today = subprocess.run(["date", "-u", "+%Y-%m-%d"], capture_output=True, text=True).stdout.strip()
    done = cli(env, "--store", str(root), "recall", "heron", "--as-of", today)
    assert done.returncode == 0 and "heron" in done.stdout, done.stderr
    left = sorted(p.name for p in folder.iterdir())
    assert not any(p.name in left for p in dead) and alive.name in left
    # The index built now and the two newest of the others: 200 MiB, within the 256 MiB bound.
    assert [p.name for p in big if p.name in left] == [big[1].name, big[2].name], left
    assert len([n for n in left if n.endswith(".sqlite3")]) == 3


# ------------------------------------------------------------------ smaller ones
def test_the_bulk_read_child_of_a_killed_parent_exits_without_a_traceback(tmp_path: Path) -> None:
    # The child answered on a pipe its killed parent no longer read: a BrokenPipeError traceback
    # on the person's terminal (the child shares its stderr). The child as its parent starts it,
    # with its answers' pipe closed at the far end, and a second one whose parent died mid-request.
    import pickle

    from memory_mcp.index import bulkread

    notes = []
    for n in range(8):
        path = tmp_path / f"n{n}.md"
        path.write_text(f"# Note {n}\n\nSome text.\n")
        notes.append(bulkread.Wanted(path.name, str(path), 0, path.stat().st_size, 0, 0))
    request = pickle.dumps([notes[:4], notes[4:]])
    child = [sys.executable, "-c", "from memory_mcp.index.bulkread import serve; serve()"]
    for stdin in (request, request[: len(request) // 2]):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            done = subprocess.run(child, input=stdin, stdout=write_end, stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(write_end)
        assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr, done.stderr.decode()


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS file systems refuse names that are not UTF-8")
def test_a_file_name_that_is_not_utf8_does_not_stop_the_watcher_for_good(tmp_path: Path) -> None:
    # watchfiles ends its watch on an event for such a name ("Unable to decode path"); the watcher
    # stayed off (SWEEP_SECONDS, and again at every event for it), every call walking meanwhile.
    # The server's own watcher object, on a real store and real inotify events.
    from memory_mcp.app.storeroot import init_store

    store = Store.open(init_store(tmp_path / "store"), watch=True)
    try:
        store.refresh()
        assert store.watcher is not None and store.watcher.running, store.watcher and store.watcher.why_off
        (Path(os.fsdecode(os.fsencode(store.root / "memories") + b"/caf\xe9.md"))).write_text("# x\n\ny\n")
        store.refresh()  # the event that ends watchfiles' watch
        (store.root / "memories" / "heron.md").write_text("# Heron\n\nThe heron nests in the alder carr.\n")
        assert [h.title for h in store.recall("heron").results] == ["Heron"]
        assert store.watcher.running, store.watcher.why_off
        assert not store.refresh().walked  # primed again: calls look at events only
        assert any("UTF-8" in u.reason for u in store.status().unindexed)
    finally:
        store.close()
