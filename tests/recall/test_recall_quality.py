"""Recall quality (issue 13): words of one root that Snowball stems apart, against a real SQLite
index; the user's way in (the CLI as a subprocess) for the bug as it was met."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import EXE, fm_file, new_id

from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat
from memory_mcp.recall import planner, query
from memory_mcp.truth.model import Memory, compose_body

# Each memory says a thing one way; the query below says it with another form of the same root.
ROOTS = {
    "ru_logs": "Логи запросов\n\nЛоги запросов пишем в journald, ротация раз в сутки.",
    "ru_delete": "Ветки\n\nУдалять ветки после слияния в main.",
    "ru_decide": "Хранилище\n\nМы решили перейти на Postgres в марте.",
    "ru_move": "Перенос\n\nПереносить кэш на отдельный диск по пятницам.",
    "en_logger": "Logger setup\n\nThe logger writes JSON lines to stderr.",
    "en_creation": "Index creation\n\nIndex creation happens on first open.",
    "en_installer": "Windows packaging\n\nThe installer is built with WiX.",
    "ko_deploy": "배포 절차\n\n금요일에는 배포하지 않는다.",
    "ko_switch": "캐시 교체\n\n캐시 서버를 레디스로 바꾸기로 결정.",
    "ko_move": "문서 이전\n\n회의록을 노션으로 옮기는 중이다.",
    "ko_wait": "승인 대기\n\n승인을 기다리는 동안 작업을 멈춘다.",
    "noise": "Lunch\n\nThe team had lunch at the noodle place on Friday.",
}

PAIRS = [
    ("как логировать запросы", "ru_logs"),  # verb / noun: логирова vs лог
    ("логирование", "ru_logs"),
    ("удалить ветку", "ru_delete"),  # perfective / imperfective: удал vs удаля
    ("решать", "ru_decide"),  # реша vs реш
    ("перенести кэш", "ru_move"),  # перенест vs перенос
    ("logging", "en_logger"),  # -ing / -er: log vs logger
    ("create the index", "en_creation"),  # creat vs creation
    ("install on windows", "en_installer"),
    ("배포했어요", "ko_deploy"),  # verb endings: 배포했어요 / 배포하지
    # Contracted past forms: the verb's last syllable fused with 었 (바꾸+었 -> 바꿨, 옮기+었 -> 옮겼).
    ("바꿨어", "ko_switch"),
    ("옮겼다", "ko_move"),
    ("기다렸어요", "ko_wait"),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Index, dict[int, str]]]:
    idx = Index.open(tmp_path_factory.mktemp("roots") / "index.sqlite")
    with idx.transaction():
        for i, (key, text) in enumerate(ROOTS.items()):
            idx.upsert(f"{key}.md", Memory(id=f"P{i:016X}", body=compose_body(text, None)), [],
                       FileStat(0, 0, ""))
    names = {r: p[:-3] for r, p in idx.conn.execute("SELECT rowid, path FROM memories")}
    yield idx, names
    idx.close()


@pytest.mark.parametrize(("q", "expected"), PAIRS)
def test_a_word_of_the_same_root_finds_the_memory(index: tuple[Index, dict[int, str]], q: str,
                                                  expected: str) -> None:
    idx, names = index
    scores = query.text_scores(idx, q, 10)
    assert scores, f"{q!r} found nothing"
    assert names[max(scores, key=lambda r: scores[r])] == expected


def test_prefix_lookup_only_for_words_no_memory_holds(index: tuple[Index, dict[int, str]]) -> None:
    idx, names = index
    # `lunch` is held as a stem: no prefix signal runs, so `lunchbox`-like noise cannot enter.
    signals = query.run_signals(idx, planner.plan("lunch"), 10)
    assert "pre" not in signals and "root" not in signals
    signals = query.run_signals(idx, planner.plan("logging"), 10)
    assert {names[r] for r, _ in signals["pre"]} == {"en_logger"}


def test_a_root_match_ranks_below_a_stem_match(tmp_path: Path) -> None:
    idx = Index.open(tmp_path / "i.sqlite")
    try:
        with idx.transaction():
            for i, text in enumerate(["Logging\n\nLogging goes to journald.", "Loggers\n\nOur logger is structlog."]):
                idx.upsert(f"{i}.md", Memory(id=f"P{i:016X}", body=compose_body(text, None)), [], FileStat(0, 0, ""))
        rowid = {p: r for r, p in idx.conn.execute("SELECT rowid, path FROM memories")}
        scores = query.text_scores(idx, "logging", 10)
        # `log` is held, so the stem match alone answers; the logger memory is not padded in.
        assert list(scores) == [rowid["0.md"]]
    finally:
        idx.close()


def _cli_store(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A store made with `memory-mcp init`, and the environment of a person's shell for the CLI."""
    home = tmp_path / "home"
    home.mkdir()
    store = tmp_path / "store"
    env = {"HOME": str(home), "PATH": os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run([str(EXE), "init", str(store)], capture_output=True, text=True, env=env, timeout=60, check=True)
    return store, env


def test_cli_recall_of_a_russian_verb_finds_the_memory_about_its_noun(tmp_path: Path) -> None:
    store, env = _cli_store(tmp_path)
    mid = new_id()
    fm_file(store, "logs.md", "# Логи запросов\n\nЛоги запросов пишем в journald, ротация раз в сутки.\n",
            id=mid, type="fact")
    r = subprocess.run([str(EXE), "--store", str(store), "recall", "как логировать запросы"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert mid in r.stdout, r.stdout


# ------------------------------------------------------------------ dictionary aliases in free text
DICTIONARY = "# Dictionary\n\n- payments-service: the billing backend (aka: billing, Pay API)\n" \
             "    - search-service: indented by mistake (aka: finder)\n"


def test_cli_recall_of_an_alias_finds_the_entity_memories(tmp_path: Path) -> None:
    store, env = _cli_store(tmp_path)
    (store / "dictionary.md").write_text(DICTIONARY, encoding="utf-8")
    mid, other = new_id(), new_id()
    fm_file(store, "retries.md", "# Retries\n\nFailed charges are retried three times, then parked.\n",
            id=mid, type="fact", entities=["payments-service"])
    fm_file(store, "lunch.md", "# Lunch\n\nThe team has lunch at noon.\n", id=other, type="fact")

    def cli(*args: str) -> str:
        r = subprocess.run([str(EXE), "--store", str(store), *args], capture_output=True, text=True, env=env,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    for q in ("billing", "pay api retries", "payments-service"):
        out = cli("recall", q)
        assert mid in out and other not in out, (q, out)
    status = cli("status")
    assert "line 4: - search-service" in status, status
    # The template's own indented example is not reported.
    assert "canonical-name" not in status


# ------------------------------------------------------------------ no padding
def test_cli_recall_lists_no_memory_with_score_zero(tmp_path: Path) -> None:
    store, env = _cli_store(tmp_path)
    texts = ["The API deploys to Kubernetes from CI.", "Deploy only on weekdays.", "Deploy freeze in December.",
             "Deploy notes live in the wiki.", "Lunch is at noon."]
    ids = [new_id() for _ in texts]
    for i, (mid, text) in enumerate(zip(ids, texts, strict=True)):
        fm_file(store, f"m{i}.md", f"# {text}\n\n{text}\n", id=mid, type="fact")

    def cli(*args: str) -> str:
        r = subprocess.run([str(EXE), "--store", str(store), *args], capture_output=True, text=True, env=env,
                           timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout

    # `deploy` is in 4 of 5 memories, so FTS5 clamps its weight to ~0: only the memory that also
    # holds `kubernetes` matches the query with any weight; the other three came back at 0.0.
    out = cli("recall", "kubernetes deploy")
    assert ids[0] in out, out
    assert not any(mid in out for mid in ids[1:]), out
    # A recall with no query (filters only) still lists every memory.
    listed = cli("recall", "--limit", "10")
    assert all(mid in listed for mid in ids), listed
