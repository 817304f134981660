"""What the local page shows about the store as a whole: insights (added per week by type, who
wrote what, pairs that read alike), prune candidates, and where it stands with its git remote."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from memory_mcp.app import syncrecord
from memory_mcp.app.session import Session
from memory_mcp.index import timeline as listing
from memory_mcp.recall import overview
from memory_mcp.truth.results import AuthorCount, Insights, Listed, PendingConflict, PruneList, SyncStatus
from memory_mcp.vcs.repo import GitFailed
from memory_mcp.vcs.sync import target

ALIKE_MAX = 50
PRUNE_LISTED = 50


def insights(session: Session, weeks: int = 26) -> Insights:
    """Counts, memories added per week by type over the last `weeks`, authors and clients, alike pairs."""
    since = (date.today() - timedelta(weeks=weeks)).isoformat()
    with session.call() as index:
        conn = index.conn
        per: dict[str, dict[str, int]] = {}
        for week, kind, n in listing.added_per_week(conn, since):
            per.setdefault(week, {})[kind] = n
        pairs = []
        for a, b in listing.alike(conn, ALIKE_MAX):
            ra, rb = index.get(a), index.get(b)
            if ra and rb:
                pairs.append(PendingConflict(a, b, ra.title, rb.title, ""))
        return Insights(total=index.count(), counts=overview.tallies(conn), weeks=sorted(per.items()),
                        authors=[AuthorCount(*row) for row in listing.by_author(conn)], alike=pairs,
                        clients=listing.by_client(conn))


def prune(session: Session, days: int = 90) -> PruneList:
    """Active memories neither changed nor recalled in `days` days."""
    cutoff = (datetime.now(UTC) - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with session.call() as index:
        total, rows = listing.never_recalled(index.conn, cutoff, PRUNE_LISTED)
    return PruneList(days=days, total=total,
                     listed=[Listed(r.id, r.path, r.title, f"updated {r.updated or '?'}") for r in rows])


def sync_status(session: Session) -> SyncStatus | None:
    """Ahead and behind the remote branch as last fetched (no network), the last recorded sync and
    the last one that refused what the remote brought; None for a store without a remote."""
    history = session.history
    if not history.remote_names() or history.branch() is None:
        return None
    remote, branch = target(history)
    try:
        theirs: str | None = history.resolve_commit(f"refs/remotes/{remote}/{branch}")
    except GitFailed:
        theirs = None  # never fetched (or the remote has no such branch yet)
    ahead = history.count_commits(f"{theirs}..HEAD" if theirs else "HEAD") if history.head_commit() else 0
    behind = history.count_commits(f"HEAD..{theirs}") if theirs and history.head_commit() else 0
    records = syncrecord.load(session.root)
    last = records[-1] if records else None
    refused = next((r for r in reversed(records[:-1]) if r.outcome == syncrecord.REFUSED), None)
    return SyncStatus(remote=remote, branch=branch, ahead=ahead, behind=behind, fetched=theirs is not None,
                      last_at=last.at if last else "", last_outcome=last.outcome if last else "",
                      last_news=(last.news() or last.message) if last else "",
                      refused=f"{refused.at}: {refused.message}" if refused else "")
