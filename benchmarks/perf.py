"""Performance and scale of memory-mcp, through a real `memory-mcp serve` process and in-process.

    python benchmarks/perf.py                      # 1k and 10k memories, watcher as the server defaults
    python benchmarks/perf.py --sizes 1000,10000,100000 --watch both --out perf.json

For each store size N it generates N memories of realistic length (six types, a few hundred
entities, English with some Russian and Korean, some identifiers and paths) created over 25 months
and filed as the server files them (month folders, a tenth in per-project folders), commits them, then
measures, each next to a baseline taken in the same run so numbers compare across machines and loads:

* cold start: spawn of `memory-mcp serve` to the answer of `tools/list`, against a minimal
  `MCPServer` with one tool started the same way;
* a trivial tool call over stdio on that minimal server (the transport's own floor);
* no-op call (nothing changed): in-process reconcile with the stat gate and with a file watcher
  (whatever `--watch` says; the server's setting), and over stdio, against `find memories
  -printf '%T@ %s\\n'` over the same tree;
* one file edited by hand, then recall (over stdio; the edit must be found);
* `memory_recall` p50/p95 over stdio, and the search alone in-process;
* `memory_remember` p50/p95 over stdio, git commit included, and in-process its two parts that
  grow with the store: the conflict gate and the commit alone;
* full reindex throughput in-process (files/s) and `memory_reindex` over stdio;
* peak resident memory of the server (VmHWM of its process).

`--watch on|off|both` runs the server with MEMORY_MCP_WATCH=1/0 (`default` leaves it unset).
It prints one table per watcher setting and writes everything as JSON
(default benchmarks/results/perf.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

from memory_mcp.app.store import Store
from memory_mcp.index.db import Index
from memory_mcp.recall import conflicts, query
from memory_mcp.truth import files
from memory_mcp.truth.layout import month_folder
from memory_mcp.truth.model import Memory, MemoryType, State, Trust, compose_body, slugify

EXE = Path(sys.executable).parent / "memory-mcp"
RESULTS = Path(__file__).resolve().parent / "results"
ULID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

# ------------------------------------------------------------------ generated content


def _words(text: str) -> list[str]:
    return text.split()


TECH = _words("redis postgres pnpm npm yarn docker compose nginx kafka rabbitmq celery alembic pytest ruff mypy "
        "terraform kubernetes helm grafana prometheus sentry vite webpack react django fastapi flask "
        "sqlite clickhouse elasticsearch opensearch s3 cloudfront lambda github-actions gitlab-ci "
        "jenkins poetry uv pip-tools black eslint prettier typescript rust go java gradle maven "
        "openapi graphql grpc protobuf jwt oauth keycloak vault consul etcd minio airflow dbt spark "
        "pandas numpy pydantic sqlalchemy asyncpg httpx aiohttp uvicorn gunicorn supervisor systemd")
PARTS = _words("billing auth search gateway ingest notifier scheduler reports payments catalog checkout "
         "profile admin analytics mailer exporter importer sync cache worker frontend backend mobile "
         "ledger invoices onboarding audit")
PEOPLE = _words("alice bob carol dmitri olga minji jisoo hana priya tom ravi sven")
ENTITIES = TECH + [f"{p}-service" for p in PARTS] + [f"{p}-web" for p in PARTS[:12]] + PEOPLE
NOUNS = _words("deploy cache migration schema index queue token timeout retry budget latency webhook cron "
         "backup restore metric alert dashboard release branch review test fixture container image "
         "volume secret config flag endpoint request response payload batch job pipeline build "
         "artifact lockfile dependency upgrade rollback incident outage query transaction lock "
         "replica shard partition bucket certificate domain proxy header session cookie")
VERBS = _words("pin bump split cache retry batch shard rotate rename archive migrate vendor patch revert "
         "throttle debounce document profile benchmark deprecate")
REASONS = (
    "the old path doubled the p95 under load", "CI started failing intermittently on Mondays",
    "the staging cluster ran out of memory twice last week", "it keeps the lockfile reproducible",
    "the vendor changed their rate limits without notice", "reviews were taking three days",
    "it broke the nightly export for the finance team", "the logs were unreadable at that volume",
    "the on-call engineer could not reproduce it locally", "the customer asked for an audit trail",
)
DAYS = _words("Monday Tuesday Wednesday Thursday Friday")
EN_TEMPLATES = (
    "Use {tech} instead of {tech2} in the {part} repo, because {reason}.",
    "The {part} {noun} times out after {num} seconds when the {noun2} is cold; set `{ident}` to {num2}.",
    "We decided to {verb} the {noun} in {part}-service on {day}; {person} reviews the change.",
    "{person} prefers small pull requests for the {part} code, one {noun} per change, with tests.",
    "Never run `{tech} {verb}` directly against production; go through `scripts/{part}_{noun}.sh`.",
    "The {noun} of {part}-service lives in `config/{part}/{noun}.yaml`; {ident} overrides it in staging.",
    "After the {noun} incident on {day} we added an alert on {ident} above {num} per minute.",
    "Error E{code} from {tech} means the {noun2} was rotated; restart the {part} worker after {num} s.",
    "Running the {part} tests needs {tech} on port {port}; `make {noun}-up` starts it with {tech2}.",
    "{person} said the {noun} budget for {part} is {num} ms at p95 and {num2} ms at p99.",
    "The {tech} client in {part} must call `{ident}()` before the first {noun}, otherwise it hangs.",
    "Prefer {tech} for new {noun} code; {tech2} stays only in the legacy {part} module until Q{q}.",
)
RU_TEMPLATES = (
    "Для {part} используем {tech} вместо {tech2}: старый вариант удваивал задержку под нагрузкой.",
    "Миграцию схемы в {part} запускаем только после резервного копирования базы, по {day_ru}.",
    "{person} просит делать небольшие изменения и всегда добавлять тесты для {tech}.",
    "Таймаут запроса к {tech} в сервисе {part} равен {num} секундам; при холодном кэше он истекает.",
    "Ошибка E{code} означает, что токен устарел; перезапустите воркер {part} через {num} секунд.",
    "Конфигурация {part} хранится в файле `config/{part}.yaml`, в стейджинге её переопределяет {ident}.",
)
KO_TEMPLATES = (
    "{part} 저장소에서는 {tech2} 대신 {tech}를 사용합니다. 부하가 걸리면 지연 시간이 두 배가 되었습니다.",
    "배포는 {day_ko}에만 합니다. {person}가 변경 사항을 검토합니다.",
    "{tech} 연결 시간 제한은 {num}초입니다. 캐시가 비어 있으면 요청이 실패합니다.",
    "{part} 서비스의 설정 파일은 `config/{part}.yaml`에 있고, 스테이징에서는 {ident}로 덮어씁니다.",
    "오류 E{code}는 토큰이 만료되었다는 뜻입니다. {num}초 후에 {part} 작업자를 다시 시작하세요.",
)
DAYS_RU = _words("понедельникам вторникам средам четвергам пятницам")
DAYS_KO = _words("월요일 화요일 수요일 목요일 금요일")
SPREAD_MONTHS = 25
SPREAD_MINUTES = SPREAD_MONTHS * 30.44 * 24 * 60
TYPE_WEIGHTS = {MemoryType.FACT: 30, MemoryType.PREFERENCE: 15, MemoryType.DECISION: 20,
                MemoryType.EPISODE: 20, MemoryType.REFERENCE: 5, MemoryType.KNOWLEDGE: 10}


def _ulid(ms: int, rng: random.Random) -> str:
    n = (ms << 80) | rng.getrandbits(80)
    return "".join(ULID_ALPHABET[(n >> (5 * k)) & 31] for k in reversed(range(26)))


def _ident(rng: random.Random) -> str:
    a, b = rng.choice(NOUNS), rng.choice(NOUNS)
    return rng.choice((f"{a}_{b}_limit", f"get{a.title()}By{b.title()}", f"{a.upper()}_{b.upper()}_MS"))


def _sentence(rng: random.Random, lang: str) -> str:
    template = rng.choice({"en": EN_TEMPLATES, "ru": RU_TEMPLATES, "ko": KO_TEMPLATES}[lang])
    return template.format(
        tech=rng.choice(TECH), tech2=rng.choice(TECH), part=rng.choice(PARTS), noun=rng.choice(NOUNS),
        noun2=rng.choice(NOUNS), verb=rng.choice(VERBS), reason=rng.choice(REASONS), day=rng.choice(DAYS),
        day_ru=rng.choice(DAYS_RU), day_ko=rng.choice(DAYS_KO), person=rng.choice(PEOPLE).title(),
        num=rng.randint(2, 90), num2=rng.randint(100, 900), code=rng.randint(1000, 9999),
        port=rng.randint(5000, 9999), q=rng.randint(1, 4), ident=_ident(rng))


def memory_text(rng: random.Random) -> tuple[str, str, str]:
    """(language, title, content) of one generated memory: one to a dozen sentences, some paragraphs."""
    lang = rng.choices(("en", "ru", "ko"), weights=(80, 10, 10))[0]
    first = _sentence(rng, lang)
    title = first.split(". ")[0].split(": ")[0].rstrip(".")[:90]
    count = min(12, max(1, int(rng.lognormvariate(1.2, 0.7))))
    sentences = [first] + [_sentence(rng, lang) for _ in range(count - 1)]
    paras, cur = [], []
    for s in sentences:
        cur.append(s)
        if len(cur) >= 3 and rng.random() < 0.5:
            paras.append(" ".join(cur))
            cur = []
    if cur:
        paras.append(" ".join(cur))
    return lang, title, "\n\n".join(paras)


@dataclass
class Generated:
    """A generated store: its root, the ids and paths of its memories, and queries that hit them."""

    root: Path
    ids: list[str]
    paths: list[str]
    queries: list[str]


def generate_store(root: Path, n: int, seed: int = 7) -> Generated:
    """A new store at `root` with `n` generated memories, committed in one commit (as an import)."""
    Store.open(root).close()
    gen = write_memories(root, n, random.Random(seed))
    _git(root, "add", "-A", "memories")
    _git(root, "commit", "-q", "--no-verify", "-m", f"bench: import {n} memories")
    return gen


def write_memories(root: Path, n: int, rng: random.Random) -> Generated:
    """`n` generated memory files written into the store at `root` by plain file writes (no tool,
    no commit), as a person adds them by hand or an import copies them in."""
    start = datetime(2025, 1, 1, tzinfo=UTC)
    step = SPREAD_MINUTES / n  # creation dates over SPREAD_MONTHS whatever n, so every size has month folders
    mem_dir = root / "memories"
    ids: list[str] = []
    paths: list[str] = []
    queries: list[str] = []
    types, weights = list(TYPE_WEIGHTS), list(TYPE_WEIGHTS.values())
    for i in range(n):
        when = start + timedelta(minutes=step * i)
        stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
        lang, title, content = memory_text(rng)
        mem_id = _ulid(int(when.timestamp() * 1000), rng)
        mem = Memory(id=mem_id, body=compose_body(content, title), type=rng.choices(types, weights)[0],
                     state=State.ACTIVE if rng.random() < 0.9 else State.ARCHIVED,
                     trust=rng.choice(list(Trust)), entities=rng.sample(ENTITIES, rng.randint(0, 4)),
                     source=f"session {when.date()}", created=stamp, updated=stamp)
        # A tenth of a store lives in per-project folders, as people organise theirs; the rest is
        # where the server writes a new memory: the folder of its creation month.
        folder = mem_dir / rng.choice(PARTS) if rng.random() < 0.1 else root / month_folder(root, stamp)
        path = folder / f"{slugify(title)}-{mem_id[:8]}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(files.serialize(mem), encoding="utf-8")
        ids.append(mem_id)
        paths.append(path.relative_to(root).as_posix())
        if len(queries) < 400 and rng.random() < 0.5:
            words = [w.strip("`.,:;()") for w in content.split() if len(w.strip("`.,:;()")) > 3]
            queries.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 4)))))
    return Generated(root, ids, paths, queries)


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, env=_env(root))


def _env(root: Path, watch: str | None = None) -> dict[str, str]:
    env = {"MEMORY_MCP_ROOT": str(root), "HOME": str(root.parent / "home"), "PATH": os.environ["PATH"],
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
    if "PYTHONPATH" in os.environ:  # benchmarking a snapshot of the code, not the installed one
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    if watch is not None:
        env["MEMORY_MCP_WATCH"] = watch
    return env


# ------------------------------------------------------------------ measuring
@dataclass
class Stat:
    """Samples of one figure, in milliseconds."""

    samples: list[float]

    @property
    def p50(self) -> float:
        return statistics.median(self.samples)

    @property
    def p95(self) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]

    def as_json(self) -> dict[str, float | int]:
        return {"p50_ms": round(self.p50, 3), "p95_ms": round(self.p95, 3), "n": len(self.samples)}


def timed(fn: Callable[[], object], repeat: int) -> Stat:
    """Wall time of `repeat` calls of `fn`, in milliseconds."""
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return Stat(out)


async def atimed(fn: Callable[[], object], repeat: int) -> Stat:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        await fn()  # type: ignore[misc]
        out.append((time.perf_counter() - t) * 1000)
    return Stat(out)


MINIMAL_SERVER = """\
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("minimal")


