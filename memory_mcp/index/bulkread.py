"""Reading, hashing and parsing the memory files a reconcile must look at, in worker processes
when there are enough of them to pay for starting those.

What a file needs before the index sees it (sha256, decoding, YAML, the credential scan, the
stemmed text of the `fts_stem` table) depends on that file alone, so it can run on every core; the
index has one writer, the process that called. A full reindex of 10,000 files spent about 60% of
its time here and 40% in SQLite (cProfile, docs/performance.md).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.index.schema import Derived, FileStat, derive
from memory_mcp.truth import files
from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.logs import log
from memory_mcp.truth.model import Memory
from memory_mcp.truth.standing import blob_sha

if TYPE_CHECKING:
    from memory_mcp.truth.injection import Flag


# Below this many files the work runs here: starting a worker (a fresh interpreter importing YAML,
# the stemmers and the credential rules) costs about as much as preparing a few hundred files.
PARALLEL_MIN = 1000
# The workers' scheduling priority below the writer's. The writer (this process, one SQLite
# connection) is what a bulk index waits for; at equal priority the workers took a third of its core
# (three processes on two cores). Niced, a 10k reindex went from 1,390-1,420 to 1,483-1,552 files/s
# (three rounds interleaved, docs/performance.md), and a person's own programs are not slowed either.
WORKER_NICE = 10
# Files a worker takes at a time: large enough that the round trip is noise, small enough that the
# writer is never idle for long and the files in flight stay a few megabytes.
CHUNK = 64


@dataclass(frozen=True)
class Wanted:
    """A file to prepare: where it is and, when only a changed sha makes it worth parsing, the sha
    the index has for it."""

    rel: str
    abs: str
    mtime_ns: int
    size: int
    ctime_ns: int
    ino: int
    known_sha: str | None = None


@dataclass
class Prepared:
    """One file read and, unless it is unchanged or broken, parsed.

    `read_error` is set when the file could not be read, `parse_error` when it is not a memory;
    `unchanged` when its sha is the `known_sha` it was prepared with (nothing else is filled in)."""

    rel: str
    stat: FileStat
    raw: bytes = b""
    read_error: str | None = None
    parse_error: str | None = None
    unchanged: bool = False
    memory: Memory | None = None
    secret_kinds: tuple[str, ...] = ()
    flags: tuple[Flag, ...] = ()  # how its text tries to steer the model (`injection.scan`)
    shown: Memory | None = None  # `memory` with its credentials masked: what the index keeps
    derived: Derived | None = None  # the index's view of `shown`


def prepare(want: Wanted) -> Prepared:
    """Read, hash and parse one file (see `Prepared`). Never raises for a bad file."""
    # Imported here: the credential and injection rules are not needed by a reconcile that finds
    # nothing to read.
    from memory_mcp.truth import injection
    from memory_mcp.truth.secrets import scan

    try:
        with open(want.abs, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        return Prepared(want.rel, FileStat(want.mtime_ns, want.size, "", want.ctime_ns, want.ino), read_error=f"cannot read: {e.strerror}")
    stat = FileStat(want.mtime_ns, want.size, hashlib.sha256(raw).hexdigest(), want.ctime_ns, want.ino, blob_sha(raw))
    if want.known_sha == stat.sha:
        return Prepared(want.rel, stat, unchanged=True)
    try:
        text = files.decode(raw)
        mem = files.parse(text, want.rel)
    except ParseError as e:
        return Prepared(want.rel, stat, raw, parse_error=e.message)
    findings = scan(text)
    shown = files.masked(mem) if findings else mem
    return Prepared(want.rel, stat, raw, memory=mem, secret_kinds=tuple(f.kind for f in findings), shown=shown,
                    derived=derive(shown), flags=tuple(injection.scan(text)))


def workers() -> int:
    """Worker processes for a large batch: MEMORY_MCP_WORKERS when set (0 or 1: none), else the
    cores this process may use."""
    given = os.environ.get("MEMORY_MCP_WORKERS", "").strip()
    if given.isdigit():
        return int(given)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def prepare_all(wanted: Sequence[Wanted]) -> Iterator[Prepared]:
    """`prepare` each file, in order; in worker processes for a batch of at least `PARALLEL_MIN`
    files on a machine with more than one core. A worker that fails leaves its files to this
    process: the result is the same, only slower."""
    count = workers()
    if len(wanted) < PARALLEL_MIN or count < 2:
        yield from map(prepare, wanted)
        return
    chunks = [list(wanted[i : i + CHUNK]) for i in range(0, len(wanted), CHUNK)]
    pool = [_Worker(chunks[k::count]) for k in range(count)]
    try:
        for n, chunk in enumerate(chunks):
            yield from pool[n % count].next_chunk(chunk)
    finally:
        for w in pool:
            w.stop()


class _Worker:
    """A child process (`serve`) given its share of the chunks at once, answering
    one pickled list of `Prepared` per chunk, in order, on its own stdout.

    Not multiprocessing: its spawn start re-runs the caller's main script in every worker (a
    script without a `__main__` guard would run twice), and its workers inherit the stdout that a
    stdio MCP server speaks the protocol on."""

    def __init__(self, chunks: list[list[Wanted]]) -> None:
        here = str(Path(__file__).resolve().parents[2])  # the folder holding memory_mcp/
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)}
        self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
            [sys.executable, "-c", "from memory_mcp.index.bulkread import serve; serve()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            env=env)
        # Written from a thread: the child answers while it reads, and both pipes have small buffers.
        self.feeder = threading.Thread(target=self._feed, args=(chunks,), daemon=True)
        self.feeder.start()

    def _feed(self, chunks: list[list[Wanted]]) -> None:
        import pickle  # the workers' only: a reconcile of a few files prepares them here, without it

        assert self.proc and self.proc.stdin
        try:
            with self.proc.stdin:
                pickle.dump(chunks, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError:
            pass  # the child is gone: next_chunk finds out and prepares here

    def next_chunk(self, chunk: list[Wanted]) -> list[Prepared]:
        """The child's answer for `chunk` (its next one), or this process's own if the child failed."""
        import pickle

        if self.proc:
            assert self.proc.stdout
            try:
                got: list[Prepared] = pickle.load(self.proc.stdout)
                if [p.rel for p in got] == [w.rel for w in chunk]:
                    return got
                problem = "answered for other files"
            except (EOFError, OSError, pickle.UnpicklingError, AttributeError, ImportError) as e:
                problem = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            log.warning("reconcile worker %s stopped (%s): preparing its files in this process",
                        self.proc.pid, problem)
            self.stop()
        return [prepare(w) for w in chunk]

    def stop(self) -> None:
        if self.proc:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def serve() -> None:
    """The worker's side of `_Worker`: prepare the chunks read from stdin, answer on stdout."""
    import pickle

    if hasattr(os, "nice"):  # not on Windows
        os.nice(WORKER_NICE)
    try:
        chunks: list[list[Wanted]] = pickle.load(sys.stdin.buffer)
        out = sys.stdout.buffer
        for chunk in chunks:
            pickle.dump([prepare(w) for w in chunk], out, protocol=pickle.HIGHEST_PROTOCOL)
            out.flush()
    except (BrokenPipeError, EOFError, pickle.UnpicklingError):
        # The parent is gone (killed mid-reconcile): nobody reads the answers, and a traceback would
        # land on the person's terminal. Python's flush at exit would raise again: stdout goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

