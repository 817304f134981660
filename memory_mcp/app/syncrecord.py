"""The record of a store's syncs: when each ran and why, what came (new memories by author, changed,
deleted), what was refused or could not be reached, and whether a hook has told the person yet.

It lives in the store's git directory (`.git/memory-mcp-sync.json`, the last `KEPT` syncs), never in
the work tree: it is this clone's history with its remote, not a memory, and git never sends it.
`memory-mcp status` shows the latest; the prompt and SessionStart hooks tell each new one once.

Standard library only: the hooks read it on every prompt (one small file per store).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from memory_mcp.truth.identity import common_dir, git_dir

RECORD_FILE = "memory-mcp-sync.json"
KEPT = 50

OK, REFUSED, OFFLINE, FAILED = "ok", "refused", "offline", "failed"


@dataclass
class SyncRecord:
    """One sync of one store, as it ended."""

    at: str  # UTC, ISO 8601
    why: str  # "command", "session start", "after writes", "stop"
    outcome: str  # OK, REFUSED, OFFLINE or FAILED
    pulled: int = 0  # commits
    pushed: int = 0  # commits
    arrived: dict[str, int] = field(default_factory=dict)  # new memory files, by the git author who wrote them
    changed: int = 0  # memory files a teammate changed that were here already
    deleted: int = 0  # memory files here the remote deleted
    conflicts: int = 0  # pairs left for the person to settle
    message: str = ""  # what failed or was refused, in sync's words
    rescue: str = ""  # the rescue refs' prefix, when the sync kept one
    head: str = ""  # the store's commit after it: a Stop hook pushes only when HEAD moved since
    told: bool = False  # a hook has given its news

    def news(self) -> str:
        """What the person should hear about this sync, or "" when it brought nothing."""
        if self.outcome == OFFLINE:
            return ("its remote could not be reached; what was written here is pushed when it can be "
                    "(each session start tries again)")
        if self.outcome in (REFUSED, FAILED):
            return f"its sync {'refused what the remote brings' if self.outcome == REFUSED else 'failed'}: {self.message}"
        parts = []
        if self.arrived:
            total = sum(self.arrived.values())
            by = ", ".join(f"{name} {n}" for name, n in sorted(self.arrived.items(), key=lambda x: (-x[1], x[0]))[:5])
            parts.append(f"{total} new memor{'y' if total == 1 else 'ies'} arrived (by {by})")
        if self.changed:
            parts.append(f"{self.changed} memor{'y was' if self.changed == 1 else 'ies were'} changed by teammates")
        if self.deleted:
            parts.append(f"the remote deleted {self.deleted} (this machine's state before is kept at {self.rescue}/local)")
        if self.conflicts:
            parts.append(f"{self.conflicts} conflict pair(s) wait to be settled (memory-mcp status)")
        return "sync: " + "; ".join(parts) if parts else ""


def last_sync(root: Path) -> dict[str, object]:
    """The latest sync as `memory_status` shows it under `git.last_sync` ({} when none ran)."""
    last = latest(root)
    if last is None:
        return {}
    shown = {k: v for k, v in asdict(last).items() if k not in ("head", "told")}
    return {"last_sync": {**shown, "news": last.news()}}


def record_file(root: Path) -> Path | None:
    """Where the record of the store at `root` lives (its common git directory), or None outside git."""
    own = git_dir(root)
    return common_dir(own) / RECORD_FILE if own is not None else None


def load(root: Path) -> list[SyncRecord]:
    """The syncs recorded, oldest first; none when the file is missing or unreadable."""
    path = record_file(root)
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path is not None else []
    except (OSError, ValueError):
        return []
    known = {f.name for f in fields(SyncRecord)}
    out = []
    for item in data if isinstance(data, list) else []:
        if isinstance(item, dict):
            try:
                out.append(SyncRecord(**{k: v for k, v in item.items() if k in known}))
            except TypeError:
                continue  # a record from a version with other required fields
    return out


def latest(root: Path) -> SyncRecord | None:
    """The last sync recorded, or None."""
    found = load(root)
    return found[-1] if found else None


def add(root: Path, record: SyncRecord) -> None:
    """Append `record`, keeping the last KEPT. A remote still unreachable since the last time told is
    not told again (offline is said once, until a sync gets through)."""
    found = load(root)
    if record.outcome == OFFLINE and found and found[-1].outcome == OFFLINE and found[-1].told:
        record.told = True
    _save(root, [*found, record][-KEPT:])


def take_news(root: Path) -> str:
    """The news of the latest sync not told yet ("" when none), marked told from now on."""
    found = load(root)
    news = found[-1].news() if found and not found[-1].told else ""
    if news:
        found[-1].told = True
        _save(root, found)
    return news


def _save(root: Path, records: list[SyncRecord]) -> None:
    path = record_file(root)
    if path is None:
        return
    tmp = path.with_name(f".{RECORD_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps([asdict(r) for r in records], indent=0), encoding="utf-8")
    os.replace(tmp, path)