@mcp.tool()
def ping() -> str:
    return "pong"


mcp.run()
"""


async def _cold_start(params: StdioServerParameters) -> float:
    t = time.perf_counter()
    async with Client(params) as client:
        await client.list_tools()
        return (time.perf_counter() - t) * 1000


async def cold_starts(root: Path, watch: str | None, repeat: int) -> tuple[Stat, Stat, Stat, float]:
    """Spawn-to-tools/list of memory-mcp and of the minimal server (interleaved), a trivial tool
    call on the minimal server, and the minimal server's peak RSS in MB."""
    script = root.parent / "minimal_server.py"
    script.write_text(MINIMAL_SERVER)
    ours = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(root, watch))
    minimal = StdioServerParameters(command=sys.executable, args=[str(script)], env=_env(root))
    a, b = [], []
    for _ in range(repeat):
        a.append(await _cold_start(ours))
        b.append(await _cold_start(minimal))
    async with Client(minimal) as client:
        trivial = await atimed(lambda: client.call_tool("ping", {}), 50)
        rss = _children_rss_kb("minimal_server") / 1024
    return Stat(a), Stat(b), trivial, rss


def _children_rss_kb(name: str) -> int:
    """VmHWM of this process's child whose command line holds `name` (the stdio server)."""
    best = 0
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] != me:
                continue
            if name not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    best = max(best, int(line.split()[1]))
        except (OSError, IndexError):
            continue
    return best


