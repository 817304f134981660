"""Recall as of a day: the store as git held it at the end of that day, from an index of its own.

History is made the way it happens: memories written, updated, superseded, moved and purged through
the store, each commit dated by GIT_COMMITTER_DATE (git's own knob)."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from conftest import EXE, git, open_server

from memory_mcp.app import asof
from memory_mcp.app.store import Store, init_store
from memory_mcp.truth.errors import BeforeHistory, InvalidArgument
from memory_mcp.truth.layout import DERIVED, INDEX_FILE


def _on(mp: pytest.MonkeyPatch, day: str) -> None:
    mp.setenv("GIT_COMMITTER_DATE", f"{day}T12:00:00+00:00")


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Store, dict[str, str]]:
    """npm on 09-10, replaced by pnpm on 10-05; a deploy fact edited on 10-20; a note moved into a
    folder on 10-22; a scratch note purged on 10-25."""
    root = tmp_path / "store"
    _on(monkeypatch, "2026-09-01")
    init_store(root)
    s = Store.open(root)
    _on(monkeypatch, "2026-09-10")
    ids = {"npm": s.remember("We use npm for the web workspace packages", type="decision").id,
           "deploy": s.remember("Deploys go through the staging cluster first").id,
           "moved": s.remember("The heron dashboard lives on grafana").id,
           "scratch": s.remember("Scratch note about the quokka migration").id}
    _on(monkeypatch, "2026-10-05")
    ids["pnpm"] = s.remember("We switched to pnpm for the web workspace packages: npm hoisting broke builds",
                             type="decision", supersedes=[ids["npm"]]).id
    _on(monkeypatch, "2026-10-20")
    s.update(ids["deploy"], content="Deploys go through the canary cluster first")
    _on(monkeypatch, "2026-10-22")
    moved = next((root / "memories").rglob("the-heron-dashboard*.md"))
    (root / "memories" / "ops").mkdir()
    moved.rename(root / "memories" / "ops" / moved.name)
    s.recall("heron")  # the call commits the hand move
    _on(monkeypatch, "2026-10-25")
    s.forget(ids["scratch"], mode="archive")
    s.forget(ids["scratch"], mode="purge", confirm=True)
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    return s, ids


def _by_id(s: Store, query: str, day: str) -> dict[str, object]:
    return {h.id: h for h in s.recall(query, as_of=day, include_archived=True).results}


def test_recall_as_of_a_day_answers_with_what_the_store_held_then(history: tuple[Store, dict[str, str]]) -> None:
    s, ids = history
    then = s.recall("package manager web workspace", as_of="2026-09-20")
    assert [h.id for h in then.results] == [ids["npm"]]  # pnpm did not exist yet
    npm = then.results[0]
    assert npm.state == "active" and npm.superseded_by is None  # as it was then
    assert npm.superseded_since and npm.changed_since  # and what happened to it after
    day_of = git(s.root, "log", "--first-parent", "-n1", "--until=2026-09-20T23:59:59+00:00", "--format=%H").strip()
    assert then.as_of_commit == day_of and day_of[:12] in then.coverage.note

    deploy = s.recall("deploys cluster", as_of="2026-10-10").results[0]
    assert "staging" in deploy.excerpt and deploy.changed_since and not deploy.superseded_since
    later = s.recall("package manager web workspace", as_of="2026-10-10").results
    assert [h.id for h in later] == [ids["pnpm"]] and later[0].changed_since is None

    # The live index is untouched: today's text, today's states.
    live = s.recall("deploys cluster").results[0]
    assert "canary" in live.excerpt and live.changed_since is None
    assert (s.root / DERIVED / INDEX_FILE).is_file()


def test_a_memory_moved_or_purged_since_says_when_from_git(history: tuple[Store, dict[str, str]]) -> None:
    s, ids = history
    scratch = _by_id(s, "quokka migration", "2026-10-23")[ids["scratch"]]
    assert scratch.changed_since == "2026-10-25T12:00:00+00:00"  # the purge's commit
    # Moved into a folder on 10-22: the same memory then and now, found once, not a duplicate of itself.
    heron = s.recall("heron dashboard", as_of="2026-10-21")
    assert [h.id for h in heron.results] == [ids["moved"]] and heron.coverage.unindexed == 0
    assert not heron.results[0].path.startswith("memories/ops/")
    assert s.recall("heron dashboard", as_of="2026-10-23").results[0].path.startswith("memories/ops/")


def test_as_of_refuses_a_malformed_an_impossible_a_future_and_a_too_early_day(
        history: tuple[Store, dict[str, str]]) -> None:
    s, _ = history
    for bad, says in [("2026/10/01", "YYYY-MM-DD"), ("yesterday", "YYYY-MM-DD"), ("2026-02-30", "calendar"),
                      ((datetime.now(UTC) + timedelta(days=2)).date().isoformat(), "future")]:
        with pytest.raises(InvalidArgument, match=says):
            s.recall("npm", as_of=bad)
    with pytest.raises(BeforeHistory, match="no commit on or before 2026-08-31"):
        s.recall("npm", as_of="2026-08-31")
    # Today is a day like any other: the last commit answers.
    today = s.recall("package manager web workspace", as_of=datetime.now(UTC).date().isoformat())
    assert today.as_of_commit == git(s.root, "rev-parse", "HEAD").strip()


def test_each_commit_is_indexed_once_and_only_the_last_few_are_kept(history: tuple[Store, dict[str, str]]) -> None:
    s, _ = history
    folder = s.root / DERIVED / asof.FOLDER
    s.recall("npm", as_of="2026-09-10")
    first = next(folder.glob("*.sqlite3")).stat().st_ino
    s.recall("deploys", as_of="2026-09-10")
    assert next(folder.glob("*.sqlite3")).stat().st_ino == first  # the repeat reused it
    for day in ["2026-10-05", "2026-10-20", "2026-10-22", "2026-10-25"]:
        s.recall("npm", as_of=day)
    assert len(list(folder.glob("*.sqlite3"))) == asof.KEEP
    assert not list(folder.glob("*.building*"))


def test_recall_as_of_from_the_command_line(history: tuple[Store, dict[str, str]], tmp_path: Path) -> None:
    s, _ = history
    env = {"HOME": str(tmp_path), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    ok = subprocess.run([str(EXE), "recall", "--store", str(s.root), "--as-of", "2026-09-20", "web", "workspace"],
                        capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "We use npm" in ok.stdout and "superseded since: 2026-" in ok.stdout and "as of 2026-09-20" in ok.stdout
    bad = subprocess.run([str(EXE), "recall", "--store", str(s.root), "--as-of", "2026-13-01", "npm"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode != 0 and "[invalid_argument]" in bad.stderr + bad.stdout


@pytest.mark.anyio
async def test_memory_recall_as_of_over_stdio(history: tuple[Store, dict[str, str]]) -> None:
    s, ids = history
    s.close()
    async with open_server(s.root) as c:
        r = await c.call("memory_recall", query="package manager web workspace", as_of="2026-09-20")
        hit = r["results"][0]
        assert hit["id"] == ids["npm"] and hit["superseded_since"] and hit["changed_since"]
        assert r["as_of_commit"]
        assert "[before_history]" in await c.error("memory_recall", query="npm", as_of="2026-08-01")
