"""A store for the local page's tests, its browser tests and its screenshots: ordinary memories,
hostile ones (markup and fence-breaking text), an open conflict pair and a teammate's memory the
person has not reviewed. Built through the facade and real git."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from memory_mcp.app.store import Store
from memory_mcp.truth.ulids import new_ulid

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