@dataclass
class Result:
    """Every figure of one store size under one watcher setting."""

    n: int
    watch: str
    cold_start: Stat | None = None
    cold_start_minimal: Stat | None = None
    trivial_call_minimal: Stat | None = None
    find_floor: Stat | None = None
    noop_inprocess: Stat | None = None
    noop_inprocess_watcher: Stat | None = None
    noop_stdio: Stat | None = None
    edit_then_recall: Stat | None = None
    recall_stdio: Stat | None = None
    search_inprocess: Stat | None = None
    conflict_gate_inprocess: Stat | None = None
    conflict_gate_unbounded: Stat | None = None
    remember_stdio: Stat | None = None
    commit_inprocess: Stat | None = None
    reindex_files_per_s: float = 0.0
    reindex_cpu_files_per_s: float = 0.0
    reindex_stdio_files_per_s: float = 0.0
    server_peak_rss_mb: float = 0.0
    minimal_peak_rss_mb: float = 0.0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Reps:
    """How many samples of each figure to take."""

    queries: int
    writes: int
    noops: int


def _call(client: Client, name: str, args: dict) -> Callable[[], object]:
    async def run() -> object:
        r = await client.call_tool(name, args)
        if r.is_error:
            raise RuntimeError(f"{name} failed: {r.content}")
        return r
    return run


