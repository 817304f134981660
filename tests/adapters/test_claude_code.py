"""Claude Code first class: `install claude-code` (through `claude mcp add`, else .mcp.json), the
SessionStart digest hook on request, and the digest shared by the CLI, the resource and the prompt.

`claude` itself is not installed everywhere: the test that needs it skips with a message. Where it is
missing, a stand-in script named `claude` records the command line it is given; that checks the
exact argv our installer passes (our code), not Claude Code."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXE, fm_file, open_server

from memory_mcp.app.store import Store

pytestmark = pytest.mark.anyio


def bin_without_claude(tmp: Path) -> Path:
    """A PATH folder with git and python but no `claude`, so the .mcp.json fallback is what runs."""
    folder = tmp / "bin-no-claude"
    folder.mkdir(exist_ok=True)
    for tool in ("git", "python3"):
        if not (folder / tool).exists():
            (folder / tool).symlink_to(shutil.which(tool))
    return folder


def fake_claude(tmp: Path, rc: int = 0) -> tuple[Path, Path]:
    """A folder holding a `claude` script that appends its argv (JSON) to a log and exits `rc`."""
    folder = tmp / "bin-fake-claude"
    folder.mkdir(exist_ok=True)
    log = tmp / "claude-argv.jsonl"
    script = folder / "claude"
    script.write_text(f"#!{sys.executable}\nimport json, sys\n"
                      f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
                      f"print('stand-in claude' if {rc} == 0 else 'Error: already exists', "
                      f"file=sys.stdout if {rc} == 0 else sys.stderr)\nsys.exit({rc})\n")
    script.chmod(0o755)
    return folder, log


def install(project: Path, home: Path, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": f"{path}{os.pathsep}{bin_without_claude(project.parent)}",
           "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run([str(EXE), "install", "claude-code", *args], capture_output=True, text=True,
                          cwd=project, env=env, timeout=60)


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A project folder, a home folder and a store path, all new."""
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    return project, home, tmp_path / "store"


# ------------------------------------------------------------------ without claude: .mcp.json
def test_project_scope_without_claude_merges_into_mcp_json(where: tuple[Path, Path, Path]) -> None:
    project, home, store = where
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    done = install(project, home, bin_without_claude(project.parent), "--scope", "project", "--store", str(store))
    assert done.returncode == 0, done.stderr
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "x"}
    assert servers["memory"] == {"type": "stdio", "command": "memory-mcp", "args": ["serve"],
                                 "env": {"MEMORY_MCP_ROOT": str(store.resolve())}}


def test_no_hook_unless_asked(where: tuple[Path, Path, Path]) -> None:
    project, home, store = where
    done = install(project, home, bin_without_claude(project.parent), "--scope", "project", "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert "SessionStart" not in done.stdout
    assert not (project / ".claude").exists() and not (home / ".claude").exists()


def test_broken_mcp_json_is_refused_and_left_as_it_was(where: tuple[Path, Path, Path]) -> None:
    project, home, store = where
    (project / ".mcp.json").write_text("{not json")
    done = install(project, home, bin_without_claude(project.parent), "--scope", "project", "--store", str(store))
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    assert (project / ".mcp.json").read_text() == "{not json"


def test_another_server_named_memory_is_not_replaced(where: tuple[Path, Path, Path]) -> None:
    project, home, store = where
    theirs = {"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}
    (project / ".mcp.json").write_text(json.dumps(theirs))
    done = install(project, home, bin_without_claude(project.parent), "--scope", "project", "--store", str(store))
    assert done.returncode == 2 and "already has a server named 'memory'" in done.stderr
    assert json.loads((project / ".mcp.json").read_text()) == theirs


@pytest.mark.parametrize("scope", ["local", "user"])
def test_local_and_user_scope_without_claude_say_what_to_run(where: tuple[Path, Path, Path], scope: str) -> None:
    project, home, store = where
    done = install(project, home, bin_without_claude(project.parent), "--scope", scope, "--store", str(store),
                   "--hook")
    assert done.returncode == 2
    assert "claude CLI is not on PATH" in done.stderr and f"claude mcp add memory --scope {scope}" in done.stderr
    assert list(project.iterdir()) == [] and list(home.iterdir()) == []  # nothing half-done


@pytest.mark.parametrize(("scope", "settings"), [("project", "project/.claude/settings.json"),
                                                  ("local", "project/.claude/settings.local.json"),
                                                  ("user", "home/.claude/settings.json")])
def test_hook_goes_to_the_settings_file_of_the_scope(tmp_path: Path, scope: str, settings: str) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    folder, _ = fake_claude(tmp_path)
    done = install(project, home, folder, "--scope", scope, "--store", str(tmp_path / "store"), "--hook")
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / settings).read_text())
    exe = "memory-mcp" if scope == "project" else str(EXE)  # a committed file runs it from PATH
    assert written["hooks"]["SessionStart"] == [{"hooks": [{"type": "command", "command": shlex.join(
        [exe, "digest", "--hook", "--store", str((tmp_path / "store").resolve())])}]}]
    # The file-aware memories (paths:) come with the PreToolUse hook on the tools that name a file.
    assert written["hooks"]["PreToolUse"] == [{"matcher": "Read|Edit|MultiEdit|Write|NotebookEdit", "hooks": [
        {"type": "command", "command": shlex.join(
            [exe, "hook", "PreToolUse", "--store", str((tmp_path / "store").resolve())])}]}]


