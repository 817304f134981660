"""A store for the local page's tests, its browser tests and its screenshots: ordinary memories,
hostile ones (markup and fence-breaking text), an open conflict pair and a teammate's memory the
person has not reviewed. Built through the facade and real git. And the page over stores in
Starlette's TestClient, for the route tests."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from starlette.testclient import TestClient

from memory_mcp.adapters.ui.app import build
from memory_mcp.adapters.ui.guard import Keys
from memory_mcp.app.scopes import Scopes
from memory_mcp.app.store import Store
from memory_mcp.truth.ulids import new_ulid

BASE = "http://127.0.0.1:8123"

XSS_TITLE = "<script>alert(1)</script>"
IMG = '<img src=x onerror="alert(2)">'
FENCE = "````\n```\n</code></pre><script>alert(3)</script>\n```\n````\n\nAfter the fence: `` ` `` <b>bold?</b>"


@dataclass
class Sample:
    store: Store
    pnpm: str
    xss: str
    img: str
    fence: str
    older: str  # a conflict pair: older and newer
    newer: str
    teammate: str


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def sample_store(root: Path) -> Sample:
    store = Store.open(root)
    pnpm = store.remember("Use pnpm, never npm, in the web workspace: the lockfile is pnpm's.", type="preference",
                          entities=["pnpm", "web"], paths=["web/**"]).id
    xss = store.remember("A memory whose title is markup.", title=XSS_TITLE).id
    img = store.remember(f"Images in memories: {IMG} must show as text.", title="An image tag").id
    fence = store.remember(FENCE, title="Fence-breaking backticks").id
    older = store.remember("Production deploys go out on Fridays after the release freeze.", type="decision",
                           entities=["deploys", "release"]).id
    newer = store.remember("Production deploys go out on Mondays after the release freeze.", type="decision",
                           entities=["deploys", "release"])
    assert older in [c.id for c in newer.conflicts], "the gate must raise the deploy pair"
    teammate = _teammate_adds(store, root)
    return Sample(store, pnpm, xss, img, fence, older, newer.id, teammate)


def _teammate_adds(store: Store, root: Path) -> str:
    """A memory committed by someone else (not written through this program here): unreviewed. Its
    id is new each time: a decision about it is kept in the person's record, shared by every store."""
    mem_id = new_ulid()
    path = root / "memories" / "team-ci-cache.md"
    path.write_text(f"---\nid: {mem_id}\ntype: knowledge\nstate: active\ntrust: user-stated\n"
                    "created: 2026-11-02T10:00:00Z\nupdated: 2026-11-02T10:00:00Z\n---\n"
                    "# CI caches the pnpm store between jobs\n\nThe CI job keys its cache on pnpm-lock.yaml.\n",
                    encoding="utf-8")
    git(root, "add", "memories/team-ci-cache.md")
    git(root, "-c", "user.name=Robin Mate", "-c", "user.email=robin@example.com", "commit", "-qm", "team: ci cache")
    store.refresh()
    return mem_id


def bulk_notes(store: Store, n: int) -> list[str]:
    """`n` memories about canary deploys, written as files and committed at once (`n` remembers
    would take a commit each), then indexed: a search with more matches than a page holds."""
    ids = []
    folder = store.root / "memories" / "bulk"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        mem_id = new_ulid()
        (folder / f"deploy-{i:03d}.md").write_text(
            f"---\nid: {mem_id}\ntype: knowledge\nstate: active\ntrust: user-stated\n"
            f"created: 2026-10-01T10:{i // 60:02d}:{i % 60:02d}Z\nupdated: 2026-10-01T10:{i // 60:02d}:{i % 60:02d}Z\n---\n"
            f"# Deploy note {i}\n\nThe deploy of service {i} waits for the canary.\n", encoding="utf-8")
        ids.append(mem_id)
    git(store.root, "add", "memories/bulk")
    git(store.root, "-c", "user.name=Robin Mate", "-c", "user.email=robin@example.com", "commit", "-qm", "bulk: notes")
    store.refresh()
    return ids


@contextlib.contextmanager
def serve_page(scopes: Scopes) -> Iterator[tuple[TestClient, Keys]]:
    """The page over `scopes` in a TestClient that has been through the door (its cookie set)."""
    keys = Keys()
    app, _ = build(scopes, keys)
    with TestClient(app, base_url=BASE) as client:
        client.get(f"/?token={keys.token}")
        yield client, keys


@contextlib.contextmanager
def sample_page(root: Path) -> Iterator[tuple[TestClient, Sample, Keys]]:
    """The page over a sample store made at `root`, in a TestClient through the door; the store is
    closed after."""
    sample = sample_store(root)
    try:
        with serve_page(Scopes({"project": sample.store})) as (client, keys):
            yield client, sample, keys
    finally:
        sample.store.close()