async def warmed_noop(client: Client) -> Callable[[], Any]:
    """A call with nothing to do (a listing by an entity no memory has), made twice around the
    racily-clean window of the server's first scan, so the next ones measure a settled server."""
    noop = _call(client, "memory_recall", {"entities": ["no-such-entity"], "limit": 1})
    await noop()
    await asyncio.sleep(2.1)  # out of the racily-clean window of the first scan
    await noop()
    return noop


async def stdio_figures(gen: Generated, res: Result, watch: str | None, reps: Reps) -> None:
    """Everything measured through one `memory-mcp serve` process, then its peak RSS."""
    params = StdioServerParameters(command=str(EXE), args=["serve"], env=_env(gen.root, watch))
    rng = random.Random(11)
    async with Client(params, read_timeout_seconds=600) as client:
        noop = await warmed_noop(client)
        res.noop_stdio = await atimed(noop, reps.noops)
        qs = iter(gen.queries * 4)
        res.recall_stdio = await atimed(lambda: _call(client, "memory_recall", {"query": next(qs)})(), reps.queries)
        edit_samples = []
        for k in range(10):
            rel = gen.paths[rng.randrange(len(gen.paths))]
            word = f"zebracorn{k}x{rng.randrange(10**6)}"
            path = gen.root / rel
            path.write_text(path.read_text(encoding="utf-8") + f"\nEdited by hand: {word}.\n", encoding="utf-8")
            t = time.perf_counter()
            r = await _call(client, "memory_recall", {"query": word, "limit": 3})()
            edit_samples.append((time.perf_counter() - t) * 1000)
            hits = [h["path"] for h in (r.structured_content or {}).get("results", [])]  # type: ignore[attr-defined]
            if rel not in hits:
                res.notes.append(f"hand edit of {rel} not found by the next recall")
        res.edit_then_recall = Stat(edit_samples)
        counter = iter(range(10**6))

        def remember() -> object:
            k = next(counter)
            lang, title, content = memory_text(rng)
            return _call(client, "memory_remember", {
                "content": f"{content}\n\nBenchmark note {k}.", "title": f"{title} ({k})",
                "entities": rng.sample(ENTITIES, 2)})()

        res.remember_stdio = await atimed(remember, reps.writes)
        t = time.perf_counter()
        r = await _call(client, "memory_reindex", {})()
        count = (r.structured_content or {}).get("indexed", 0)  # type: ignore[attr-defined]
        res.reindex_stdio_files_per_s = count / (time.perf_counter() - t)
        res.server_peak_rss_mb = _children_rss_kb("serve") / 1024


