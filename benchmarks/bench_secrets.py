"""Cost of the credential scan: its import, and one scan per write (and per file of a reindex).

    python benchmarks/bench_secrets.py [--repeat 7]

The scan runs on every write and import and on every file a reindex reads, so its per-call cost and
the time to import its rules (the hooks and the CLI import it) both count. Texts are generated from a
seeded RNG the way memories read: prose with identifiers, paths, config lines and hashes, with the
words the rules' prefilters look for (`key`, `token`, `pass`, `auth`, `://`) as often as notes hold
them. Prints the median of `--repeat` runs of each, in microseconds per call.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import time

from memory_mcp.truth.secrets import mask, scan

WORDS = ["deploy", "cache", "redis", "postgres", "worker", "queue", "schema", "index", "review", "release",
         "staging", "docker", "nginx", "timeout", "retry", "latency", "gateway", "webhook", "cron", "backup",
         "metrics", "alert", "dashboard", "token", "key", "auth", "password", "session", "config", "secret",
         "rotation", "vault", "certificate", "build", "pipeline", "artifact"]
LINES = (
    "The {a} {b} reads config/{a}.yaml and retries {n} times before the {c} alert fires.",
    "{a}_{b}_timeout: {n}s",
    "See https://wiki.example.com/{a}/{b} and docs/{c}.md for the {a} runbook.",
    "Fixed in {sha} ({a} {b} was racing the {c}).",
    "export {A}_{B}_URL=https://{a}.internal:{n}/{b}",
    "def {a}_{b}(self, {c}_key: str) -> {C}Result:",
    "The {a} token refresh runs every {n} minutes; the key id is in the {b} dashboard.",
    "- {a}: {b}-{n} (owner: {c} team)",
)


def texts(rng: random.Random, lines: int, count: int) -> list[str]:
    def line() -> str:
        a, b, c = rng.sample(WORDS, 3)
        return rng.choice(LINES).format(a=a, b=b, c=c, A=a.upper(), B=b.upper(), C=c.title(), n=rng.randint(2, 9000),
                                        sha="".join(rng.choice("0123456789abcdef") for _ in range(40)))
    return ["\n".join(line() for _ in range(lines)) for _ in range(count)]


def per_call(fn: object, batch: list[str], repeat: int) -> float:
    """Median microseconds of one call of `fn` over `batch`."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in batch:
            fn(text)  # type: ignore[operator]
        runs.append((time.perf_counter() - start) / len(batch) * 1e6)
    return statistics.median(runs)


def import_ms(repeat: int) -> float:
    """Median milliseconds to import the scanner in a fresh interpreter, its package already imported."""
    code = ("import time, memory_mcp; t = time.perf_counter(); import memory_mcp.truth.secrets; "
            "print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(repeat)]
    return statistics.median(runs) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(32)
    print(f"import of the scanner and its rules: {import_ms(args.repeat):.1f} ms")
    for label, lines, count in (("a memory (4 lines)", 4, 2000), ("a file (40 lines)", 40, 300),
                                ("a long file (400 lines)", 400, 30)):
        batch = texts(rng, lines, count)
        print(f"{label:<24} scan {per_call(scan, batch, args.repeat):8.1f} us   "
              f"mask {per_call(mask, batch, args.repeat):8.1f} us   ({sum(map(len, batch)) // count} chars)")


if __name__ == "__main__":
    main()