def test_hook_is_added_once_keeps_other_settings_and_prints_hook_json(where: tuple[Path, Path, Path]) -> None:
    project, home, store = where
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"model": "x", "hooks": {"Stop": []}}))
    Store.open(store).remember("Answer in British English spelling.", type="preference", trust="user-stated")
    for _ in range(2):
        done = install(project, home, bin_without_claude(project.parent), "--scope", "project", "--store",
                       str(store), "--hook")
        assert done.returncode == 0, done.stderr
    assert "already in" in done.stdout
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert settings["model"] == "x" and settings["hooks"]["Stop"] == []
    [group] = settings["hooks"]["SessionStart"]
    # Claude Code runs the committed command with `memory-mcp` on PATH and $CLAUDE_PROJECT_DIR set.
    env = {**os.environ, "PATH": f"{EXE.parent}{os.pathsep}{os.environ['PATH']}", "CLAUDE_PROJECT_DIR": str(project)}
    shown = subprocess.run(group["hooks"][0]["command"], shell=True, capture_output=True, text=True, timeout=60,
                           env=env, cwd=project)
    payload = json.loads(shown.stdout)["hookSpecificOutput"]
    assert payload["hookEventName"] == "SessionStart" and "British" in payload["additionalContext"]


# ------------------------------------------------------------------ with claude: claude mcp add
@pytest.mark.parametrize("scope", ["local", "project", "user"])
def test_claude_on_path_registers_through_claude_mcp_add(where: tuple[Path, Path, Path], scope: str) -> None:
    project, home, store = where
    folder, log = fake_claude(project.parent)
    done = install(project, home, folder, "--scope", scope, "--store", str(store))
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in log.read_text().splitlines()] == [
        ["mcp", "add", "memory", "--scope", scope, "-e", f"MEMORY_MCP_ROOT={store.resolve()}", "--",
         "memory-mcp" if scope == "project" else str(EXE), "serve"]]
    assert not (project / ".mcp.json").exists()  # claude writes it in project scope, not us


def test_a_failing_claude_mcp_add_is_reported(where: tuple[Path, Path, Path]) -> None:
    project, home, store = where
    folder, _ = fake_claude(project.parent, rc=1)
    done = install(project, home, folder, "--scope", "user", "--store", str(store))
    assert done.returncode == 2
    assert "claude mcp add failed: Error: already exists" in done.stderr and "claude mcp remove memory" in done.stderr


def test_real_claude_lists_the_registered_server(where: tuple[Path, Path, Path]) -> None:
    claude = shutil.which("claude")
    if claude is None:
        pytest.skip("the claude CLI is not installed here: registration through the real Claude Code is not "
                    "exercised (the argv we pass is checked with a stand-in above)")
    project, home, store = where
    done = install(project, home, Path(claude).parent, "--scope", "local", "--store", str(store))
    assert done.returncode == 0, done.stderr
    listed = subprocess.run([claude, "mcp", "get", "memory"], capture_output=True, text=True, cwd=project,
                            env={**os.environ, "HOME": str(home)}, timeout=120)
    assert listed.returncode == 0 and str(EXE) in listed.stdout, listed.stdout + listed.stderr


# ------------------------------------------------------------------ the digest
def digest_store(root: Path) -> dict[str, str]:
    """Five memories with known ages: two facts, an episode, a decision and a preference."""
    ids = {}
    for name, kind, day in [("old-fact", "fact", "01"), ("decision", "decision", "02"), ("new-fact", "fact", "05"),
                            ("preference", "preference", "03"), ("episode", "episode", "04")]:
        path = fm_file(root, f"{name}.md", f"# The {name} memory\n\nAbout the {name}.\n", type=kind, state="active",
                       trust="user-stated", created=f"2026-01-{day}T00:00:00Z", updated=f"2026-01-{day}T00:00:00Z")
        ids[name] = path.read_text().split("id: ", 1)[1].split("\n", 1)[0]
    return ids


async def test_digest_puts_preferences_and_decisions_first_then_recent_in_cli_resource_and_prompt(
        tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store").root
    ids = digest_store(store)
    async with open_server(store) as s:
        resource = (await s.client.read_resource("memory://digest")).contents[0].text
        prompt = (await s.client.get_prompt("memory", {})).messages[0].content.text
    cli = subprocess.run([str(EXE), "digest", "--store", str(store)], capture_output=True, text=True, timeout=60)
    assert cli.stdout.strip() == resource and resource in prompt
    order = [line.split("[", 1)[1].split("]", 1)[0] for line in resource.splitlines() if line.startswith("- **")]
    assert order == [ids[n] for n in ("preference", "decision", "new-fact", "episode", "old-fact")]


def test_digest_stays_within_its_token_budget(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "store").root
    digest_store(store)
    full = subprocess.run([str(EXE), "digest", "--store", str(store)], capture_output=True, text=True, timeout=60)
    cut = subprocess.run([str(EXE), "digest", "--store", str(store), "--max-tokens", "40"], capture_output=True,
                         text=True, timeout=60)
    assert full.stdout.count("- **") == 5 and "more;" not in full.stdout
    shown = cut.stdout.count("- **")
    assert 1 <= shown < 5 and f"({5 - shown} more; `memory-mcp recall` finds them)" in cut.stdout
    hook = subprocess.run([str(EXE), "digest", "--hook", "--store", str(store), "--max-tokens", "40"],
                          capture_output=True, text=True, timeout=60)
    assert "more; memory_recall finds them)" in hook.stdout  # the agent reads the hook's digest
    # The budget is for memory lines, give or take the estimate and the "more" line; the frame and its
    # introduction (issue 31) are a fixed cost outside it.
    assert sum(len(x) // 4 + 1 for x in cut.stdout.splitlines() if x.startswith("- ")) <= 60
