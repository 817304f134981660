"""The command line for people, run as a subprocess: init, status, recall, reindex [--verify], --store."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXE, commit_count, fm_file, git, new_id


def run(*args: str, home: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    e.update(env or {})
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=e, timeout=60)


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    base = tmp_path_factory.mktemp("cli")
    home = base / "home"
    home.mkdir()
    store = base / "store"
    r = run("init", str(store), home=home)
    assert r.returncode == 0, r.stderr
    assert "memory store ready" in r.stdout and str(store) in r.stdout
    mid = new_id()
    fm_file(store, "albatross.md", "# Albatross deploys\n\nAlbatross deploys go through the canary stage.\n",
            id=mid, type="decision", trust="user-stated", entities=["albatross"])
    return store, home, mid


def test_init_makes_a_committed_store(cli_store: tuple[Path, Path, str]) -> None:
    store, _, _ = cli_store
    for name in ("README.md", "dictionary.md", ".gitignore", "memories"):
        assert (store / name).exists()
    assert git(store, "log", "--format=%s").splitlines()[-1].startswith("init:")


def test_init_twice_is_harmless(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    before = commit_count(store)
    r = run("init", str(store), home=home)
    assert r.returncode == 0 and commit_count(store) == before


def test_init_refuses_a_folder_that_is_not_a_store(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    r = run("init", str(folder), home=tmp_path)
    assert r.returncode == 2
    assert "invalid_store" in r.stderr and "not a memory store" in r.stderr
    assert [p.name for p in folder.iterdir()] == ["main.py"]
    r = run("status", "--store", str(folder), home=tmp_path)
    assert r.returncode == 2 and "invalid_store" in r.stderr
    assert [p.name for p in folder.iterdir()] == ["main.py"]


def test_recall_with_store_flag(cli_store: tuple[Path, Path, str]) -> None:
    store, home, mid = cli_store
    r = run("recall", "--store", str(store), "albatross", "canary", home=home)
    assert r.returncode == 0, r.stderr
    assert mid in r.stdout and "Albatross deploys" in r.stdout and "decision" in r.stdout
    r = run("--store", str(store), "recall", "nothing-matches-this-xyzzy", home=home)
    assert r.returncode == 0 and mid not in r.stdout


def test_recall_uses_memory_mcp_root(cli_store: tuple[Path, Path, str]) -> None:
    store, home, mid = cli_store
    r = run("recall", "albatross", home=home, env={"MEMORY_MCP_ROOT": str(store)})
    assert r.returncode == 0 and mid in r.stdout


def test_status_is_readable(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    broken = store / "memories" / "broken.md"
    broken.write_text("---\nid: [x\n---\nbroken\n")
    try:
        r = run("status", "--store", str(store), home=home)
        assert r.returncode == 0, r.stderr
        assert f"store {store}" in r.stdout and "memories" in r.stdout
        assert "unindexed files:" in r.stdout and "memories/broken.md" in r.stdout
        assert "git: main" in r.stdout
    finally:
        broken.unlink()


def test_reindex_and_verify(cli_store: tuple[Path, Path, str]) -> None:
    store, home, mid = cli_store
    r = run("reindex", "--store", str(store), home=home)
    assert r.returncode == 0 and r.stdout.startswith("rebuild: 1 memory indexed")
    r = run("reindex", "--verify", "--store", str(store), home=home)
    assert r.returncode == 0 and r.stdout.startswith("verify:")
    r = run("recall", "--store", str(store), "albatross", home=home)
    assert mid in r.stdout


def test_recall_all_includes_archived(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    aid = new_id()
    fm_file(store, "archived-note.md", "# Old petrel setup\n\nThe petrel setup used docker swarm.\n",
            id=aid, state="archived")
    assert aid not in run("recall", "--store", str(store), "petrel", home=home).stdout
    out = run("recall", "--store", str(store), "--all", "petrel", home=home).stdout
    assert aid in out and "[archived]" in out


def test_cli_hand_edits_are_committed(cli_store: tuple[Path, Path, str]) -> None:
    store, home, _ = cli_store
    fm_file(store, "cli-hand.md", "# Cli hand\n\nshearwater note\n")
    run("status", "--store", str(store), home=home)
    assert git(store, "status", "--porcelain").strip() == ""
    assert git(store, "log", "-1", "--format=%s").startswith("reconcile:")


def test_help_lists_the_commands(tmp_path: Path) -> None:
    r = run("--help", home=tmp_path)
    assert r.returncode == 0
    for cmd in ("serve", "init", "status", "recall", "reindex"):
        assert cmd in r.stdout


def test_demo_runs_the_whole_loop_on_a_new_store(tmp_path: Path) -> None:
    done = run("demo", home=tmp_path, env={"TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "1 file change(s) picked up" in done.stdout and "Raised to 3600 seconds" in done.stdout
    store = Path(done.stdout.splitlines()[0].removeprefix("store: "))
    assert store.is_relative_to(tmp_path) and not (tmp_path / ".memory-mcp").exists()
    log = git(store, "log", "--format=%s").splitlines()
    assert log[0].startswith("reconcile:") and sum(s.startswith("remember:") for s in log) == 3


@pytest.mark.parametrize("where", ["after", "before"])
def test_demo_with_a_real_store_is_refused_and_writes_nothing(cli_store: tuple[Path, Path, str], where: str) -> None:
    # `memory-mcp --store <real store> demo` wrote three demo memories and a hand edit into that store.
    store, home, _ = cli_store
    before = commit_count(store), sorted((store / "memories").rglob("*"))
    args = ("demo", "--store", str(store)) if where == "after" else ("--store", str(store), "demo")
    done = run(*args, home=home)
    assert done.returncode == 2 and done.stdout == ""
    assert "[invalid_argument]" in done.stderr and "temporary store only" in done.stderr
    assert (commit_count(store), sorted((store / "memories").rglob("*"))) == before


@pytest.mark.parametrize("command", [["status"], ["recall", "x"], ["digest"], ["export"], ["reindex"], ["serve"]])
def test_a_mistyped_store_is_refused_not_created_empty(tmp_path: Path, command: list[str]) -> None:
    # `memory-mcp --store /nonexistent/deep/path status` printed "0 memories (empty)", exited 0 and
    # made the folders: a user thinks the memories are gone, and a moved store came back empty.
    missing = tmp_path / "nonexistent" / "deep" / "path"
    for args, env in ((["--store", str(missing), *command], None), (command, {"MEMORY_MCP_ROOT": str(missing)})):
        done = run(*args, home=tmp_path, env=env)
        assert done.returncode == 2 and done.stdout == ""
        assert str(missing) in done.stderr and f"memory-mcp init {missing}" in done.stderr
        assert done.stderr.count("\n") == 1
        assert not (tmp_path / "nonexistent").exists()
    done = run("init", str(missing), home=tmp_path)
    assert done.returncode == 0 and (missing / "memories").is_dir()


@pytest.mark.parametrize("command", [["status"], ["recall", "x"], ["digest"], ["read", "x"], ["serve"]])
def test_a_mistyped_user_store_is_refused_not_created_empty(tmp_path: Path, command: list[str]) -> None:
    # `--user-store PATH` and $MEMORY_MCP_USER_ROOT with a path that did not exist made a new, empty
    # user store there: the person's own memories looked gone, and a moved store came back empty.
    store = tmp_path / "store"
    assert run("init", str(store), home=tmp_path).returncode == 0
    missing = tmp_path / "nonexistent" / "user"
    for args, env in ((["--store", str(store), *command, "--user-store", str(missing)], None),
                      (["--store", str(store), *command], {"MEMORY_MCP_USER_ROOT": str(missing)}),
                      (["--store", str(store), *command, "--user-store"], {"MEMORY_MCP_USER_ROOT": str(missing)})):
        done = subprocess.run([str(EXE), *args], capture_output=True, text=True, input="", timeout=60,
                              env={"HOME": str(tmp_path), "PATH": os.environ["PATH"], **(env or {})})
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert str(missing) in done.stderr and f"memory-mcp init {missing}" in done.stderr
        assert done.stderr.count("\n") == 1
        assert not (tmp_path / "nonexistent").exists()


def test_the_default_user_store_is_still_created_on_its_own(tmp_path: Path) -> None:
    # Nobody named it (a bare --user-store, or the path install writes into a registration): it is made.
    store = tmp_path / "store"
    assert run("init", str(store), home=tmp_path).returncode == 0
    default = tmp_path / ".memory-mcp" / "default"
    for option in (["--user-store"], ["--user-store", str(default)]):
        done = run("--store", str(store), "status", *option, home=tmp_path)
        assert done.returncode == 0, done.stderr
        assert (default / "memories").is_dir()


def test_recall_file_lists_the_memories_whose_paths_match_a_file_typed_at_the_shell(tmp_path: Path) -> None:
    # The tool had `file` and the PreToolUse hook used it; a person at a shell could not ask the same.
    project, store = tmp_path / "proj", tmp_path / "store"
    (project / "src" / "billing").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    assert run("init", str(store), home=tmp_path).returncode == 0
    s = ("--store", str(store))
    done = run(*s, "remember", "Invoices are rounded per line, never on the total.", "--paths", "src/billing/**",
               home=tmp_path)
    assert done.returncode == 0, done.stderr
    mid = re.search(r"\[([0-9A-Z]{26})\]", done.stdout).group(1)  # type: ignore[union-attr]
    assert run(*s, "remember", "The docs build with mkdocs.", "--paths", "docs/**", home=tmp_path).returncode == 0

    def recall(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(EXE), *s, "recall", *args], capture_output=True, text=True, cwd=cwd, timeout=60,
                              env={"HOME": str(tmp_path), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"})

    for cwd, file in ((project, "src/billing/invoice.py"), (project / "src", "billing/invoice.py"),
                      (tmp_path, str(project / "src" / "billing" / "invoice.py"))):
        found = recall(cwd, "--file", file)
        assert found.returncode == 0, found.stderr
        assert mid in found.stdout and "mkdocs" not in found.stdout, (cwd, file, found.stdout)
    assert mid not in recall(project, "--file", "src/app.py").stdout
    both = recall(project, "invoices", "--file", "src/billing/invoice.py")
    assert both.returncode == 2 and "[invalid_argument]" in both.stderr


# ------------------------------------------------------------------ the command line a person expects
def test_version_and_every_subcommand_has_a_description_and_its_defaults(tmp_path: Path) -> None:
    from memory_mcp import __version__

    # `memory-mcp --version` was an "unrecognized arguments" error; subcommands had no description
    # and `recall --help` did not say that --limit is 8.
    done = run("--version", home=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"memory-mcp {__version__}"
    top = run("--help", home=tmp_path).stdout
    names = re.findall(r"^    ([a-z-]+)\s", top, re.M)
    assert {"remember", "update", "forget", "resolve", "read", "serve", "recall"} <= set(names)
    for name in names:
        page = run(name, "--help", home=tmp_path).stdout
        usage, _, rest = page.partition("\n\n")
        assert rest.split("\n\n")[0].strip(), f"`{name} --help` has no description"
    assert "--limit LIMIT most memories to show (default: 8)" in " ".join(run("recall", "--help", home=tmp_path).stdout.split())
    assert "(default: 8765)" in run("serve", "--help", home=tmp_path).stdout
    assert "(default: archive)" in run("forget", "--help", home=tmp_path).stdout
    assert "(default: 1000)" in run("digest", "--help", home=tmp_path).stdout


def test_remember_read_update_forget_resolve_from_the_command_line(tmp_path: Path) -> None:
    # These were tools only: a person had to start an MCP client to write or fix one memory.
    store = tmp_path / "store"
    assert run("init", str(store), home=tmp_path).returncode == 0
    s = ("--store", str(store))
    done = run(*s, "remember", "CI runs checkout before the cache step.", "--type", "knowledge",
               "--entities", "ci,checkout", home=tmp_path)
    assert done.returncode == 0, done.stderr
    mid = re.search(r"\[([0-9A-Z]{26})\]", done.stdout).group(1)  # type: ignore[union-attr]
    shown = run(*s, "read", mid, home=tmp_path)
    assert shown.returncode == 0
    # Entities read as text, not as a Python list (`entities: ['ci', 'checkout']`).
    assert "entities: ci, checkout" in shown.stdout and "['" not in shown.stdout
    assert "type: knowledge" in shown.stdout and "trust: user-stated" in shown.stdout
    path = re.search(r"(memories/\S+\.md)", shown.stdout).group(1)  # type: ignore[union-attr]
    assert mid in run(*s, "read", path, home=tmp_path).stdout
    updated = run(*s, "update", mid, "--entities", "ci", "--review-after", "2031-01-01", home=tmp_path)
    assert updated.returncode == 0 and "entities: ci\n" in updated.stdout and "2031-01-01" in updated.stdout
    refused = run(*s, "forget", mid, "--mode", "deprecate", home=tmp_path)
    assert refused.returncode == 2 and "[reason_required]" in refused.stderr
    second = subprocess.run([str(EXE), *s, "remember", "--title", "Cache step first", "--entities", "ci"],
                            input="CI runs the cache step before checkout.", capture_output=True, text=True,
                            env={"HOME": str(tmp_path), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"})
    assert second.returncode == 0, second.stderr
    oid = re.search(r"\[([0-9A-Z]{26})\]", second.stdout).group(1)  # type: ignore[union-attr]
    settled = run(*s, "resolve", oid, mid, "supersede", home=tmp_path)
    assert settled.returncode == 0 and mid in settled.stdout
    assert "(archived)" in run(*s, "read", mid, home=tmp_path).stdout
    gone = run(*s, "forget", mid, "--mode", "purge", "--confirm", home=tmp_path)
    assert gone.returncode == 0 and not (store / path).exists()
    log = git(store, "log", "--format=%s").splitlines()
    assert sum(line.startswith(("remember:", "update:", "resolve:", "purge:", "forget:")) for line in log) >= 4


def test_exit_codes_say_done_done_with_refusals_or_drift_and_error(cli_store: tuple[Path, Path, str],
                                                                   tmp_path: Path) -> None:
    # `reindex --verify` that found drift, and an import with refused records, exited 0.
    store, home, _ = cli_store
    path = fm_file(store, "gate-cli.md", "# Gate\n\ndonkey text aaa\n")
    past = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(past, past))
    assert run("status", "--store", str(store), home=home).returncode == 0
    con = sqlite3.connect(store / ".derived" / "index.sqlite3")  # an edit no stat shows
    with con:
        con.execute("UPDATE files SET sha = ? WHERE path = ?", ("0" * 64, "memories/gate-cli.md"))
    con.close()
    drift = run("reindex", "--verify", "--store", str(store), home=home)
    assert drift.returncode == 1 and "drift: memories/gate-cli.md" in drift.stdout
    assert run("reindex", "--verify", "--store", str(store), home=home).returncode == 0
    source = tmp_path / "notes.txt"
    source.write_text("The heron service listens on port 7070.\nAWS key AKIAIOSFODNN7EXAMPLE for heron.\n")
    mixed = run("import", "paste", str(source), "--store", str(store), home=home)
    assert mixed.returncode == 1 and "imported 1" in mixed.stdout and "refused 1" in mixed.stdout
    bad = run("import", "nonsense", str(source), "--store", str(store), home=home)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_serve_http_with_a_port_out_of_range_is_a_one_line_error(cli_store: tuple[Path, Path, str]) -> None:
    # `serve --http --port 99999` ended in an OverflowError traceback from bind().
    store, home, _ = cli_store
    done = run("serve", "--http", "--port", "99999", "--store", str(store), home=home)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "[invalid_argument]" in done.stderr and "99999" in done.stderr


def test_counts_of_one_read_one_memory(tmp_path: Path) -> None:
    # `status` on a store with one memory printed "1 memories".
    store = tmp_path / "store"
    run("init", str(store), home=tmp_path)
    fm_file(store, "only.md", "# Only\n\nThe only memory.\n", id=new_id())
    out = run("status", "--store", str(store), home=tmp_path).stdout
    assert "1 memory (active 1)" in out and "index: 1 memory" in out and "1 memories" not in out
    assert "rebuild: 1 memory indexed" in run("reindex", "--store", str(store), home=tmp_path).stdout
    exported = run("export", str(tmp_path / "out.json"), "--store", str(store), home=tmp_path)
    assert exported.returncode == 0 and "exported 1 memory to" in exported.stdout
