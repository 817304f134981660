"""What the derived index holds: its tables, the `Row` a memory becomes, and the `RowFilter` a
search applies in SQL. `index.Index` runs the statements; this module only defines them."""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import NamedTuple

from memory_mcp.index import termfreq, textproc
from memory_mcp.truth.lifecycle import WITHHOLD_AT
from memory_mcp.truth.model import FIELDS, FieldSpec, Memory, body_sha, content_key, text_key

# --- FTS table definitions (tokenizers and bm25 column weights) ---
# Title weight 1, not 10: the title is also the body's first line (compose_body), so it already
# counts twice; 10 over-rewarded the first 120 characters (LoCoMo R@5 56.0 -> 57.4, XQuAD ru R@1
# 0.899 -> 0.914 on title weight 10 -> 1; docs/recall-eval.md).
FTS_TABLES = {
    "fts_word": ("(title, body, entities, tokenize = 'unicode61 remove_diacritics 2')", (1.0, 1.0, 2.0)),
    "fts_stem": ("(title, body, tokenize = 'unicode61 remove_diacritics 2')", (1.0, 1.0)),
    "fts_tri": ("(title, body, entities, tokenize = 'trigram')", (1.0, 1.0, 2.0)),
}
# --- end of FTS table definitions ---

_SCHEMA_TEMPLATE = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, sha TEXT NOT NULL,
    error TEXT, ctime_ns INTEGER NOT NULL DEFAULT 0, ino INTEGER NOT NULL DEFAULT 0,
    blob TEXT NOT NULL DEFAULT ''
);
-- Who wrote each version of a memory file: the git author and subject of the first commit that holds
-- the blob, filled from one `git log` over the commits since the last one read (app/provenance.py).
-- Shown beside the memory, never trusted: anyone can commit under any name.
CREATE TABLE IF NOT EXISTS authors (blob TEXT PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL,
    date TEXT NOT NULL, subject TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
{memories_table};
CREATE TABLE IF NOT EXISTS entities (memory_rowid INTEGER NOT NULL, entity TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS entities_by_name ON entities(entity);
CREATE INDEX IF NOT EXISTS entities_by_row ON entities(memory_rowid);
CREATE INDEX IF NOT EXISTS memories_by_content ON memories(content_key);
CREATE INDEX IF NOT EXISTS memories_by_text ON memories(text_key);
-- Recall's neighbours in time (neighbours.py): the memories written just before and after a match
-- in its thread (the session that wrote it, else its source), each one indexed step away.
CREATE INDEX IF NOT EXISTS memories_by_thread ON memories(thread, created, id);
-- The local page's timeline (timeline.py), newest change first a page at a time: read in index
-- order, so a page deep in 100,000 memories skips entries instead of sorting every row.
CREATE INDEX IF NOT EXISTS memories_by_updated ON memories(updated);
CREATE TABLE IF NOT EXISTS secret_flags (path TEXT NOT NULL, kind TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS secret_flags_by_path ON secret_flags(path);
-- What in each file tries to steer the model (truth/injection.py): kind, line and our reason, never the text.
CREATE TABLE IF NOT EXISTS flagged (path TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL,
    reason TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS flagged_by_path ON flagged(path);
-- Every recall reports coverage (files in error): a partial index holds just those rows.
CREATE INDEX IF NOT EXISTS files_in_error ON files(path) WHERE error IS NOT NULL;
-- Every recall also counts the open conflict pairs: `pairs` keeps them as rows change, from each
-- memory's conflicts_with links (by the other side's id: it may be indexed later, or never).
CREATE TABLE IF NOT EXISTS conflict_links (memory_rowid INTEGER NOT NULL, other_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS conflict_links_by_row ON conflict_links(memory_rowid);
CREATE INDEX IF NOT EXISTS conflict_links_by_other ON conflict_links(other_id);
CREATE TABLE IF NOT EXISTS open_pairs (lo TEXT NOT NULL, hi TEXT NOT NULL, PRIMARY KEY (lo, hi)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS open_pairs_by_hi ON open_pairs(hi);
-- How many memories hold each stemmed term (`termfreq`): the conflict gate's rarity weights.
CREATE TABLE IF NOT EXISTS term_df (term TEXT PRIMARY KEY, doc INTEGER NOT NULL) WITHOUT ROWID;
-- The few rows the usual recall leaves out (not active, or withheld by feedback): its searches
-- exclude them through this index instead of looking up every match's row (RowFilter.against).
CREATE INDEX IF NOT EXISTS memories_hidden ON memories(rowid) WHERE {HIDDEN};
-- The optional dense signal (vectors.py): one int8 vector per body and model, keyed by content so
-- an unchanged memory is never embedded twice and a rebuild of the other tables keeps them.
CREATE TABLE IF NOT EXISTS vectors (
    content_key TEXT NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (content_key, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS usage (
    id TEXT PRIMARY KEY, recall_count INTEGER NOT NULL DEFAULT 0, last_recalled TEXT
);
-- memory_status's short lists (overview.py), each read through a partial index of just its rows, so
-- a status costs what it lists rather than a scan of every memory.
CREATE INDEX IF NOT EXISTS memories_review ON memories(rowid) WHERE {REVIEW};
CREATE INDEX IF NOT EXISTS memories_episodes ON memories(updated) WHERE {EPISODES};
CREATE INDEX IF NOT EXISTS memories_withheld ON memories(rowid) WHERE {WITHHELD};
CREATE INDEX IF NOT EXISTS memories_provisional ON memories(rowid) WHERE {PROVISIONAL};
-- memory_status's counts by state, type and trust, kept as rows come and go, so a status reads a
-- few rows instead of every memory. Not triggers: a trigger on `memories` turns the DELETE of a
-- rebuild into row-by-row deletes.
CREATE TABLE IF NOT EXISTS tallies (
    field TEXT NOT NULL, value TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (field, value)
) WITHOUT ROWID;
"""


class FileStat(NamedTuple):
    """What the stat gate compares, plus the content hash of the bytes read. The change time and
    the inode are compared as git compares them: a same-size edit whose mtime was put back
    (`touch -r`, an editor restoring it) still moves ctime, and a file replaced by another has a
    new inode. Zero where no file was stat'ed (an error entry, an as-of index built from git).

    A named tuple, not a dataclass: every call loads one per file, and at 10,000 files building
    frozen dataclasses cost more than the stat calls they are compared with."""

    mtime_ns: int
    size: int
    sha: str
    ctime_ns: int = 0
    ino: int = 0
    blob: str = ""  # the git blob id of the bytes (`standing.blob_sha`): the version decisions are about


@dataclass(frozen=True)
class Row:
    """A memory as the index holds it: enough to rank, filter and list without opening the file."""

    rowid: int
    id: str
    path: str
    title: str
    excerpt: str
    type: str
    state: str
    trust: str
    entities: list[str]
    source: str
    created: str | None
    updated: str | None
    review_after: str | None
    superseded_by: str | None
    supersedes: list[str]
    conflicts_with: list[str]
    distinct_from: list[str]
    deprecated_reason: str | None
    feedback: float
    paths: list[str]
    written_by: Mapping[str, str]  # read-only: rows share one decoded copy per distinct value (`_json_map`)
    content_key: str
    body_sha: str
    provisional: bool
    body_chars: int
    text_key: str
    thread: str


@dataclass(frozen=True)
class RankFacts:
    """What the score formula and the list's order read of a row (`Row` has the same attributes):
    a query's candidates are scored on these, and only the few that can be shown are read whole."""

    rowid: int
    id: str
    type: str
    state: str
    trust: str
    created: str | None
    updated: str | None
    feedback: float


RANK_COLUMNS = ", ".join(f"m.{name}" for name in RankFacts.__dataclass_fields__)


# The columns of `memories` that are not frontmatter fields: what the index derives from the file.
_DERIVED_COLUMNS = {
    "rowid": "INTEGER PRIMARY KEY", "path": "TEXT NOT NULL UNIQUE", "title": "TEXT NOT NULL",
    "excerpt": "TEXT NOT NULL", "content_key": "TEXT NOT NULL", "body_sha": "TEXT NOT NULL",
    "provisional": "INTEGER NOT NULL", "body_chars": "INTEGER NOT NULL", "text_key": "TEXT NOT NULL",
    # What neighbours in time group by: the session of `written_by`, else `source` ("" for neither).
    "thread": "TEXT NOT NULL",
}
INDEXED: dict[str, FieldSpec] = {f.name: f for f in FIELDS if f.indexed}
# Row's attributes are the table's columns, in its order: each indexed frontmatter field (its SQL
# type from its kind) and each derived column. Checked here, so a field added to Memory without its
# Row attribute fails on import rather than on the first query.
_COLUMNS = tuple(Row.__dataclass_fields__)
if set(_COLUMNS) != {*_DERIVED_COLUMNS, *INDEXED}:
    raise TypeError(f"schema.Row must have one attribute per indexed frontmatter field and derived column; "
                    f"missing {sorted({*_DERIVED_COLUMNS, *INDEXED} - set(_COLUMNS))}, "
                    f"unknown {sorted(set(_COLUMNS) - {*_DERIVED_COLUMNS, *INDEXED})}")


def _column_type(f: FieldSpec) -> str:
    if f.kind == "id":
        return "TEXT NOT NULL UNIQUE"
    if f.kind == "number":
        return "REAL NOT NULL"
    # Lists and maps are stored as JSON text ('[]', '{}' when empty); text with no default may be NULL.
    return "TEXT" if f.kind in ("text", "date") and f.default is None else "TEXT NOT NULL"


# The columns memory_status counts (the `tallies` table, kept by `index.Index` as rows come and go).
TALLIED = ("state", "type", "trust")


# The memories a recall leaves out unless asked (RowFilter.against); one literal, so the partial
# index `memories_hidden` matches the query's condition exactly.
HIDDEN = f"state != 'active' OR feedback <= {WITHHOLD_AT}"
# The conditions of those partial indexes, literal so that a query repeating one uses its index.
REVIEW = "state = 'active' AND coalesce(review_after, '') != ''"
EPISODES = "state = 'active' AND type = 'episode'"
WITHHELD = f"feedback <= {WITHHOLD_AT}"
PROVISIONAL = "provisional = 1"
SCHEMA = _SCHEMA_TEMPLATE.format(HIDDEN=HIDDEN, REVIEW=REVIEW, EPISODES=EPISODES, WITHHELD=WITHHELD,
                                 PROVISIONAL=PROVISIONAL, memories_table="CREATE TABLE IF NOT EXISTS memories (\n    " + ", ".join(
    f"{name} {_DERIVED_COLUMNS[name] if name in _DERIVED_COLUMNS else _column_type(INDEXED[name])}"
    for name in _COLUMNS) + "\n)")
ROW_COLUMNS = ", ".join(f"m.{name}" for name in _COLUMNS)
# An index whose schema_version differs is rebuilt from the files when opened. The version follows
# the table definitions and textproc's terms (what fts_stem holds) by itself, so a new column needs
# no bump; bump the leading number when what a column holds changes but its definition does not
# (4: `open_pairs` leaves out archived memories).
SCHEMA_VERSION = "4.{}.{}".format(textproc.TERMS_VERSION, hashlib.sha256(
    (SCHEMA + repr(sorted((name, spec) for name, (spec, _) in FTS_TABLES.items()))).encode()).hexdigest()[:8])
INSERT_COLUMNS = tuple(name for name in _COLUMNS if name != "rowid")
INSERT = (f"INSERT INTO memories({', '.join(INSERT_COLUMNS)})"
           f" VALUES ({','.join('?' * len(INSERT_COLUMNS))})")
# Where in a selected row the values stored as JSON lists and maps and as 0/1 are, to turn them back.
_LISTS_AT = tuple(i for i, name in enumerate(_COLUMNS) if name in INDEXED and INDEXED[name].kind == "list")
_MAPS_AT = tuple(i for i, name in enumerate(_COLUMNS) if name in INDEXED and INDEXED[name].kind == "map")
_PROVISIONAL_AT = _COLUMNS.index("provisional")


def is_hidden(state: object, feedback: object) -> bool:
    """`HIDDEN` for the values of one row (the index keeps the set of such rows as it writes them)."""
    return state != "active" or (isinstance(feedback, int | float) and feedback <= WITHHOLD_AT)


def to_row(r: sqlite3.Row | tuple[object, ...]) -> Row:
    values = list(r)
    for i in _LISTS_AT:
        values[i] = _json_list(values[i])
    for i in _MAPS_AT:
        values[i] = _json_map(values[i])
    values[_PROVISIONAL_AT] = bool(values[_PROVISIONAL_AT])
    return Row(*values)


def column_value(f: FieldSpec, value: object) -> object:
    """A frontmatter value as its column holds it."""
    if f.kind == "enum":
        return value.value  # type: ignore[attr-defined]
    if f.kind == "list":
        # Most lists are empty: json.dumps was a seventh of deriving a memory (50,000 calls a 10k reindex).
        return json.dumps(value, ensure_ascii=False) if value else "[]"
    if f.kind == "map":
        return json.dumps(value, ensure_ascii=False) if value else "{}"
    return value


@dataclass(frozen=True)
class Derived:
    """What the index keeps of a memory besides its path and entities (the entities depend on
    dictionary.md): derived from the file alone, so a worker process can make it (`bulkread`)."""

    values: dict[str, object]  # the `memories` columns but path and entities
    stems: tuple[str, str]  # the stemmed title and body of the `fts_stem` table
    terms: list[str]  # the distinct terms of `stems`, which `term_df` counts


def derive(mem: Memory) -> Derived:
    """The index's view of `mem` (see `Derived`)."""
    title, body = mem.title, mem.body
    values = {name: column_value(f, getattr(mem, name)) for name, f in INDEXED.items()}
    values.update(title=title, excerpt=mem.excerpt, content_key=content_key(body), body_sha=body_sha(body),
                  provisional=int(mem.provisional), body_chars=len(body), text_key=text_key(body),
                  thread=mem.written_by.get("session") or mem.source)
    stems = (textproc.stem_text(title), textproc.stem_text(body))
    return Derived(values, stems, termfreq.terms_of(*stems))


@dataclass(frozen=True)
class Holder:
    """What the index holds at a path or under an id, as far as indexing a file there needs to know."""

    rowid: int
    id: str
    path: str
    state: str
    body_sha: str


@functools.lru_cache(maxsize=2048)
def _json_map(text: str) -> Mapping[str, str]:
    # One decoding per distinct value, shared read-only: the memories of a session carry the same
    # `written_by`, and a recall reads 24 whole rows (decoding each cost about 60 us of a recall at 1,000).
    return MappingProxyType(json.loads(text))


def _json_list(text: str) -> list[str]:
    # Most of these lists are empty; the conflict gate builds thousands of rows at 100k memories.
    return [] if text == "[]" else json.loads(text)


@dataclass(frozen=True)
class RowFilter:
    """Which memories a search may return, applied in SQL before ranking (so no search has to be
    re-run deeper when filters leave too few)."""

    states: frozenset[str]
    types: frozenset[str] = frozenset()
    entities: tuple[str, ...] = ()  # a memory must carry at least one of these (any case)
    withhold_at: float | None = None  # feedback at or below this is left out
    with_paths: bool = False  # only memories with `paths:` globs (file-aware memories)

    def sql(self) -> tuple[str, list[object]]:
        """The conditions over `memories m`, each prefixed with AND, and their arguments."""
        parts: list[str] = []
        args: list[object] = []
        for column, values in (("state", self.states), ("type", self.types)):
            if values:
                parts.append(f"m.{column} IN ({','.join('?' * len(values))})")
                args += sorted(values)
        if self.entities:
            names = list(dict.fromkeys(e.lower() for e in self.entities))
            # Driven from the entity's own index: a correlated EXISTS tested all 10,000 rows of a
            # listing one by one (50 ms for an entity no memory carries, against 14-20 at 7e4e5f0).
            parts.append(f"m.rowid IN (SELECT e.memory_rowid FROM entities e WHERE e.entity IN ({','.join('?' * len(names))}))")
            args += names
        if self.withhold_at is not None:
            parts.append("m.feedback > ?")
            args.append(self.withhold_at)
        if self.with_paths:
            parts.append("m.paths != '[]'")
        return "".join(f" AND {p}" for p in parts), args

    def hides_only(self) -> bool:
        """Whether this is the usual recall's filter: active memories not withheld, of any type and
        entity, so a search may rank first and drop the `HIDDEN` rows after (`Index.fts`)."""
        return (not self.types and not self.entities and not self.with_paths and self.states == {"active"}
                and self.withhold_at == WITHHOLD_AT)

    def against(self, rowid: str) -> tuple[str, str, list[object]]:
        """(a JOIN, conditions each prefixed with AND, their arguments) that restrict a search over a
        table whose memory rowid is the column `rowid`. The usual recall (active, not withheld, any
        type, any or some entities) needs no join: it excludes the few hidden rows through the
        `memories_hidden` index; a join looks up every match's row (+27-36% on the perf harness's stem
        queries at 10,000 memories). Without entities, `Index.fts` drops hidden rows itself first."""
        if replace(self, entities=()).hides_only():
            cond = f" AND {rowid} NOT IN (SELECT rowid FROM memories WHERE {HIDDEN})"
            if not self.entities:
                return "", cond, []
            names = list(dict.fromkeys(e.lower() for e in self.entities))
            return "", cond + (f" AND EXISTS (SELECT 1 FROM entities e WHERE e.memory_rowid = {rowid}"
                               f" AND e.entity IN ({','.join('?' * len(names))}))"), list(names)
        cond, args = self.sql()
        return f" JOIN memories m ON m.rowid = {rowid}", cond, args
