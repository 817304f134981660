"""Cold start of `memory-mcp serve` on stdio: spawn to the `initialize` answer and to the `tools/list`
answer, against a bare SDK server (one tool, `MCPServer` from the same SDK) started the same way in
the same run, interleaved so machine load falls on both alike.

    .venv/bin/python benchmarks/bench_startup.py [--runs 15]

Target: p50 of each <= the bare server's p50 + 150 ms (a client's version probe times out when a
server is slow to answer `initialize`). The protocol is spoken by hand, one JSON line each way, so
no client library's start-up is counted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXE = Path(sys.executable).parent / "memory-mcp"
TARGET_MS = 150.0
BARE_SERVER = """
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("bare")


@mcp.tool()
def ping() -> str:
    return "pong"


mcp.run()
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}


def _send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def one_start(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds from spawn to the `initialize` answer, and to the `tools/list` answer."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    assert proc.stdout
    try:
        _send(proc, INITIALIZE)
        json.loads(proc.stdout.readline())
        initialized = time.perf_counter()
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        tools = json.loads(proc.stdout.readline())["result"]["tools"]
        listed = time.perf_counter()
        assert tools, "tools/list answered no tools"
    finally:
        proc.kill()
        proc.wait()
    return (initialized - start) * 1000, (listed - start) * 1000


def _p(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="cold starts of each server")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        store = root / "store"
        subprocess.run([str(EXE), "init", str(store)], check=True, capture_output=True)
        bare = root / "bare_server.py"
        bare.write_text(BARE_SERVER)
        env = {**os.environ, "MEMORY_MCP_ROOT": str(store), "HOME": str(root)}
        servers = {"memory-mcp serve": [str(EXE), "serve"], "bare MCPServer": [sys.executable, str(bare)]}
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in servers}
        for cmd in servers.values():
            one_start(cmd, env)  # warm the file cache once for each
        for _ in range(args.runs):
            for name, cmd in servers.items():
                times[name].append(one_start(cmd, env))
    print(f"cold start over stdio, {args.runs} runs each, interleaved (ms)")
    print(f"{'server':<18} {'initialize p50':>15} {'p95':>7} {'tools/list p50':>15} {'p95':>7}")
    p50: dict[str, tuple[float, float]] = {}
    for name, runs in times.items():
        init, listed = [r[0] for r in runs], [r[1] for r in runs]
        p50[name] = (statistics.median(init), statistics.median(listed))
        print(f"{name:<18} {p50[name][0]:>15.0f} {_p(init, 0.95):>7.0f} {p50[name][1]:>15.0f} {_p(listed, 0.95):>7.0f}")
    ours, base = p50["memory-mcp serve"], p50["bare MCPServer"]
    ok = all(o - b <= TARGET_MS for o, b in zip(ours, base, strict=True))
    print(f"difference: initialize {ours[0] - base[0]:+.0f} ms, tools/list {ours[1] - base[1]:+.0f} ms "
          f"(target <= +{TARGET_MS:.0f} ms): {'met' if ok else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
