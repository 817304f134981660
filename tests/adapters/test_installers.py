"""Install and uninstall for Codex, Gemini CLI and Cursor (their config files, other entries kept,
twice is a no-op), the Claude Code installer defects of issue 12, stores chosen by project, and a
missing named store refused. The real Codex and Gemini CLIs (installed by .ci/install-agent-clis)
read what was written with their `mcp list`; without them those tests skip and say so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from conftest import EXE, ROOT, make_store

from memory_mcp.truth import roots

NODE_BIN = ROOT / ".ci" / "node-tools" / "node_modules" / ".bin"


def run(cwd: Path, home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(home), "PATH": path or str(Path(shutil.which("git")).parent), "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A git project with a subfolder, and a home folder."""
    project, home = tmp_path / "proj", tmp_path / "home"
    (project / "src" / "deep").mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project, home


# ------------------------------------------------------------------ stores chosen by project
def test_project_store_is_the_dot_memory_folder_else_one_per_project_under_the_memory_home(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "My Project"
    (project / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    chosen = roots.project_store(project / "sub")
    assert chosen.parent == (tmp_path / "home" / ".memory-mcp" / "projects").resolve()
    assert chosen.name.startswith("My-Project-") and len(chosen.name) == len("My-Project-") + 8
    (project / ".memory").mkdir()
    assert roots.project_store(project / "sub") == (project / ".memory").resolve()
    plain = tmp_path / "not-a-repo"
    plain.mkdir()
    other = roots.project_store(plain)
    assert other != chosen and other.name.startswith("not-a-repo-")


def test_a_linked_worktree_shares_its_repository_s_project_store(tmp_path: Path) -> None:
    main = tmp_path / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")], check=True)
    assert roots.git_root(tmp_path / "wt") == main.resolve()


@pytest.mark.parametrize("how", ["option", "env"])
def test_a_named_store_that_does_not_exist_is_refused_in_one_line(repo: tuple[Path, Path], how: str) -> None:
    project, home = repo
    missing = project / "typo"
    if how == "option":
        done = run(project, home, "status", "--store", str(missing))
    else:
        env = {"HOME": str(home), "PATH": os.environ["PATH"], "MEMORY_MCP_ROOT": str(missing)}
        done = subprocess.run([str(EXE), "status"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and str(missing) in done.stderr and "memory-mcp init" in done.stderr
    assert not missing.exists()


def test_install_creates_the_user_store_it_names_so_the_server_it_registers_starts(repo: tuple[Path, Path]) -> None:
    # A named user store that is missing is refused as a typo; the one install names is made by it.
    project, home = repo
    user = home / "mine"
    done = run(project, home, "install", "cursor", "--store", str(project / ".memory"), "--user-store", str(user))
    assert done.returncode == 0, done.stderr
    assert f"created the memory store {user}" in done.stdout and (user / "memories").is_dir()
    served = run(project, home, "--store", str(project / ".memory"), "status", "--user-store", str(user))
    assert served.returncode == 0, served.stderr


# ------------------------------------------------------------------ Claude Code installer defects
def test_project_scope_from_a_subfolder_writes_mcp_json_at_the_git_root(repo: tuple[Path, Path]) -> None:
    project, home = repo
    done = run(project / "src" / "deep", home, "install", "claude-code", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert not (project / "src" / "deep" / ".mcp.json").exists()
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"]["memory"]
    # No --store: no path at all; the server finds the project's store and the user's as the plugin does.
    assert entry == {"type": "stdio", "command": "memory-mcp", "args": ["serve"], "env": {}}


def test_store_in_the_project_leaves_no_init_lock_and_is_git_ignored(repo: tuple[Path, Path]) -> None:
    project, home = repo
    (project / ".gitignore").write_text("node_modules/")
    done = run(project, home, "install", "claude-code", "--scope", "project", "--store", ".memory")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in project.iterdir()) == [".git", ".gitignore", ".mcp.json", ".memory", "src"]
    assert (project / ".gitignore").read_text() == "node_modules/\n/.memory/\n"
    assert "is its own git repository" in done.stdout
    again = run(project, home, "install", "claude-code", "--scope", "project", "--store", ".memory")
    assert again.returncode == 0 and (project / ".gitignore").read_text().count(".memory") == 1


def test_claude_code_uninstall_takes_out_the_server_and_the_hooks_only(repo: tuple[Path, Path]) -> None:
    project, home = repo
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}}))
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"model": "m", "hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                                   "command": "echo hi"}]}]}}))
    assert run(project, home, "install", "claude-code", "--scope", "project", "--hook").returncode == 0
    done = run(project, home, "uninstall", "claude-code", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert json.loads((project / ".mcp.json").read_text()) == {"mcpServers": {"other": {"command": "x"}}}
    assert json.loads(settings.read_text()) == {"model": "m", "hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "echo hi"}]}]}}


def fake_claude_with_config(tmp: Path, home: Path) -> Path:
    """A `claude` that refuses a second `mcp add` the way Claude Code does, keeping ~/.claude.json."""
    folder = tmp / "fake-bin"
    folder.mkdir()
    script = folder / "claude"
    script.write_text(f"""#!{os.sys.executable}
import json, sys, pathlib
cfg = pathlib.Path({str(home)!r}) / ".claude.json"
data = json.loads(cfg.read_text()) if cfg.exists() else {{}}
args = sys.argv[1:]
if args[:2] == ["mcp", "add"]:
    name, env, i = args[2], {{}}, args.index("--")
    for j, a in enumerate(args[:i]):
        if a == "-e":
            k, v = args[j + 1].split("=", 1); env[k] = v
    if name in data.get("mcpServers", {{}}):
        print(f"MCP server {{name}} already exists in user config", file=sys.stderr); sys.exit(1)
    data.setdefault("mcpServers", {{}})[name] = {{"type": "stdio", "command": args[i + 1], "args": args[i + 2:],
                                                 "env": env}}
    cfg.write_text(json.dumps(data)); print("Added")
""")
    script.chmod(0o755)
    return folder


def test_user_scope_twice_succeeds_and_a_different_registration_says_how_to_replace(
        repo: tuple[Path, Path], tmp_path: Path) -> None:
    project, home = repo
    path = f"{fake_claude_with_config(tmp_path, home)}:{Path(shutil.which('git')).parent}"
    store = make_store(tmp_path / "store")
    first = run(project, home, "install", "claude-code", "--scope", "user", "--store", str(store), path=path)
    second = run(project, home, "install", "claude-code", "--scope", "user", "--store", str(store), path=path)
    assert first.returncode == 0 and second.returncode == 0, second.stderr
    assert "already registered" in second.stdout
    other = make_store(tmp_path / "other")
    third = run(project, home, "install", "claude-code", "--scope", "user", "--store", str(other), path=path)
    assert third.returncode == 2 and "memory-mcp uninstall claude-code --scope user" in third.stderr


# ------------------------------------------------------------------ Codex, Gemini CLI, Cursor
CONFIGS = {"codex": ".codex/config.toml", "gemini": ".gemini/settings.json", "cursor": ".cursor/mcp.json"}


def read_config(client: str, path: Path) -> dict:
    return tomllib.loads(path.read_text()) if client == "codex" else json.loads(path.read_text())


@pytest.mark.parametrize("client", sorted(CONFIGS))
@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_keeps_other_entries_is_idempotent_and_uninstall_undoes_it(
        repo: tuple[Path, Path], tmp_path: Path, client: str, scope: str) -> None:
    project, home = repo
    path = (home if scope == "user" else project) / CONFIGS[client]
    path.parent.mkdir(parents=True)
    before = ('# mine\nmodel = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n' if client == "codex"
              else json.dumps({"theme": "dark", "mcpServers": {"other": {"command": "x"}}}, indent=2) + "\n")
    path.write_text(before)
    store = make_store(tmp_path / "store")
    first = run(project / "src", home, "install", client, "--scope", scope, "--store", str(store))
    assert first.returncode == 0, first.stderr
    config = read_config(client, path)
    servers = config["mcp_servers" if client == "codex" else "mcpServers"]
    assert servers["other"] == {"command": "x"}
    # A project-scope file is committed: `memory-mcp` from PATH; the store outside project and home
    # stays a machine path, which the output says.
    assert servers["memory"]["command"] == (str(EXE) if scope == "user" else "memory-mcp")
    assert servers["memory"]["args"] == ["serve"]
    assert servers["memory"]["env"] == {"MEMORY_MCP_ROOT": str(store.resolve())}
    assert (f"names {store.resolve()}, a path of this machine" in first.stdout) == (scope == "project")
    text = path.read_text()
    second = run(project / "src", home, "install", client, "--scope", scope, "--store", str(store))
    assert second.returncode == 0 and "already registered" in second.stdout and path.read_text() == text
    gone = run(project / "src", home, "uninstall", client, "--scope", scope)
    assert gone.returncode == 0, gone.stderr
    if client == "codex":
        assert path.read_text() == before
    else:
        assert json.loads(path.read_text()) == json.loads(before)


@pytest.mark.parametrize("client", sorted(CONFIGS))
def test_another_program_named_memory_is_refused(repo: tuple[Path, Path], tmp_path: Path, client: str) -> None:
    project, home = repo
    path = home / CONFIGS[client]
    path.parent.mkdir(parents=True)
    theirs = ('[mcp_servers.memory]\ncommand = "npx"\n' if client == "codex"
              else json.dumps({"mcpServers": {"memory": {"command": "npx"}}}))
    path.write_text(theirs)
    done = run(project, home, "install", client, "--store", str(make_store(tmp_path / "s")))
    assert done.returncode == 2 and "already has" in done.stderr and path.read_text() == theirs


@pytest.mark.parametrize("client", ["codex", "gemini"])
def test_the_real_cli_lists_the_server(repo: tuple[Path, Path], tmp_path: Path, client: str) -> None:
    cli = NODE_BIN / client
    if not cli.exists():
        pytest.skip(f"the {client} CLI is not installed (.ci/install-agent-clis puts it in .ci/node-tools)")
    project, home = repo
    store = make_store(tmp_path / "store")
    assert run(project, home, "install", client, "--store", str(store)).returncode == 0
    env = {**os.environ, "HOME": str(home), "CODEX_HOME": str(home / ".codex")}
    listed = subprocess.run([str(cli), "mcp", "list"], capture_output=True, text=True, cwd=project, env=env,
                            timeout=120)
    out = listed.stdout + listed.stderr
    assert listed.returncode == 0, out
    assert "memory" in out and str(EXE) in out, out


def test_user_scope_install_without_a_store_names_no_store(repo: tuple[Path, Path]) -> None:
    """Regression: with no --store and a user-scope install, the installer imported `default_root`
    from the store facade, where it no longer lives, and crashed with ImportError. Since issue 34 it
    names no store: Cursor passes its workspace, and the server serves that project's stores."""
    project, home = repo
    r = run(project, home, "install", "cursor", "--scope", "user")
    assert r.returncode == 0, r.stderr
    entry = json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["memory"]
    assert entry == {"command": str(EXE), "args": ["serve"], "env": {"MEMORY_MCP_PROJECT_DIR": "${workspaceFolder}"}}
    assert "${workspaceFolder}" in r.stdout


# ------------------------------------------------------------------ what a new user met (issue 32)
@pytest.mark.parametrize("where", ["user", "local"])
def test_install_claude_code_with_the_plugin_on_is_refused_and_writes_nothing(repo: tuple[Path, Path],
                                                                             where: str) -> None:
    """With the plugin on, `install --hook` silently added a second server and every hook twice."""
    project, home = repo
    settings = home / ".claude" / "settings.json" if where == "user" else project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"enabledPlugins": {"memory-mcp@memory-mcp": True}}))
    before = sorted(p.relative_to(project) for p in project.rglob("*") if ".git" not in p.parts)
    done = run(project, home, "install", "claude-code", "--scope", "project", "--hook")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "the memory-mcp plugin is on" in done.stderr and "claude plugin disable memory-mcp@memory-mcp" in done.stderr
    assert str(settings) in done.stderr
    assert sorted(p.relative_to(project) for p in project.rglob("*") if ".git" not in p.parts) == before
    assert not (home / ".memory-mcp").exists()


