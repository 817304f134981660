"""Reads of a store's index as it is, for the Claude Code hooks: no store lock, no git, no reconcile.

A hook is a new process on every prompt and must answer in about 250 ms. Opening the store imports
the session (git, YAML, the credential rules) and its call reconciles, commits hand edits and
records the recall: more than that budget at 10,000 memories. A read here is answered only when no
memory file was added, removed or renamed since the index's last walk (`reconcile.unchanged_since_walk`:
one stat per folder, not per file; an edit in place reaches the next tool call instead); otherwise it
returns None and the caller takes the store's own path, which reconciles first. Nothing here
writes: a hook's injection is not counted as a recall. The index is read where the store's session
keeps it (`layout.index_path`: the cache folder for a store this user cannot write).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from memory_mcp.app import authorship, provenance
from memory_mcp.app.scopes import merged_digest
from memory_mcp.index import origin, reconcile
from memory_mcp.index.db import Index
from memory_mcp.recall import overview, ranking, search
from memory_mcp.truth.dictionary import DICTIONARY, Dictionary
from memory_mcp.truth.layout import claim_path, index_path
from memory_mcp.truth.recall import Hit, Recall


def recall(roots: dict[str, Path], opts: Recall) -> list[Hit] | None:
    """The hits of `opts` over the stores of `roots` (scope name -> root, read in that order, the
    first store's hits first, within one `limit`), each named by its scope when there are several.
    None when any index is missing, from another version, or behind its files. A file recall marks
    the memories whose file changed since they were written (app/staleness.py)."""
    hits: list[Hit] = []
    with authorship.Reader() as reader:
        more = reader.rejected_count()  # rejected memories are left out: ask for that many more
        for scope, root in roots.items():
            left = opts.limit - len(hits)
            if left <= 0:
                break
            with _current(root, reader) as found:
                if found is None:
                    return None
                index, dictionary = found
                names, _ = dictionary.normalise_all(list(opts.entities))
                got, _ = search.run(index, replace(opts, limit=left + more), search.row_filter(opts, names))
                got = provenance.annotate(index, got, reader)[:left]
                if opts.file:
                    from memory_mcp.app import staleness  # the file hook's only: it may start git

                    got = staleness.mark_hits(root, index, got, opts)
            hits += [replace(h, scope=scope) for h in got] if len(roots) > 1 else got
    return hits


def digest(roots: dict[str, Path], limit: int = ranking.DIGEST_LIMIT) -> list[Hit] | None:
    """The session digest over the stores of `roots`, as `Scopes.digest` gives it; None when any
    index is missing, from another version, or behind its files."""
    lists: dict[str, list[Hit]] = {}
    now = datetime.now(UTC)
    with authorship.Reader() as reader:
        for scope, root in roots.items():
            with _current(root, reader) as found:
                if found is None:
                    return None
                rows = overview.digest(found[0].conn, limit, now, provenance.ranker(reader))
                lists[scope] = provenance.annotate(found[0], [search.hit(r, 1.0) for r in rows], reader)
    return merged_digest(lists)


def other_version(roots: dict[str, Path]) -> Path | None:
    """The first of `roots` whose index is another version's (an upgrade, or two versions sharing the
    store) or was not built on this machine for this store (`origin`: it came with the store): only
    a rebuild of every memory brings it up to date (seconds at 10,000), which a prompt-time hook
    must not wait for. A missing index is not one: a store's first reader builds it."""
    for root in roots.values():
        path = index_path(root)
        index = Index.open_existing(path) if path.is_file() else None
        if index is None and path.is_file():
            return root
        if index is not None:
            ours = origin.is_ours(index, root, claim_path(root))
            index.close()
            if not ours:
                return root
    return None


@contextmanager
def _current(root: Path, reader: authorship.Reader) -> Iterator[tuple[Index, Dictionary] | None]:
    """The store's index and dictionary when the index is this version's, was built on this machine
    for this store (`origin`), no memory file was added, removed or renamed since its last walk, and
    this version has seen the store (its baseline is taken: `provenance.refresh`); else None. The
    index is closed on leaving."""
    index = Index.open_existing(index_path(root)) if reader.seen(root) else None
    if index is None:
        yield None
        return
    if not origin.is_ours(index, root, claim_path(root)):
        index.close()
        yield None
        return
    try:
        dictionary = Dictionary.load(root / DICTIONARY)
        yield (index, dictionary) if reconcile.unchanged_since_walk(root, index, dictionary) else None
    finally:
        index.close()
