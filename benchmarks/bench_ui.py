"""The local page's server time (`memory-mcp ui`, issue 35), on generated stores (perf.py's).

    python benchmarks/bench_ui.py                      # 10k (pages, search, RSS) and 100k (timeline pages)
    python benchmarks/bench_ui.py --sizes 10000 --out ui.json

Server time is the ASGI app answering one request in this process (routing, the token check, the
facade call, the template), driven directly, no socket or client in the figure; the store keeps a
file watcher, as `memory-mcp ui` does. Figures, p50 and p95 of `--repeat` requests:

* the timeline's first page; at 100k also a later page (page 100: the 4,951st to the 5,000th);
* a memory's page, a different memory each request;
* the search page, against recall's own time for the same queries in the same run (the facade's
  recall, the tool's default limit of 8, and with the page's limit of 50); its third page; and
  whether paging through the first four pages repeats or skips a memory against one list of 200;
* peak resident memory (VmHWM) of a `memory-mcp ui` process after it has served those pages, and of
  a `memory-mcp serve` process after status, recall and read on the same store.

Targets (issue 35): timeline and memory page <= 100 ms p50 at 10k; timeline pages <= 150 ms p50 at
100k; search <= 50 ms over recall; RSS within the server's + 30 MB. Run under the CPU lock.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from perf import EXE, Stat, _env, generate_store  # noqa: E402

from memory_mcp.adapters.ui.app import build, free_port  # noqa: E402
from memory_mcp.adapters.ui.guard import Keys  # noqa: E402
from memory_mcp.app.scopes import Scopes  # noqa: E402
from memory_mcp.app.store import Store  # noqa: E402

RESULTS = REPO / "benchmarks" / "results"


class Driver:
    """GET requests straight into the page's ASGI app, with its cookie, on one event loop."""

    def __init__(self, store: Store) -> None:
        self.keys = Keys()
        self.app, _ = build(Scopes({"project": store}), self.keys)
        self.loop = asyncio.new_event_loop()
        self.cookie = f"{self.keys.cookie}={self.keys.token}".encode()

    def get(self, target: str) -> tuple[int, bytes]:
        path, _, query = target.partition("?")
        scope = {"type": "http", "method": "GET", "path": path, "raw_path": path.encode(), "query_string": query.encode(),
                 "headers": [(b"host", b"127.0.0.1:8000"), (b"cookie", self.cookie)], "http_version": "1.1",
                 "scheme": "http", "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000), "root_path": ""}
        out: dict[str, Any] = {"body": b""}

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                out["status"] = message["status"]
            else:
                out["body"] += message.get("body", b"")

        self.loop.run_until_complete(self.app(scope, receive, send))
        return out["status"], out["body"]

    def timed(self, targets: list[str]) -> Stat:
        samples = []
        for target in targets:
            t = time.perf_counter()
            status, _ = self.get(target)
            samples.append((time.perf_counter() - t) * 1000)
            assert status == 200, (target, status)
        return Stat(samples)


def _timed(fn: Any, args: list[Any]) -> Stat:
    samples = []
    for a in args:
        t = time.perf_counter()
        fn(a)
        samples.append((time.perf_counter() - t) * 1000)
    return Stat(samples)


def pages(root: Path, n: int, repeat: int, rng: random.Random, queries: list[str], ids: list[str]) -> dict[str, Any]:
    store = Store.open(root, watch=True)
    try:
        t = time.perf_counter()
        store.refresh()  # the first open indexes the store: not a page's time
        indexed_s = time.perf_counter() - t
        drive = Driver(store)
        drive.get("/")  # warm: templates compiled, caches filled
        out: dict[str, Any] = {"n": n, "first_index_s": round(indexed_s, 1)}
        out["timeline_first"] = drive.timed(["/"] * repeat).as_json()
        out["timeline_page_100"] = drive.timed(["/?page=100"] * repeat).as_json()
        if n <= 20_000:
            chosen = rng.sample(ids, repeat)
            out["memory_page"] = drive.timed([f"/m/{i}" for i in chosen]).as_json()
            asked = [queries[i % len(queries)] for i in range(repeat)]
            for q in asked[:3]:
                drive.get("/?" + _q(q))
            page = drive.timed(["/?" + _q(q) for q in asked])
            recall8 = _timed(lambda q: store.recall(q), asked)
            recall50 = _timed(lambda q: store.recall(q, limit=50), asked)
            out["search_page"] = page.as_json()
            out["recall_limit8"] = recall8.as_json()
            out["recall_limit50"] = recall50.as_json()
            out["search_over_recall_ms"] = round(page.p50 - recall8.p50, 1)
            out["search_over_recall50_ms"] = round(page.p50 - recall50.p50, 1)
            out["search_page_3"] = drive.timed(["/?" + _q(q) + "&page=3" for q in asked]).as_json()
            out["search_paging"] = paging(store, asked[:10])
        return out
    finally:
        store.close()


def paging(store: Store, queries: list[str]) -> dict[str, int]:
    """The first four search pages of each query against one list of their 200 best: how many
    memories paging showed, showed twice, or skipped."""
    shown = repeated = skipped = 0
    for q in queries:
        paged = [e.id for n in range(4) for e in store.timeline(q, offset=n * 50, limit=50).entries]
        whole = [e.id for e in store.timeline(q, limit=200).entries]
        shown += len(paged)
        repeated += len(paged) - len(set(paged))
        skipped += len(set(whole[:len(paged)]) - set(paged))
    return {"shown": shown, "repeated": repeated, "skipped": skipped}


def _q(query: str) -> str:
    from urllib.parse import urlencode

    return urlencode({"q": query})


def rss(root: Path, ids: list[str], queries: list[str]) -> dict[str, float]:
    """VmHWM (MB) of `memory-mcp ui` after serving pages, and of `memory-mcp serve` after tool calls."""
    import httpx2 as httpx
    from mcp import Client, StdioServerParameters

    port = free_port()
    proc = subprocess.Popen([str(EXE), "ui", "--no-browser", "--port", str(port), "--store", str(root)],
                            env=_env(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # type: ignore[union-attr]
        url = re.search(r"http://\S+", line)
        assert url, line
        with httpx.Client(timeout=120) as client:
            client.get(url.group(0), follow_redirects=True)
            base = f"http://127.0.0.1:{port}"
            for path in ["/", "/?page=50", *(f"/m/{i}" for i in ids[:20]), *("/?" + _q(q) for q in queries[:20]),
                         "/inbox", "/insights", "/see?prompt=" + queries[0]]:
                assert client.get(base + path).status_code == 200, path
        ui_kb = _vmhwm(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=20)

    async def tools() -> float:
        params = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(root))
        async with Client(params) as client:
            await client.call_tool("memory_status", {})
            for q in queries[:20]:
                await client.call_tool("memory_recall", {"query": q})
            for i in ids[:20]:
                await client.call_tool("memory_read", {"id": i})
            from perf import _children_rss_kb

            return _children_rss_kb("serve") / 1024

    return {"ui_mb": round(ui_kb / 1024, 1), "server_mb": round(asyncio.run(tools()), 1)}


def _vmhwm(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--out", type=Path, default=RESULTS / "ui.json")
    args = parser.parse_args()
    found = []
    for n in (int(x) for x in args.sizes.split(",")):
        work = Path(tempfile.mkdtemp(prefix=f"bench-ui-{n}-"))
        try:
            t = time.perf_counter()
            gen = generate_store(work / "store", n)
            print(f"{n}: generated in {time.perf_counter() - t:.0f} s", flush=True)
            result = pages(gen.root, n, args.repeat, random.Random(7), gen.queries, gen.ids)
            if n <= 20_000:
                result["rss"] = rss(gen.root, gen.ids, gen.queries)
            print(json.dumps(result, indent=1), flush=True)
            found.append(result)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