def test_install_claude_code_with_the_plugin_turned_off_installs(repo: tuple[Path, Path]) -> None:
    project, home = repo
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"memory-mcp@memory-mcp": True}}))
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"enabledPlugins": {"memory-mcp@memory-mcp": False}}))
    done = run(project, home, "install", "claude-code", "--scope", "project")
    assert done.returncode == 0, done.stderr
    assert "memory" in json.loads((project / ".mcp.json").read_text())["mcpServers"]


GEMINI_WITH_COMMENTS = """{
  // Gemini CLI reads comments in its settings
  "theme": "GitHub", /* the light one */
  "mcpServers": {
    "other": {"command": "x"} // my other server
  }
}
"""


def test_gemini_settings_with_comments_are_read_as_gemini_reads_them_and_kept(repo: tuple[Path, Path],
                                                                            tmp_path: Path) -> None:
    project, home = repo
    path = home / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(GEMINI_WITH_COMMENTS)
    store = make_store(tmp_path / "store")
    done = run(project, home, "install", "gemini", "--store", str(store))
    assert done.returncode == 0, done.stderr
    text = path.read_text()
    for comment in ("// Gemini CLI reads comments", "/* the light one */", "// my other server"):
        assert comment in text
    from memory_mcp.adapters.install import jsonc

    servers = json.loads(jsonc.blank_comments(text))["mcpServers"]
    assert servers["other"] == {"command": "x"} and servers["memory"]["command"] == str(EXE)
    again = run(project, home, "install", "gemini", "--store", str(store))
    assert "already registered" in again.stdout and path.read_text() == text
    assert run(project, home, "uninstall", "gemini").returncode == 0
    assert path.read_text() == GEMINI_WITH_COMMENTS


