"""Hostile and broken files in a store: each is listed as unindexed with its reason, no call fails,
and no file is ever rewritten (bytes and mtime stay as the person left them). Files in unusual but
valid shapes (BOM, CRLF, empty body, no id) are indexed and likewise never rewritten. Plus property
tests: any bytes in a memory file and any string as a query never raise."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import Session, git, make_store, new_id, open_server
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_mcp.app.store import Store
from memory_mcp.index.db import Index
from memory_mcp.index.reconcile import reconcile
from memory_mcp.truth.dictionary import Dictionary
from memory_mcp.truth.files import MAX_FILE_BYTES

pytestmark = pytest.mark.anyio

ULID = "01JD2K3A9FZQ4W8XVBH5T6N7RM"
BOMB = ("---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RA\na: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
        + "---\n# Bomb\n\nbombword\n")

# name -> (bytes, a word the reason must contain). Every one has a word of its own in its body, so a
# recall can show it was not indexed.
HOSTILE: dict[str, tuple[bytes, str]] = {
    "broken-yaml.md": (b"---\nid: [unclosed\ntype: fact\n---\n# Broken\n\nbrokenword\n", "YAML"),
    "not-a-mapping.md": (b"---\n- just\n- a list\n---\n# List\n\nlistword\n", "mapping"),
    "scalar-frontmatter.md": (b"---\njust a sentence\n---\n# Scalar\n\nscalarword\n", "mapping"),
    "python-tag.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RB\nx: !!python/object/apply:os.system ['touch PWNED']\n"
                      b"---\n# Tag\n\ntagword\n", "tag"),
    "alias-bomb.md": (BOMB.encode(), "alias"),
    "unknown-type.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RC\ntype: rumour\n---\n# Rumour\n\nrumourword\n", "type"),
    "unknown-state.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RD\nstate: limbo\n---\n# Limbo\n\nlimboword\n", "state"),
    "unknown-trust.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RE\ntrust: maybe\n---\n# Maybe\n\nmaybeword\n", "trust"),
    "bad-id.md": (b"---\nid: ../../etc/passwd\n---\n# Bad id\n\nbadidword\n", "ULID"),
    "never-closed.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RF\n# Open\n\nopenword\n", "closed"),
    "deep-nesting.md": (b"---\nx: " + b"[" * 5000 + b"]" * 5000 + b"\n---\n# Deep\n\ndeepword\n", "nested"),
    "list-key.md": (b"---\n? [a, b]\n: value\n---\n# Key\n\nkeyword\n", "YAML"),
    "latin1.md": ("---\ntype: fact\n---\n# Caf\u00e9 latinword\n".encode("latin-1"), "UTF-8"),
    "binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR binaryword" + bytes(range(256)), "binary"),
    "huge.md": (b"---\ntype: fact\n---\n# Huge\n\n" + b"hugeword " * (MAX_FILE_BYTES // 9 + 10), "bytes"),
}
# name -> (bytes, word, title). Valid files of unusual shape: indexed, never rewritten.
ODD: dict[str, tuple[bytes, str, str]] = {
    "bom.md": (f"\ufeff---\nid: {ULID}\ntype: fact\n---\n# BOM note\n\nbomword here\n".encode(), "bomword", "BOM note"),
    "crlf.md": (b"---\r\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RG\r\ntype: fact\r\n---\r\n# CRLF note\r\n\r\ncrlfword\r\n",
                "crlfword", "CRLF note"),
    "empty-body.md": (b"---\nid: 01JD2K3A9FZQ4W8XVBH5T6N7RH\ntype: fact\nentities: [emptybodyword]\n---\n",
                      "emptybodyword", ""),
    "no-id.md": (b"---\ntype: preference\n---\n# No id note\n\nnoidword\n", "noidword", "No id note"),
    "no-frontmatter.md": (b"# Plain note\n\nplainword written in an editor\n", "plainword", "Plain note"),
}


def fingerprint(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.lstat().st_mtime_ns


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return make_store(tmp_path / "store")


@pytest.fixture
async def s(store: Path):
    async with open_server(store) as session:
        yield session


async def test_hostile_files_are_unindexed_with_reasons_and_never_touched(s: Session, store: Path,
                                                                          tmp_path: Path) -> None:
    folder = store / "memories" / "hostile"
    folder.mkdir()
    good = await s.call("memory_remember", content="The ruff colony nests on the marsh.")
    for name, (raw, _) in HOSTILE.items():
        (folder / name).write_bytes(raw)
    outside = tmp_path / "outside.md"
    outside.write_text(f"---\nid: {new_id()}\n---\n# Outside\n\noutsideword lives outside the store\n")
    (folder / "link-out.md").symlink_to(outside)
    # Two files with one id: the copy a person made of a memory.
    copy = folder / "copy-of-ruff.md"
    copy.write_bytes((store / good["path"]).read_bytes())
    before = {p.name: fingerprint(p) for p in folder.iterdir()}
    before_good, before_outside = fingerprint(store / good["path"]), fingerprint(outside)

    st = await s.call("memory_status")
    reasons = {u["path"].removeprefix("memories/hostile/"): u["reason"] for u in st["unindexed"]}
    for name, (_, word) in HOSTILE.items():
        assert word.lower() in reasons.get(name, "").lower(), (name, reasons.get(name))
    assert "link" in reasons["link-out.md"]
    # Both copies are reported: the refusal names the other file, and that one stays indexed.
    assert "duplicate id" in reasons["copy-of-ruff.md"] and good["path"] in reasons["copy-of-ruff.md"]
    assert await s.recall_ids("ruff colony marsh") == [good["id"]]
    assert st["coverage"]["complete"] is False and st["coverage"]["unindexed"] == len(HOSTILE) + 2
    for word in [w.decode() for w in (b"brokenword", b"listword", b"scalarword", b"tagword", b"bombword",
                                       b"rumourword", b"limboword", b"maybeword", b"badidword", b"openword",
                                       b"deepword", b"keyword", b"latinword", b"binaryword", b"hugeword",
                                       b"outsideword")]:
        assert await s.recall_ids(word) == [], word
    assert not (store / "PWNED").exists() and not Path("PWNED").exists()

    # Every kind of call, rebuilds included, leaves them byte for byte and uncommitted.
    await s.call("memory_reindex")
    await s.call("memory_reindex", verify=True)
    await s.call("memory_feedback", id=good["id"], helpful=True)
    err = await s.error("memory_read", path="memories/hostile/broken-yaml.md")
    assert "[not_found]" in err and "YAML" in err
    assert {p.name: fingerprint(p) for p in folder.iterdir()} == before
    assert fingerprint(outside) == before_outside
    assert fingerprint(store / good["path"]) != before_good  # the feedback did write the good one
    assert "hostile/" not in git(store, "ls-files")
    # Deleting the original keeps the memory: the copy takes over and nothing is lost.
    (store / good["path"]).unlink()
    assert await s.recall_ids("ruff colony marsh") == [good["id"]]
    assert (await s.call("memory_read", id=good["id"]))["path"] == "memories/hostile/copy-of-ruff.md"


async def test_odd_but_valid_files_are_indexed_and_never_rewritten(s: Session, store: Path) -> None:
    folder = store / "memories" / "odd"
    folder.mkdir()
    for name, (raw, _, _) in ODD.items():
        (folder / name).write_bytes(raw)
    before = {p.name: fingerprint(p) for p in folder.iterdir()}
    for name, (_, word, title) in ODD.items():
        r = await s.call("memory_recall", query=word)
        assert [h["path"] for h in r["results"]] == [f"memories/odd/{name}"], (name, r["results"])
        if title:
            assert r["results"][0]["title"] == title
    st = await s.call("memory_status")
    assert st["unindexed"] == []
    assert {p["path"] for p in st["provisional"]} == {"memories/odd/no-id.md", "memories/odd/no-frontmatter.md"}
    await s.call("memory_reindex")
    await s.call("memory_reindex", verify=True)
    await s.call("memory_remember", content="The pratincole flock arrived early.")
    assert {p.name: fingerprint(p) for p in folder.iterdir()} == before
    # Reconcile committed them as hand edits, exactly as they are.
    assert git(store, "status", "--porcelain").strip() == ""


def test_git_keeps_crlf_and_bom_bytes_exactly(store: Path) -> None:
    """What reconcile commits for a person's file is its bytes: line ends and BOM included."""
    core = Store.open(store)
    try:
        for name in ("bom.md", "crlf.md"):
            (store / "memories" / name).write_bytes(ODD[name][0])
        core.status()
        for name in ("bom.md", "crlf.md"):
            blob = git(store, "rev-parse", f"HEAD:memories/{name}").strip()
            raw = subprocess.run(["git", "-C", str(store), "cat-file", "blob", blob],
                                 capture_output=True, check=True).stdout
            assert raw == ODD[name][0]
    finally:
        core.close()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_named_pipe_and_folder_named_like_a_memory_do_not_hang_or_crash(store: Path) -> None:
    """A FIFO called x.md would block a reader for ever; a folder called y.md is not a file."""
    os.mkfifo(store / "memories" / "pipe.md")
    (store / "memories" / "folder.md").mkdir()
    (store / "memories" / "folder.md" / "inner.md").write_text("# Inner\n\ninnerword\n")
    core = Store.open(store)
    try:
        assert [h.path for h in core.recall("innerword").results] == ["memories/folder.md/inner.md"]
        assert core.status().unindexed == []
    finally:
        core.close()


