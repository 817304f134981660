"""A project's team store (issue 34, items 2 and 4), with real git (a bare repository as the team's
remote), the CLI as a subprocess, the real hooks on stdin and the stdio server: `team init` makes the
store and commits only a pointer file; a teammate's clone is told to join and nothing is fetched
before they do; after `team join` the teammate sees Ann's memory marked unaccepted, with its author,
until a rule or `accept` says otherwise; `share` moves a memory with one commit in each store;
Claude Code's auto-memory notes never reach a store a team shares; hostile pointer files are refused."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from conftest import EXE, Session, auto_memory, hook_env
from mcp import Client, StdioServerParameters
from test_accept import on_terminal

from memory_mcp.truth import teams

pytestmark = pytest.mark.slow

ANN = {"GIT_AUTHOR_NAME": "Ann", "GIT_AUTHOR_EMAIL": "ann@example.com", "GIT_COMMITTER_NAME": "Ann",
       "GIT_COMMITTER_EMAIL": "ann@example.com"}
BOB = {"GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "bob@example.com", "GIT_COMMITTER_NAME": "Bob",
       "GIT_COMMITTER_EMAIL": "bob@example.com"}
RULE = "Billing deploys go out from main only, after the release tag is pushed."


def git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True,
                          env={**os.environ, **ANN, "GIT_CONFIG_NOSYSTEM": "1"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli(env: dict[str, str], *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), *args], capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL, cwd=cwd or env["PROJECT"])


def hook(env: dict[str, str], event: str, session: str, **more: object) -> str:
    payload = {"session_id": session, "cwd": env["PROJECT"], "hook_event_name": event, **more}
    done = subprocess.run([str(EXE), "hook", event], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]) if done.stdout else ""


def teams_folder(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".memory-mcp" / "teams"


def team_store(env: dict[str, str]) -> Path:
    [store] = list(teams_folder(env).iterdir())
    return store


def ids_in(store: Path) -> set[str]:
    return {m for p in (store / "memories").rglob("*.md") for m in re.findall(r"^id: (\S+)$", p.read_text(), re.M)}


def own_store(env: dict[str, str]) -> Path:
    """The person's own store of the project, as `where` names it."""
    found = re.search(r"^project store  (\S+)", cli(env, "where").stdout, re.M)
    assert found
    return Path(found.group(1))


def count(store: Path) -> int:
    return int(git(store, "rev-list", "--count", "HEAD").strip())


@pytest.fixture
def ann(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Ann's machine: her home and the project, a code repository with one commit."""
    (tmp_path / "ann").mkdir()
    env = {**hook_env(tmp_path / "ann", monkeypatch), **ANN}
    (Path(env["PROJECT"]) / "app.py").write_text("print('hi')\n")
    git(Path(env["PROJECT"]), "add", "-A")
    git(Path(env["PROJECT"]), "commit", "-qm", "code")
    return env


@pytest.fixture
def remote(tmp_path: Path) -> Path:
    """The team's remote: an empty bare repository, as a git host makes one."""
    path = tmp_path / "team-memory.git"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(path)], check=True)
    return path