@pytest.mark.parametrize("client", sorted(CONFIGS))
def test_uninstall_removes_the_config_file_install_created(repo: tuple[Path, Path], tmp_path: Path,
                                                           client: str) -> None:
    """Uninstall left a 1-byte config.toml and `{"mcpServers": {}}` files behind."""
    project, home = repo
    store = make_store(tmp_path / "store")
    assert run(project, home, "install", client, "--store", str(store)).returncode == 0
    assert (home / CONFIGS[client]).exists()
    done = run(project, home, "uninstall", client)
    assert done.returncode == 0, done.stderr
    assert not (home / CONFIGS[client]).exists() and not (home / CONFIGS[client]).parent.exists()
    assert "the file is gone" in done.stdout


def test_uninstall_claude_code_removes_the_files_and_the_ignore_line_it_created(repo: tuple[Path, Path]) -> None:
    project, home = repo
    done = run(project, home, "install", "claude-code", "--scope", "project", "--store", ".memory", "--hook")
    assert done.returncode == 0, done.stderr
    assert (project / ".gitignore").read_text() == "/.memory/\n"
    kept = run(project, home, "uninstall", "claude-code", "--scope", "project", "--store", ".memory")
    assert kept.returncode == 0, kept.stderr
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()
    # The store keeps its memories, so the line that keeps it out of the code repository stays.
    assert (project / ".gitignore").read_text() == "/.memory/\n" and "kept /.memory/" in kept.stdout
    shutil.rmtree(project / ".memory")
    (project / ".gitignore").write_text("node_modules/\n/.memory/\n")
    gone = run(project, home, "uninstall", "claude-code", "--scope", "project", "--store", ".memory")
    assert gone.returncode == 0, gone.stderr
    assert (project / ".gitignore").read_text() == "node_modules/\n"