def unbounded_gate(index: Index, subject: conflicts.Subject) -> list[conflicts.Neighbour]:
    """The gate as it was before its candidate search was bounded (1d8730e), kept only as the
    baseline: a planner query of 32 over the whole store plus every memory sharing an entity."""
    rowids = set(query.text_scores(index, f"{subject.title} {subject.excerpt}", 32))
    names = list(dict.fromkeys(e.lower() for e in subject.entities))
    if names:
        rowids.update(r for (r,) in index.conn.execute(
            f"SELECT memory_rowid FROM entities WHERE entity IN ({','.join('?' * len(names))})", names))
    return conflicts.weigh(index, subject, rowids)


def conflict_gate(store: Store, repeat: int) -> tuple[Stat, Stat]:
    """The conflict gate remember runs on a new memory, on generated memories that are not written:
    the bounded gate and, on the same subjects in the same run, the unbounded one it replaced."""
    index = store.index()
    def run(gate: Callable[[Index, conflicts.Subject], object]) -> Stat:
        rng = random.Random(3)

        def one() -> None:
            _, title, content = memory_text(rng)
            derived = Memory(id="0" * 26, body=compose_body(content, title))
            gate(index, conflicts.Subject(derived.id, derived.title, derived.excerpt, rng.sample(ENTITIES, 2), None, []))
        return timed(one, repeat)
    return run(conflicts.neighbours), run(unbounded_gate)


def noop_with_watcher(root: Path, repeat: int) -> Stat:
    """A no-op call on a Store that keeps a file watcher, as `memory-mcp serve` does by default:
    catch up with the watch (marker file and its event), reconcile no path, no walk."""
    store = Store.open(root, watch=True)
    try:
        store.refresh()  # the watch starts and its first call walks: nothing vouches for older changes
        store.refresh()
        assert store.watcher is not None and store.watcher.running, store.watcher and store.watcher.why_off
        walks = 0

        def one() -> None:
            nonlocal walks
            walks += store.refresh().walked

        stat = timed(one, repeat)
        if walks:  # a walk here would measure the stat gate, not the watcher
            raise RuntimeError(f"{walks} of {repeat} no-op calls with a watcher walked the store")
        return stat
    finally:
        store.close()