# ------------------------------------------------------------------ property tests
YAMLISH = st.lists(st.sampled_from([
    "---\n", "id: ", ULID, "01JD2K3A9FZQ4W8XVBH5T6N7R", "type: ", "fact", "state: ", "archived", "trust: ",
    "entities: ", "[", "]", "{", "}", ", ", ": ", "- ", "&a ", "*a", "!!python/object ", "!!binary ", "? ",
    "\n", "\r\n", "\t", "  ", "\ufeff", "#", "# Title\n", "'", '"', "\\", "\x00", "\u2028", "feedback: ", "-0.5",
    "1e309", "~", "null", "yes", "2026-01-01", "supersedes: ", "superseded_by: ",
]) | st.text(max_size=6), max_size=40).map("".join)


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Index]:
    root = tmp_path_factory.mktemp("fuzz")
    (root / "memories").mkdir()
    return root, Index.open(root / "index.sqlite3")


def _reconcile_one(bare: tuple[Path, Index], raw: bytes) -> None:
    root, index = bare
    path = root / "memories" / "fuzzed.md"
    path.write_bytes(raw)
    try:
        report = reconcile(root, index, Dictionary())
        errors = dict(index.errors())
        row = index.get_by_path("memories/fuzzed.md")
        # Indexed or unindexed with a reason: never both, never neither (and never a crash).
        assert (row is None) != ("memories/fuzzed.md" not in errors), (row, errors)
        assert report.aborted is None
        assert path.read_bytes() == raw or (row is not None and row.state == "active")
    finally:
        path.unlink()
        reconcile(root, index, Dictionary())


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=2048))
def test_any_bytes_as_a_memory_file_never_raise(bare: tuple[Path, Index], raw: bytes) -> None:
    _reconcile_one(bare, raw)


