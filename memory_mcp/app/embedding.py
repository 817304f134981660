"""The optional dense signal's background work: embedding the memories that have no vector for the
enabled model, after their commit, from `reindex --vectors` or a thread of a long-lived process.
The model itself and the vectors table are `vectors.py`'s."""

from __future__ import annotations

import logging
import threading
import time

from memory_mcp.app.session import Session
from memory_mcp.recall import vectors
from memory_mcp.truth.errors import InvalidArgument
from memory_mcp.truth.options import Progress
from memory_mcp.truth.results import VectorsResult

# Memories embedded per turn of the lock: it is held only to read a batch and to store its vectors,
# never while the model runs, so a tool call waits at most for one small write.
EMBED_BATCH = 16
# The background embedder starts once no call has come for this long: an idle moment, not the
# write path's latency.
EMBED_IDLE_SECONDS = 0.5
EMBED_MAX_WAIT_SECONDS = 5.0

log = logging.getLogger("memory_mcp")


def embed_missing(session: Session, progress: Progress | None = None, stop: threading.Event | None = None) -> VectorsResult:
    """Embed every indexed memory that has no vector for the enabled model, `EMBED_BATCH` at a time,
    and drop the vectors no memory holds any more. `progress` hears (done, to do)."""
    model = vectors.configured()
    if model is None:
        raise InvalidArgument(f"no dense model is enabled: {vectors.why_off()}.")
    enc = vectors.Encoder(model)
    with session.call() as index, index.transaction():
        vectors.prune(index.conn, enc.key)
        todo = vectors.counts(index.conn, enc.key)[1]
    done = 0
    if progress:
        progress(0, todo)
    while not (stop and stop.is_set()):
        with session.storage_errors(), session.lock.hold():
            batch = vectors.missing(session.index().conn, enc.key, EMBED_BATCH)
        if not batch:
            break
        vecs = enc.passages([body for _, body in batch])
        with session.storage_errors(), session.lock.hold():
            index = session.index()
            with index.transaction():
                vectors.store(index.conn, enc.key, zip((ck for ck, _ in batch), vecs, strict=True))
        done += len(batch)
        if progress:
            progress(done, max(todo, done))
    with session.lock.hold():
        have, without = vectors.counts(session.index().conn, enc.key)
    return VectorsResult(model=enc.key, embedded=done, with_vectors=have, without_vectors=without)


class VectorWorker:
    """Embeds new and changed memories in a thread of a long-lived process (the server, `watch`):
    poked after every call, it waits for an idle moment, then runs `embed_missing`."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memory-mcp vectors", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """A call has finished: embed what it wrote once the store is idle."""
        self._wake.set()

    def close(self) -> None:
        """Stop after the batch in hand (its vectors are kept)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=60)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            # Each further call pushes the start back, so the worker runs between calls, but only up
            # to EMBED_MAX_WAIT_SECONDS: a client calling every few tenths of a second (a status poll)
            # must not hold the vectors back for ever.
            deadline = time.monotonic() + EMBED_MAX_WAIT_SECONDS
            while self._wake.is_set() and not self._stop.is_set() and time.monotonic() < deadline:
                self._wake.clear()
                self._stop.wait(EMBED_IDLE_SECONDS)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                embed_missing(self.session, stop=self._stop)
            except Exception as e:  # noqa: BLE001 - a failed batch must not end the server; the next poke retries
                log.warning("embedding memories for the dense signal failed: %s", e)
