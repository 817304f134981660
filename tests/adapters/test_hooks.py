"""The Claude Code hook commands (`memory-mcp hook EVENT`): their output shapes for the documented
input JSON, the prompt hook measured on tests/hook_eval.py, once-per-session rules, the auto-memory
import, and the promise that a hook never breaks a session (no output and exit 0 on any error, at
most about a second on a busy store)."""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from conftest import EXE, ROOT, auto_memory, hook_env
from hook_eval import CHIT_CHAT, MEMORIES, PROMPTS

from memory_mcp.adapters.hooks import events as hooks
from memory_mcp.adapters.hooks import state as hookstate
from memory_mcp.adapters.hooks import stop as stop_note
from memory_mcp.app.store import Store
from memory_mcp.truth import globs

ID = re.compile(r"\[([0-9A-Z]{26})\]")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    return hook_env(tmp_path, monkeypatch)


def hook(env: dict[str, str], event: str, payload: dict, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(EXE), "hook", event, *args], input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=60)


def eval_store(root: Path, source: str = "") -> dict[str, str]:
    store = Store.open(root)
    ids = {key: store.remember(content, title=title, type=kind, trust="user-stated", source=source).id
           for key, (kind, title, content) in MEMORIES.items()}
    store.close()
    return ids


def common(env: dict[str, str], event: str, session: str = "s1", **more: object) -> dict:
    """The input fields every hook gets (hooks reference), plus the event's own."""
    return {"session_id": session, "transcript_path": str(Path(env["HOME"]) / "t.jsonl"), "cwd": env["PROJECT"],
            "permission_mode": "default", "hook_event_name": event, **more}


# ------------------------------------------------------------------ the prompt hook, measured
# Also with every memory written in one session (one `source`, in order): the worst case for the
# neighbours-in-time signal, whose neighbours here are unrelated (noise 10.7% -> 13.8% measured).
@pytest.mark.parametrize("source", ["", "session 2026-12-02"], ids=["no-source", "one-session"])
def test_prompt_hook_injects_the_right_memory_little_noise_and_nothing_for_chit_chat(
        env: dict[str, str], tmp_path: Path, source: str) -> None:
    ids = eval_store(tmp_path / "store", source)
    key_of = {v: k for k, v in ids.items()}
    options = hooks.Options(tmp_path / "store")
    found = lines = noise = 0
    for n, (prompt, key) in enumerate(PROMPTS):
        out = hooks.handle("UserPromptSubmit", common(env, "UserPromptSubmit", f"p{n}", prompt=prompt), options)
        got = [key_of[i] for i in ID.findall(json.loads(out)["hookSpecificOutput"]["additionalContext"])] if out else []
        found += key in got
        lines += len(got)
        noise += sum(g != key for g in got)
    chatty = [p for n, p in enumerate(CHIT_CHAT) if hooks.handle(
        "UserPromptSubmit", common(env, "UserPromptSubmit", f"c{n}", prompt=p), options)]
    hit_rate, noise_rate = found / len(PROMPTS), noise / max(lines, 1)
    print(f"prompt hook eval: {len(PROMPTS)} prompts, right memory injected {hit_rate:.0%}, "
          f"{lines} lines, noise {noise_rate:.0%}, chit-chat with output {len(chatty)}/{len(CHIT_CHAT)}")
    assert len(PROMPTS) >= 50
    assert hit_rate >= 0.8 and noise_rate <= 0.2 and chatty == []


def test_prompt_hook_output_shape_dedup_and_skips(env: dict[str, str], tmp_path: Path) -> None:
    eval_store(tmp_path / "store")
    args = ("--store", str(tmp_path / "store"))
    payload = common(env, "UserPromptSubmit", prompt="customers are getting duplicate invoices from stripe again")
    done = hook(env, "UserPromptSubmit", payload, *args)
    assert done.returncode == 0 and done.stderr == ""
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    [line] = [x for x in out["additionalContext"].splitlines() if x.startswith("- [")]
    # The store is named once per block: on its first line.
    assert re.fullmatch(r"- \[[0-9A-Z]{26}\] episode, project scope, today: Stripe webhook retries caused duplicate "
                        r"invoices - In March .+", line)
    assert len(out["additionalContext"]) // 4 <= hooks.PROMPT_TOKENS
    # Once per session: the same prompt again injects nothing; another session gets it again.
    assert hook(env, "UserPromptSubmit", payload, *args).stdout == ""
    assert hook(env, "UserPromptSubmit", {**payload, "session_id": "s2"}, *args).stdout != ""
    for prompt in ("/memory stripe invoices duplicate", "ok stripe", "thanks"):
        assert hook(env, "UserPromptSubmit", {**payload, "session_id": "s3", "prompt": prompt}, *args).stdout == ""