# ------------------------------------------------------------------ portable project files (issue 34)
@pytest.mark.parametrize("client", sorted(CONFIGS))
def test_a_project_scope_file_names_no_path_of_this_machine(repo: tuple[Path, Path], client: str) -> None:
    # They wrote the venv's memory-mcp and the home folder's stores into files meant to be committed.
    project, home = repo
    done = run(project, home, "install", client, "--scope", "project")
    assert done.returncode == 0, done.stderr
    text = (project / CONFIGS[client]).read_text()
    assert str(home) not in text and str(EXE) not in text and str(project) not in text, text
    servers = read_config(client, project / CONFIGS[client])["mcp_servers" if client == "codex" else "mcpServers"]
    assert servers["memory"]["command"] == "memory-mcp" and servers["memory"]["args"] == ["serve"]
    assert "stores: those of the" in done.stdout and "from PATH" in done.stdout  # memory-mcp is not on this PATH


@pytest.mark.parametrize(("client", "written"), [("gemini", "${HOME}/team-store"), ("cursor", "${userHome}/team-store"),
                                                 ("codex", None)])
def test_a_named_store_in_the_home_folder_is_written_through_the_agent_s_variable(
        repo: tuple[Path, Path], client: str, written: str | None) -> None:
    project, home = repo
    done = run(project, home, "install", client, "--scope", "project", "--store", str(home / "team-store"))
    assert done.returncode == 0, done.stderr
    servers = read_config(client, project / CONFIGS[client])["mcp_servers" if client == "codex" else "mcpServers"]
    root = servers["memory"]["env"]["MEMORY_MCP_ROOT"]
    if written is not None:
        assert root == written and "a path of this machine" not in done.stdout
    else:  # Codex expands no variables: the path stays, and the output says so
        assert root == str((home / "team-store").resolve()) and "Codex expands no variables" in done.stdout
