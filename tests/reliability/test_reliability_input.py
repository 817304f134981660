"""Hostile tool input over stdio: paths out of the store, ids that are not ULIDs, oversized fields,
malformed arguments. Every refusal is a tool error carrying a stable [code] (limits named), nothing
is written, and the same server process keeps answering afterwards."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import Session, commit_count

pytestmark = pytest.mark.anyio

CODE = re.compile(r"\[[a-z_]+\]")
GOOD_ID = "01JD2K3A9FZQ4W8XVBH5T6N7RM"


def tree(store: Path) -> list[tuple[str, bytes]]:
    return sorted((str(p.relative_to(store)), p.read_bytes()) for p in (store / "memories").rglob("*") if p.is_file())


# (tool, arguments, code expected, words the error must contain)
REFUSALS: list[tuple[str, dict, str, list[str]]] = [
    # paths
    ("memory_read", {"path": "../../etc/passwd"}, "outside_store", []),
    ("memory_read", {"path": "/etc/passwd"}, "outside_store", []),
    ("memory_read", {"path": "memories/../../outside.md"}, "outside_store", []),
    ("memory_read", {"path": "memories/../.git/config"}, "not_found", []),
    ("memory_read", {"path": "memories/x.md\x00../../etc/passwd"}, "invalid_argument", ["NUL"]),
    ("memory_read", {"path": "memories/" + "a" * 5000 + ".md"}, "not_found", []),
    ("memory_read", {}, "invalid_argument", []),
    # ids
    ("memory_read", {"id": "../../etc/passwd"}, "invalid_id", ["ULID"]),
    ("memory_read", {"id": "01JD2K3A9FZQ4W8XVBH5T6N7R"}, "invalid_id", ["ULID"]),
    ("memory_read", {"id": "01JD2K3A9FZQ4W8XVBH5T6N7RU"}, "invalid_id", ["ULID"]),
    ("memory_update", {"id": "x' OR 1=1 --", "source": "s"}, "invalid_id", ["ULID"]),
    ("memory_forget", {"id": "*"}, "invalid_id", ["ULID"]),
    ("memory_feedback", {"id": "", "helpful": True}, "invalid_id", ["ULID"]),
    ("memory_resolve", {"id": GOOD_ID, "other_id": "%", "decision": "keep_both"}, "invalid_id", ["ULID"]),
    ("memory_remember", {"content": "valid text", "supersedes": ["../x"]}, "invalid_id", ["ULID"]),
    ("memory_read", {"id": GOOD_ID}, "not_found", ["memory_recall"]),
    # sizes, with the limit named
    ("memory_remember", {"content": "x" * 64_001}, "too_large", ["64,000"]),
    ("memory_remember", {"content": "ok", "title": "t" * 201}, "too_large", ["200"]),
    ("memory_remember", {"content": "ok", "entities": [f"e{i}" for i in range(33)]}, "too_large", ["32"]),
    ("memory_remember", {"content": "ok", "entities": ["e" * 65]}, "too_large", ["64"]),
    ("memory_remember", {"content": "ok", "source": "s" * 501}, "too_large", ["500"]),
    ("memory_remember", {"content": "w " * 1_000_000}, "too_large", ["64,000"]),
    ("memory_forget", {"id": GOOD_ID, "mode": "deprecate", "reason": "r" * 501}, "too_large", ["500"]),
    ("memory_feedback", {"id": GOOD_ID, "helpful": False, "note": "n" * 501}, "too_large", ["500"]),
    # malformed arguments: refused by the schema, with a code and without echoing the value
    ("memory_remember", {"content": 42}, "invalid_argument", ["content"]),
    ("memory_remember", {"content": "ok", "type": "rumour"}, "invalid_argument", ["type"]),
    ("memory_remember", {"content": "ok", "entities": "not-a-list"}, "invalid_argument", ["entities"]),
    ("memory_recall", {"query": "x", "limit": 10_000}, "invalid_argument", ["limit"]),
    ("memory_forget", {"id": GOOD_ID, "mode": "shred"}, "invalid_argument", ["mode"]),
    ("memory_remember", {}, "invalid_argument", ["content"]),
    ("memory_unknown", {}, "unknown_tool", []),
    # control characters and empty content
    ("memory_remember", {"content": "nul \x00 inside"}, "invalid_argument", ["control"]),
    ("memory_remember", {"content": "  \n\t "}, "invalid_argument", []),
    ("memory_remember", {"content": "ok", "review_after": "next tuesday"}, "invalid_argument", ["YYYY-MM-DD"]),
]


async def test_every_hostile_input_is_a_coded_tool_error_and_changes_nothing(s: Session, store: Path) -> None:
    await s.call("memory_remember", content="The shelduck survey counts two broods.")
    before, commits = tree(store), commit_count(store)
    for tool, args, code, words in REFUSALS:
        r = await s.raw(tool, **args)
        text = "".join(getattr(c, "text", "") for c in r.content)
        assert r.is_error, (tool, args)
        assert f"[{code}]" in text and "[internal]" not in text, (tool, str(args)[:80], text[:300])
        assert all(w in text for w in words), (tool, str(args)[:80], text[:300])
    assert tree(store) == before and commit_count(store) == commits
    st = await s.call("memory_status")  # the same process, still answering
    assert st["counts"]["total"] == 1


async def test_malformed_arguments_are_not_echoed(s: Session) -> None:
    value = "glpat-" + "xY7kQ2vN9mL4pR8wB3cZ"
    err = await s.error("memory_remember", content="ok", entities=value)
    assert "[invalid_argument]" in err and "entities" in err and "xY7k" not in err


async def test_paths_inside_the_store_in_any_spelling_reach_the_memory(s: Session, store: Path) -> None:
    m = await s.call("memory_remember", content="The smew winters on the reservoir.")
    for path in (m["path"], str(store / m["path"]), f"memories/../{m['path']}", "./" + m["path"]):
        assert (await s.call("memory_read", path=path))["id"] == m["id"]


async def test_link_in_the_store_pointing_out_is_refused(s: Session, store: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# Elsewhere\n\nprivate text\n")
    link = store / "memories" / "pointer.md"
    link.symlink_to(outside)
    try:
        err = await s.error("memory_read", path="memories/pointer.md")
        assert "[outside_store]" in err and "private text" not in err
    finally:
        link.unlink()


async def test_any_query_is_answered(s: Session) -> None:
    for query in ("\" OR 1=1 --", "NEAR(a b)", "*", "^", "a" * 100_000, "\x00", "💥" * 1000, "title:x AND body:y"):
        r = await s.call("memory_recall", query=query)
        assert r["coverage"]["complete"] in (True, False)