@settings(max_examples=250, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(YAMLISH, st.text(max_size=200))
def test_any_frontmatter_like_text_never_raises(bare: tuple[Path, Index], head: str, body: str) -> None:
    _reconcile_one(bare, ("---\n" + head + "\n---\n" + body).encode("utf-8", "surrogatepass"))


@pytest.fixture(scope="module")
def core(tmp_path_factory: pytest.TempPathFactory):
    store = make_store(tmp_path_factory.mktemp("fuzzq") / "store")
    s = Store.open(store)
    s.remember("The greenshank API returns JSON; see config/flags.yaml and getUserById.", entities=["greenshank"])
    s.remember("Кулики прилетают весной; 도요새는 봄에 온다.", entities=["кулик"])
    yield s
    s.close()
    shutil.rmtree(store, ignore_errors=True)


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300), st.lists(st.text(max_size=20), max_size=3), st.booleans())
def test_any_query_and_entity_filter_through_the_store_never_raise(core: Store, query: str, entities: list[str],
                                                                  archived: bool) -> None:
    r = core.recall(query, entities=entities, include_archived=archived, diversity=0.5, max_tokens=50)
    assert r.coverage.complete


@pytest.mark.parametrize("rebuild", ["reindex", "delete .derived"])
def test_rebuild_does_not_hand_a_memory_to_a_persons_copy(store: Path, rebuild: str) -> None:
    """Regression: a rebuild walks files in path order, so `a-copy.md` (a person's copy of a memory)
    took the id from the committed file, and the next write went into the copy."""
    core = Store.open(store)
    r = core.remember("The avocet survey is in May.")
    copy = store / "memories" / "a-copy.md"
    copy.write_bytes((store / r.path).read_bytes())
    core.status()
    if rebuild == "reindex":
        core.reindex()
    else:
        core.close()
        shutil.rmtree(store / ".derived")
    before = fingerprint(copy)
    core.feedback(r.id, helpful=True)
    assert core.read(id=r.id).path == r.path
    assert fingerprint(copy) == before and "a-copy.md" not in git(store, "ls-files")
    reasons = {u.path: u.reason for u in core.status().unindexed}
    assert reasons == {"memories/a-copy.md": f"duplicate id {r.id}: {r.path} has it too"}
    core.close()