def inprocess_figures(gen: Generated, res: Result, reps: Reps) -> None:
    """The breakdown: reconcile, search and commit measured on a Store in this process."""
    root = gen.root
    store = Store.open(root)
    t, cpu = time.perf_counter(), time.process_time()
    report = store.reindex()
    res.reindex_files_per_s = report.indexed / (time.perf_counter() - t)
    # CPU time of this process alone: on a shared machine, the figure least moved by other load.
    res.reindex_cpu_files_per_s = report.indexed / (time.process_time() - cpu)
    store.refresh()
    time.sleep(2.1)  # out of the racily-clean window of the reindex
    store.refresh()
    res.find_floor = timed(lambda: subprocess.run(["find", "memories", "-printf", "%T@ %s\n"], cwd=root,
                                                  stdout=subprocess.DEVNULL, check=True), reps.noops)
    res.noop_inprocess = timed(store.refresh, reps.noops)
    res.noop_inprocess_watcher = noop_with_watcher(root, reps.noops)
    qs = iter(gen.queries * 4)
    res.search_inprocess = timed(lambda: store.search(next(qs)), reps.queries)
    res.conflict_gate_inprocess, res.conflict_gate_unbounded = conflict_gate(store, reps.writes)
    rng = random.Random(5)
    scratch = [f"memories/bench-commit-{k}.md" for k in range(reps.writes)]
    counter = iter(range(reps.writes))

    def commit_one() -> None:
        k = next(counter)
        lang, title, content = memory_text(rng)
        (root / scratch[k]).write_text(f"# {title}\n\n{content}\n", encoding="utf-8")
        store.history.commit_paths([scratch[k]], f"bench: commit {k}", [])

    res.commit_inprocess = timed(commit_one, reps.writes)
    store.refresh()
    store.close()