def test_prompt_hook_leaves_the_rebuild_of_an_index_of_another_version_to_session_start(
        env: dict[str, str], tmp_path: Path) -> None:
    # After an upgrade the prompt hook rebuilt the whole index itself: at 10,000 memories past its
    # 8 s watchdog, on every prompt. It now injects nothing and logs why; SessionStart rebuilds.
    import sqlite3

    from memory_mcp.truth.layout import index_path

    root = tmp_path / "store"
    eval_store(root)
    settled(root)
    db = index_path(root)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE meta SET value = 'an-older-version' WHERE key = 'schema_version'")
    args = ("--store", str(root))
    prompt = common(env, "UserPromptSubmit", prompt="customers are getting duplicate invoices from stripe again")
    done = hook(env, "UserPromptSubmit", prompt, *args)
    assert done.returncode == 0 and done.stdout == "" and done.stderr == ""
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "an-older-version"
    assert "from another version" in (Path(env["CLAUDE_PLUGIN_DATA"]) / "state" / "hooks.log").read_text()
    assert hook(env, "SessionStart", common(env, "SessionStart", "s9", source="startup"), *args).stdout
    assert "Stripe webhook retries" in hook(env, "UserPromptSubmit", prompt, *args).stdout


def test_session_start_gives_the_digest_and_what_it_showed_is_not_injected_again(
        env: dict[str, str], tmp_path: Path) -> None:
    store = tmp_path / "store"
    s = Store.open(store)
    s.remember("Money amounts are integer cents; never floats.", title="Money is integer cents",
               type="preference", trust="user-stated")
    s.close()
    for source in ("startup", "resume", "clear", "compact"):
        done = hook(env, "SessionStart", common(env, "SessionStart", source=source, model="m"), "--store", str(store))
        out = json.loads(done.stdout)["hookSpecificOutput"]
        assert out["hookEventName"] == "SessionStart" and "Money is integer cents" in out["additionalContext"]
    prompt = common(env, "UserPromptSubmit", prompt="how are money amounts stored, cents or floats")
    assert hook(env, "UserPromptSubmit", prompt, "--store", str(store)).stdout == ""
    assert hook(env, "UserPromptSubmit", {**prompt, "session_id": "other"}, "--store", str(store)).stdout != ""


def test_plugin_hooks_choose_the_project_and_user_stores_without_flags(env: dict[str, str]) -> None:
    from memory_mcp.truth import roots

    project_store = roots.project_store(Path(env["PROJECT"]))
    Store.open(project_store).remember("Deploys go through the release workflow on tags.", title="Deploy on tags",
                                       type="decision", trust="user-stated")
    Store.open(roots.user_root()).remember("Answer in British English spelling.", type="preference",
                                            trust="user-stated")
    done = hook(env, "SessionStart", common(env, "SessionStart", source="startup"))
    text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Deploy on tags" in text and "British" in text


# ------------------------------------------------------------------ the prompt hook's read path
def settled(root: Path) -> None:
    """Make a store's index current the way time does: files and folders older than the last walk's
    start by more than the racy margin (set back a minute here, rather than waiting), then one walk
    (a CLI call)."""
    past = time.time() - 60
    for path in [*(root / "memories").rglob("*"), root / "memories"]:
        os.utime(path, (past, past))
    Store.open(root).close()
    subprocess.run([str(EXE), "status", "--store", str(root)], capture_output=True, check=True)