def bob_env(ann: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """Bob's machine: his own home and a clone of the project (with what Ann committed)."""
    home, project, data = tmp_path / "bob" / "home", tmp_path / "bob" / "proj", tmp_path / "bob" / "data"
    home.mkdir(parents=True)
    data.mkdir()
    git(tmp_path, "clone", "-q", ann["PROJECT"], str(project))
    return {**ann, **BOB, "HOME": str(home), "PROJECT": str(project),
            "CLAUDE_PLUGIN_DATA": str(data)}


def init_and_share(ann: dict[str, str], remote: Path) -> str:
    """Ann makes the team store, writes a memory into her own store, shares it, publishes both."""
    made = cli(ann, "team", "init", "--remote", str(remote))
    assert made.returncode == 0, made.stderr
    said = cli(ann, "remember", RULE, "--title", "Billing deploy rules", "--type", "preference")
    assert said.returncode == 0, said.stderr
    [mem_id] = re.findall(r"\[([0-9A-Z]{26})\]", said.stdout)
    store, own = team_store(ann), own_store(ann)
    before = (count(store), count(own))
    shared = cli(ann, "share", mem_id, "--to", "team")
    assert shared.returncode == 0, shared.stderr
    # One commit in each store, the same id, gone from her own.
    assert (count(store), count(own)) == (before[0] + 1, before[1] + 1)
    assert mem_id in ids_in(store) and mem_id not in ids_in(own)
    assert git(store, "log", "-1", "--format=%an <%ae> %s").startswith("Ann <ann@example.com> share: Billing")
    assert cli(ann, "--store", str(store), "sync").returncode == 0
    project = Path(ann["PROJECT"])
    git(project, "add", ".memory.toml")
    git(project, "commit", "-qm", "team memory")
    return mem_id


def test_team_init_commits_a_pointer_file_and_a_teammate_joins_and_sees_ann_memory_unaccepted(
        ann: dict[str, str], remote: Path, tmp_path: Path) -> None:
    mem_id = init_and_share(ann, remote)
    project = Path(ann["PROJECT"])
    # The code repository holds a small file naming the remote, never a gitlink or a machine path of Ann's.
    assert "160000" not in git(project, "ls-files", "-s")
    assert teams.read_pointer(project) == str(remote)
    assert ann["HOME"] not in (project / ".memory.toml").read_text()
    assert git(remote, "rev-parse", "main").strip()  # the new store was pushed
    assert f"{mem_id}" in cli(ann, "recall", "billing deploy").stdout  # Ann's session reads the team store
    assert "author: Ann <ann@example.com> (own)" in cli(ann, "read", mem_id).stdout

    bob = bob_env(ann, tmp_path)
    told = hook(bob, "SessionStart", "b1", source="startup")
    assert "memory-mcp team join" in told and str(remote) in told
    assert RULE[:20] not in told and not teams_folder(bob).exists()  # nothing fetched before he joins
    refused = cli(bob, "team", "join")
    assert refused.returncode == 2 and "asks on a terminal" in refused.stderr and not teams_folder(bob).exists()
    code, drawn = on_terminal(bob, ["team", "join"], "y")
    assert code == 0 and "joined the team store" in drawn, drawn

    digest = hook(bob, "SessionStart", "b2", source="startup")
    [line] = [x for x in digest.splitlines() if "Billing deploy rules" in x]
    assert "by Ann, unaccepted" in line, line
    assert "author: Ann <ann@example.com> (unaccepted)" in cli(bob, "read", mem_id).stdout
    assert "Ann <ann@example.com>" in cli(bob, "accept").stdout
    # His own rule for this team store, kept in his config folder: Ann's memories are accepted.
    code, drawn = on_terminal(bob, ["team", "accept", "ann@example.com"], "y")
    assert code == 0, drawn
    line = next(x for x in hook(bob, "SessionStart", "b3", source="startup").splitlines() if "Billing deploy" in x)
    assert "by Ann" in line and "unaccepted" not in line, line
    assert "(accepted)" in cli(bob, "read", mem_id).stdout


@pytest.mark.anyio
async def test_the_share_tool_moves_a_memory_into_the_team_store_over_stdio(
        ann: dict[str, str], remote: Path) -> None:
    assert cli(ann, "team", "init", "--remote", str(remote)).returncode == 0
    env = {k: v for k, v in ann.items() if k != "PROJECT"}
    params = StdioServerParameters(command=str(EXE), args=["serve"], env=env, cwd=ann["PROJECT"])
    async with Client(params) as client:
        s = Session(client, Path(ann["PROJECT"]))
        made = await s.call("memory_remember", content=RULE, title="Billing deploy rules", type="preference")
        assert "team" not in {h["scope"] for h in (await s.call("memory_recall", query="billing"))["results"]}
        shared = await s.call("memory_share", id=made["id"], to="team")
        assert shared["id"] == made["id"] and shared["team_commit"] and shared["own_commit"]
        [hit] = (await s.call("memory_recall", query="billing deploy"))["results"]
        assert (hit["id"], hit["scope"]) == (made["id"], "team")
        assert "team store already" in await s.error("memory_share", id=made["id"])
    assert made["id"] in ids_in(team_store(ann))


def test_without_a_team_store_share_says_how_to_make_one(ann: dict[str, str]) -> None:
    said = cli(ann, "remember", RULE, "--title", "Billing deploy rules")
    [mem_id] = re.findall(r"\[([0-9A-Z]{26})\]", said.stdout)
    refused = cli(ann, "share", mem_id, "--to", "team")
    assert refused.returncode == 2 and "team init --remote URL" in refused.stderr


# ------------------------------------------------------------------ personal stays personal
def test_auto_memory_notes_never_reach_a_dot_memory_store_a_team_shares(ann: dict[str, str], remote: Path) -> None:
    # On main before this change, SessionStart imported Claude Code's machine-local notes into the
    # project's `.memory` (a store a team shares through its remote) and the next sync pushed them.
    store = Path(ann["PROJECT"]) / ".memory"
    assert cli(ann, "init", str(store)).returncode == 0
    git(store, "remote", "add", "origin", str(remote))
    assert on_terminal(ann, ["trust", str(store)], "y")[0] == 0  # a new remote: trusted again
    auto_memory(ann)
    before = count(store)
    said = hook(ann, "SessionStart", "a1", source="startup")
    assert "not imported" in said and "personal notes stay personal" in said
    assert count(store) == before and not ids_in(store)
    assert cli(ann, "--store", str(store), "sync").returncode == 0
    assert "Build with make" not in git(remote, "log", "-p", "main")


def test_auto_memory_notes_go_to_the_persons_own_project_store_not_the_team_store(
        ann: dict[str, str], remote: Path) -> None:
    assert cli(ann, "team", "init", "--remote", str(remote)).returncode == 0
    auto_memory(ann)
    assert "imported 1 new Claude Code auto-memory note" in hook(ann, "SessionStart", "a1", source="startup")
    assert not ids_in(team_store(ann)) and len(ids_in(own_store(ann))) == 1


# ------------------------------------------------------------------ hostile pointer files
@pytest.mark.parametrize("url", ["ext::sh -c touch% MARKER", "--upload-pack=touch MARKER", "-oProxyCommand=touch MARKER",
                                 "fd::3", "https://ann:hunter2@host/team.git"])
def test_a_hostile_pointer_file_is_refused_at_session_start_and_by_join(
        ann: dict[str, str], tmp_path: Path, url: str) -> None:
    project, marker = Path(ann["PROJECT"]), tmp_path / "pwned"
    (project / ".memory.toml").write_text(f"remote = {json.dumps(url.replace('MARKER', str(marker)))}\n")
    said = hook(ann, "SessionStart", "h1", source="startup")
    assert "[invalid_pointer]" not in said and "is refused" in said and "Nothing was fetched" in said
    refused = cli(ann, "team", "join")
    assert refused.returncode == 2 and "[invalid_pointer]" in refused.stderr
    assert not teams_folder(ann).exists() and not marker.exists()


def test_a_pointer_into_the_clone_itself_is_refused(ann: dict[str, str]) -> None:
    project = Path(ann["PROJECT"])
    for url in (str(project), str(project / ".git"), f"file://{project}/.git", "../proj"):
        (project / ".memory.toml").write_text(f"remote = {json.dumps(url)}\n")
        refused = cli(ann, "team", "join")
        assert refused.returncode == 2 and "[invalid_pointer]" in refused.stderr, (url, refused.stderr)
    assert not teams_folder(ann).exists()