def measure(n: int, watch: str | None, work: Path, args: argparse.Namespace) -> Result:
    root = work / f"store-{n}"
    if not root.exists():
        t = time.perf_counter()
        gen = generate_store(root, n)
        print(f"  generated {n} memories in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        (work / f"gen-{n}.json").write_text(json.dumps(asdict(gen), default=str))
    else:
        data = json.loads((work / f"gen-{n}.json").read_text())
        gen = Generated(root, data["ids"], data["paths"], data["queries"])
    res = Result(n=n, watch=watch or "default")
    # The 100k tier takes fewer samples: with the stat gate every call walks 100,000 files.
    big = n >= 100_000
    reps = Reps(max(20, args.queries // 4) if big else args.queries, max(10, args.writes // 3) if big else args.writes,
                15 if big else 40)
    inprocess_figures(gen, res, reps)
    res.cold_start, res.cold_start_minimal, res.trivial_call_minimal, res.minimal_peak_rss_mb = asyncio.run(
        cold_starts(root, watch, args.cold))
    asyncio.run(stdio_figures(gen, res, watch, reps))
    return res


TARGETS = {
    "cold start - minimal MCPServer (ms)": "<= 150",
    "no-op call in-process / find floor": "<= 2x",
    "no-op call in-process, watcher p50 / p95 (ms)": "<= 2 (also 100k)",
    "recall p50 / p95 stdio (ms)": "<= 15 / 40 (100k: 60 p50)",
    "remember p50 / p95 stdio (ms)": "<= 60 p50",
    "conflict gate in-process p50 / p95 (ms)": "<= 5 p50 (also 100k)",
    "full reindex (files/s)": ">= 3000",
    "server peak RSS (MB)": "<= 120",
}


def rows(r: Result) -> list[tuple[str, str]]:
    """The table's rows for one result: (figure, value)."""
    def pair(s: Stat | None) -> str:
        return f"{s.p50:.1f} / {s.p95:.1f}" if s else "-"
    assert r.cold_start and r.cold_start_minimal and r.find_floor and r.noop_inprocess and r.noop_stdio
    return [
        ("cold start to tools/list p50 (ms)", f"{r.cold_start.p50:.0f}"),
        ("  minimal MCPServer, same run (ms)", f"{r.cold_start_minimal.p50:.0f}"),
        ("cold start - minimal MCPServer (ms)", f"{r.cold_start.p50 - r.cold_start_minimal.p50:+.0f}"),
        ("trivial tool call, minimal server (ms)", pair(r.trivial_call_minimal)),
        ("find floor p50 (ms)", f"{r.find_floor.p50:.1f}"),
        ("no-op call in-process p50 (ms)", f"{r.noop_inprocess.p50:.1f}"),
        ("no-op call in-process / find floor", f"{r.noop_inprocess.p50 / r.find_floor.p50:.2f}x"),
        ("no-op call in-process, watcher p50 / p95 (ms)", pair(r.noop_inprocess_watcher)),
        ("no-op call stdio p50 / p95 (ms)", pair(r.noop_stdio)),
        ("hand edit then recall p50 / p95 (ms)", pair(r.edit_then_recall)),
        ("search in-process p50 / p95 (ms)", pair(r.search_inprocess)),
        ("recall p50 / p95 stdio (ms)", pair(r.recall_stdio)),
        ("conflict gate in-process p50 / p95 (ms)", pair(r.conflict_gate_inprocess)),
        ("  unbounded gate (1d8730e), same run (ms)", pair(r.conflict_gate_unbounded)),
        ("commit in-process p50 / p95 (ms)", pair(r.commit_inprocess)),
        ("remember p50 / p95 stdio (ms)", pair(r.remember_stdio)),
        ("full reindex (files/s)", f"{r.reindex_files_per_s:.0f}"),
        ("  per CPU second of the process (files/s)", f"{r.reindex_cpu_files_per_s:.0f}"),
        ("memory_reindex over stdio (files/s)", f"{r.reindex_stdio_files_per_s:.0f}"),
        ("server peak RSS (MB)", f"{r.server_peak_rss_mb:.0f}"),
        ("  minimal MCPServer peak RSS (MB)", f"{r.minimal_peak_rss_mb:.0f}"),
    ]


def print_table(results: list[Result]) -> None:
    for watch in dict.fromkeys(r.watch for r in results):
        group = [r for r in results if r.watch == watch]
        table = [rows(r) for r in group]
        head = f"{'figure (watcher ' + watch + ')':<42}" + "".join(f"{f'N={r.n:,}':>16}" for r in group)
        print(head + f"  {'target (10k)':<26}")
        print("-" * len(head) + "-" * 28)
        for i, (name, _) in enumerate(table[0]):
            print(f"{name:<42}" + "".join(f"{t[i][1]:>16}" for t in table) + f"  {TARGETS.get(name, '')}")
        for r in group:
            for note in r.notes:
                print(f"note N={r.n}: {note}")
        print()


def _jsonable(r: Result) -> dict:
    out: dict = {}
    for key, value in r.__dict__.items():
        out[key] = value.as_json() if isinstance(value, Stat) else value
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000", help="store sizes, comma-separated (100000 is slow)")
    ap.add_argument("--with-100k", action="store_true", help="add the 100,000-memory tier")
    ap.add_argument("--watch", choices=["default", "on", "off", "both"], default="default",
                    help="MEMORY_MCP_WATCH for the server: 1 (on), 0 (off), both, or unset (default)")
    ap.add_argument("--queries", type=int, default=200, help="recalls per size")
    ap.add_argument("--writes", type=int, default=30, help="remembers per size")
    ap.add_argument("--cold", type=int, default=5, help="cold starts per server")
    ap.add_argument("--work", type=Path, default=None, help="keep generated stores here (reused when present)")
    ap.add_argument("--out", type=Path, default=RESULTS / "perf.json")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s] + ([100_000] if args.with_100k else [])
    watches = {"default": [None], "on": ["1"], "off": ["0"], "both": ["1", "0"]}[args.watch]
    work = args.work or Path(tempfile.mkdtemp(prefix="memory-mcp-perf-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "home").mkdir(exist_ok=True)
    results = []
    try:
        for n in sizes:
            for watch in watches:
                print(f"N={n:,} watcher={watch or 'default'}", file=sys.stderr)
                # A fresh copy per watcher setting: the previous run's writes must not count.
                results.append(measure(n, watch, work, args))
                if args.work is None or len(watches) > 1:
                    shutil.rmtree(work / f"store-{n}", ignore_errors=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print_table(results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"date": datetime.now(UTC).isoformat(timespec="seconds"),
                                    "commit": _head(), "machine": machine(),
                                    "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
                                    "results": [_jsonable(r) for r in results]}, indent=2))
    print(f"wrote {args.out}")


def _head() -> str:
    """The measured commit: HEAD of this checkout, else $MEMORY_MCP_COMMIT (a snapshot has no .git)."""
    here = Path(__file__).resolve().parent
    out = subprocess.run(["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or os.environ.get("MEMORY_MCP_COMMIT", "")


def machine() -> dict[str, str]:
    """nproc, CPU model, kernel and load average: what a reader needs to weigh the numbers."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "unknown")
    return {"nproc": str(os.cpu_count()), "cpu": model, "kernel": os.uname().release,
            "loadavg": Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()}


if __name__ == "__main__":
    main()