def test_prompt_hook_sees_hand_edits_and_deletions_made_since_the_last_reconcile(
        env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "store"
    ids = eval_store(root)
    settled(root)
    store = Store.open(root)
    stripe, flags = (root / store.read(ids[k]).path for k in ("stripe-webhook", "feature-flags"))
    store.close()
    # By hand, with no server running: one memory is rewritten to be about something else, one deleted.
    stripe.write_text(stripe.read_text().replace("Stripe webhook retries caused duplicate invoices",
                                                 "Paddle webhook retries caused duplicate receipts"))
    flags.unlink()
    args = ("--store", str(root))
    edited = hook(env, "UserPromptSubmit", common(env, "UserPromptSubmit", "a",
                                                   prompt="paddle webhook retries made duplicate receipts"), *args)
    assert "Paddle webhook retries caused duplicate receipts" in edited.stdout
    gone = hook(env, "UserPromptSubmit", common(env, "UserPromptSubmit", "b",
                                                 prompt="where do the feature flags live, which flags file"), *args)
    assert ids["feature-flags"] not in gone.stdout


def test_index_counts_as_unchanged_until_a_memory_file_is_added_removed_or_renamed(tmp_path: Path) -> None:
    from memory_mcp.index import reconcile
    from memory_mcp.index.db import Index
    from memory_mcp.truth.dictionary import DICTIONARY, Dictionary
    from memory_mcp.truth.layout import index_path

    root = tmp_path / "store"
    eval_store(root)
    settled(root)

    def unchanged() -> bool:
        index = Index.open_existing(index_path(root))
        assert index is not None
        try:
            return reconcile.unchanged_since_walk(root, index, Dictionary.load(root / DICTIONARY))
        finally:
            index.close()

    assert unchanged()
    victim = next(p for p in sorted((root / "memories").rglob("*.md")) if not p.name.startswith("."))
    victim.write_bytes(victim.read_bytes() + b" more")
    assert unchanged()  # an edit in place changes no folder: the next tool call's reconcile sees it
    folder = victim.parent
    for change in (lambda: (folder / "new.md").write_text("---\ntitle: New\n---\nA new note.\n"),
                   lambda: (folder / "new.md").rename(folder / "renamed.md"),
                   lambda: (folder / "renamed.md").unlink(),
                   lambda: (root / "memories" / "2020").mkdir()):
        change()
        assert not unchanged()
        settled(root)
        assert unchanged()
    with open(root / DICTIONARY, "a") as f:
        f.write("- billing: the billing service\n")
    assert not unchanged()
    (root / ".derived" / "index.sqlite3").unlink()
    assert Index.open_existing(index_path(root)) is None


# ------------------------------------------------------------------ Stop
def transcript(path: Path, tools: list[str]) -> Path:
    lines = [{"type": "user", "message": {"role": "user", "content": "fix the bug"}}]
    lines += [{"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "text", "text": "working"}, {"type": "tool_use", "id": f"t{n}", "name": name, "input": {}}]}}
        for n, name in enumerate(tools)]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


@pytest.mark.parametrize(("tools", "noted"), [
    (["Edit", "Bash", "Write"], True),
    (["Edit", "Bash"], False),
    (["Read", "Grep", "Glob", "Read"], False),
    (["Edit", "Bash", "Write", "mcp__plugin_memory-mcp_memory__memory_remember"], False),
])
def test_stop_notes_once_after_real_work_without_a_memory(env: dict[str, str], tmp_path: Path, tools: list[str],
                                                          noted: bool) -> None:
    t = transcript(tmp_path / "t.jsonl", tools)
    payload = {**common(env, "Stop"), "transcript_path": str(t), "stop_hook_active": False,
               "last_assistant_message": "done"}
    first = hook(env, "Stop", payload)
    assert first.returncode == 0
    if not noted:
        assert first.stdout == ""
        return
    out = json.loads(first.stdout)
    assert "decision" not in out and set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"] == {"hookEventName": "Stop", "additionalContext": stop_note.STOP_NOTE}
    assert hook(env, "Stop", payload).stdout == ""  # at most once per session


# ------------------------------------------------------------------ auto memory
def test_auto_memory_notes_are_imported_and_a_changed_note_supersedes_its_import(env: dict[str, str]) -> None:
    from memory_mcp.truth import roots

    folder = auto_memory(env)
    done = hook(env, "SessionStart", common(env, "SessionStart", source="startup"))
    assert "imported 1 new Claude Code auto-memory note" in done.stdout
    store = Store.open(roots.project_store(Path(env["PROJECT"])))
    [first] = [h for h in store.recall("build make").results]
    assert hook(env, "SessionStart", common(env, "SessionStart", source="startup")).stdout.count("imported") == 0
    (folder / "build.md").write_text("---\nname: Build with just\ndescription: The project builds with just "
                                     "recipes now.\ntype: project\n---\nRun just build.\n")
    again = hook(env, "SessionStart", common(env, "SessionStart", source="resume"))
    assert "1 replace their earlier import" in again.stdout
    assert store.read(first.id).state == "archived"
    assert [h.title for h in store.recall("build").results] == ["Build with just"]


def test_redirect_mode_answers_writes_into_auto_memory_with_a_pointer(env: dict[str, str]) -> None:
    folder = auto_memory(env)
    payload = common(env, "PreToolUse", tool_name="Write", tool_input={"file_path": str(folder / "x.md"),
                                                                       "content": "note"})
    assert hook(env, "PreToolUse", payload).stdout == ""  # the default is import, not redirect
    out = json.loads(hook({**env, "MEMORY_MCP_AUTO_MEMORY": "redirect"}, "PreToolUse", payload).stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "memory_remember" in out["hookSpecificOutput"]["permissionDecisionReason"]
    elsewhere = {**payload, "tool_input": {"file_path": env["PROJECT"] + "/x.md"}}
    assert hook({**env, "MEMORY_MCP_AUTO_MEMORY": "redirect"}, "PreToolUse", elsewhere).stdout == ""


# ------------------------------------------------------------------ never breaks a session
def test_any_error_means_no_output_exit_0_and_a_log_line(env: dict[str, str]) -> None:
    done = subprocess.run([str(EXE), "hook", "UserPromptSubmit"], input="{not json", capture_output=True,
                          text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert "UserPromptSubmit: JSONDecodeError" in (Path(env["CLAUDE_PLUGIN_DATA"]) / "state" / "hooks.log").read_text()


def test_hook_command_line_read_without_argparse_keeps_its_forms_and_never_fails(
        env: dict[str, str], tmp_path: Path) -> None:
    # `memory-mcp hook` reads its arguments by hand (argparse was 6 ms of each hook): --opt=value and
    # options before the event still work, and a command line it cannot read is logged, not exit 2.
    eval_store(tmp_path / "store")
    payload = common(env, "UserPromptSubmit", prompt="customers are getting duplicate invoices from stripe again")
    for n, args in enumerate(([f"--store={tmp_path / 'store'}", "UserPromptSubmit"],
                              ["--store", str(tmp_path / "store"), "UserPromptSubmit", "--user-store"])):
        done = subprocess.run([str(EXE), "hook", *args], input=json.dumps({**payload, "session_id": f"f{n}"}),
                              capture_output=True, text=True, env=env, timeout=60)
        assert "Stripe webhook retries" in done.stdout, done.stderr
    log = Path(env["CLAUDE_PLUGIN_DATA"]) / "state" / "hooks.log"
    done = subprocess.run([str(EXE), "hook", "UserPromptSubmit", "--store"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    # No event at all is a settings typo: said on stderr, exit 1 (never 2, which blocks the session).
    done = subprocess.run([str(EXE), "hook"], input=json.dumps(payload), capture_output=True, text=True,
                          env=env, timeout=60)
    assert (done.returncode, done.stdout) == (1, "") and "unknown hook event ''" in done.stderr
    assert "--store needs a path" in log.read_text() and "unknown hook event ''" in log.read_text()


def test_a_busy_store_is_waited_for_one_second_then_given_up(env: dict[str, str], tmp_path: Path) -> None:
    eval_store(tmp_path / "store")
    lock = os.open(tmp_path / "store" / ".git" / "memory-mcp.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        start = time.monotonic()
        done = hook(env, "UserPromptSubmit", common(env, "UserPromptSubmit", prompt="duplicate invoices from stripe"),
                    "--store", str(tmp_path / "store"))
        took = time.monotonic() - start
    finally:
        os.close(lock)
    assert (done.returncode, done.stdout) == (0, "") and took < 5
    assert "Busy" in (Path(env["CLAUDE_PLUGIN_DATA"]) / "state" / "hooks.log").read_text()


def test_session_state_is_pruned_after_seven_days(tmp_path: Path) -> None:
    state = hookstate.SessionState("old", tmp_path)
    state.add(["A"])
    state.save()
    hookstate.SessionState("new", tmp_path).save()
    old = time.time() - 8 * 24 * 3600
    os.utime(state.path, (old, old))
    assert hookstate.prune(tmp_path) == 1
    assert [p.name for p in (tmp_path / "sessions").iterdir()] == ["new.json"]


# ------------------------------------------------------------------ file globs (for the paths: field)
@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("src/billing/**", "src/billing/invoice.py", True),
    ("src/billing/**", "src/billing/deep/er/x.ts", True),
    ("src/billing/*", "src/billing/deep/x.ts", False),
    ("src/billing/*", "src/billing/x.ts", True),
    ("**/*.sql", "migrations/0001.sql", True),
    ("**/*.sql", "top.sql", True),
    ("*.py", "src/a.py", False),
    ("src/**/test_*.py", "src/test_a.py", True),
    ("src/**/test_*.py", "src/a/b/test_a.py", True),
    ("docs/", "docs/a/b.md", True),
    ("config/flags.yaml", "config/flags.yaml", True),
    ("config/flag?.yaml", "config/flags.yaml", True),
    ("config/[ab].yaml", "config/a.yaml", True),
])
def test_glob_match(pattern: str, path: str, matches: bool) -> None:
    assert globs.glob_match(pattern, path) is matches


def test_project_relative_paths_and_glob_checks(tmp_path: Path) -> None:
    assert globs.project_relative(str(tmp_path / "src/billing/models.py"), tmp_path) == "src/billing/models.py"
    assert globs.project_relative("./README.md", tmp_path) == "README.md"
    assert globs.project_relative("/elsewhere/README.md", tmp_path) == "/elsewhere/README.md"
    assert not globs.matches_any(["**/README.md"], "/elsewhere/README.md")  # outside the project: nothing
    assert globs.check([" ./src/** ", "/docs/", "", "src/**"]) == ["src/**", "docs/"]


def test_pre_tool_use_injects_the_memories_about_a_file_once_per_session(env: dict[str, str], tmp_path: Path) -> None:
    from memory_mcp.truth import roots

    # The plugin's way: no flags, the project store found from the project's git root.
    root = roots.project_store(Path(env["PROJECT"]))
    store = Store.open(root)
    billing = store.remember("Invoices are immutable once sent; corrections are credit notes.",
                             title="Invoices are immutable", type="decision", paths=["src/billing/**"]).id
    models = store.remember("Every model has a created_at column in UTC.", title="Models carry created_at",
                            type="fact", paths=["src/*/models.py"]).id
    store.remember("Deploys go out on tags.", title="Deploy on tags", type="fact")  # no paths: never by file
    store.close()
    project = Path(env["PROJECT"])

    def pre(tool: str, file: str, session: str = "s1") -> str:
        return hook(env, "PreToolUse", common(env, "PreToolUse", session, tool_name=tool,
                                              tool_input={"file_path": file}, tool_use_id="t1")).stdout

    out = json.loads(pre("Read", str(project / "src/billing/models.py")))["hookSpecificOutput"]
    assert out["hookEventName"] == "PreToolUse" and "permissionDecision" not in out
    assert set(ID.findall(out["additionalContext"])) == {billing, models}
    assert "Invoices are immutable" in out["additionalContext"]
    assert pre("Edit", str(project / "src/billing/invoice.py")) == ""  # shown once per session
    assert ID.findall(pre("Edit", str(project / "src/billing/invoice.py"), "s2")) == [billing]
    assert pre("Read", str(project / "src/billing/deep/models.py"), "s3").count("[") == 1  # * stays in a folder
    assert pre("Read", str(project / "README.md"), "s4") == ""
    assert pre("Read", "/elsewhere/src/billing/x.py", "s5") == ""
    assert pre("Bash", str(project / "src/billing/x.py"), "s6") == ""  # not a file tool


def test_session_start_hook_does_not_recreate_a_moved_store_empty(env: dict[str, str], tmp_path: Path) -> None:
    # A hook configured with `--store PATH` recreated an empty store at PATH after the store was
    # moved, so the next session saw no memories at all and a second, empty store appeared.
    moved = tmp_path / "moved" / "store"
    done = hook(env, "SessionStart", common(env, "SessionStart", source="startup"), "--store", str(moved))
    assert done.returncode == 0 and done.stdout == ""
    assert not moved.exists() and not moved.parent.exists()


def test_the_plugin_and_the_installer_name_only_the_events_of_the_hook_table(tmp_path: Path) -> None:
    """Hook events were listed in about six places (a tuple, the watchdog table, an if chain, a help
    string, hooks.json, the installer); now one table, which hooks.json and the installer follow."""
    from memory_mcp.adapters.hooks.events import EVENTS

    plugin = json.loads((ROOT / "plugin" / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    assert set(plugin) == set(EVENTS)
    for event, groups in plugin.items():
        assert all(h["command"].endswith(f" hook {event}") for g in groups for h in g["hooks"])
        # The watchdog ends a hook with no output before Claude Code's timeout would discard it.
        assert all(EVENTS[event].watchdog_s < h["timeout"] for g in groups for h in g["hooks"]), event
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    done = subprocess.run([str(EXE), "install", "claude-code", "--scope", "project", "--hook"], cwd=project,
                          capture_output=True, text=True, env={**os.environ, "HOME": str(home)})
    assert done.returncode == 0, done.stderr
    written = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))["hooks"]
    assert set(written) == {"SessionStart", "PreToolUse"}  # what `--hook` installed before the table
    assert set(written) <= set(EVENTS)
