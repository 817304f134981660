"""The conflict gate against the labelled pairs of tests/data/conflict_pairs.json (issue 13), on a
real SQLite index: it should raise a pair when the new memory replaces or contradicts the old one,
and not for a compatible detail or an unrelated memory that shares an entity."""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

from memory_mcp.index.db import Index
from memory_mcp.index.schema import FileStat
from memory_mcp.recall import conflicts
from memory_mcp.truth.model import Memory, compose_body

DATA = ROOT / "tests" / "data" / "conflict_pairs.json"
BENCHMARKS = ROOT / "benchmarks"
RAISE = {"replaces", "contradicts"}
OLD, NEW = "2026-10-01T00:00:00Z", "2026-11-01T00:00:00Z"


def _pairs() -> list[dict]:
    return list(json.loads(DATA.read_text(encoding="utf-8"))["pairs"])


def _topic(pair: dict) -> str:
    return str(pair["id"]).split("/")[0]


@pytest.fixture(scope="module")
def olds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Index, dict[str, str]]]:
    """Every old memory of the set in one index (each is the others' distractor): topic -> id."""
    idx = Index.open(tmp_path_factory.mktemp("gate") / "index.sqlite")
    ids: dict[str, str] = {}
    with idx.transaction():
        for pair in _pairs():
            topic = _topic(pair)
            if topic in ids:
                continue
            ids[topic] = f"O{len(ids):025d}"
            old = pair["old"]
            mem = Memory(id=ids[topic], body=compose_body(old["text"], None), entities=old["entities"],
                         created=OLD, updated=OLD)
            idx.upsert(f"{topic}.md", mem, [e.lower() for e in old["entities"]], FileStat(0, 0, ""))
    yield idx, ids
    idx.close()


def _raised(idx: Index, old_id: str, new: dict) -> bool:
    mem = Memory(id="N" * 26, body=compose_body(new["text"], None))
    subject = conflicts.Subject(mem.id, mem.title, mem.excerpt, [e.lower() for e in new["entities"]], NEW, [])
    return any(n.row.id == old_id for n in conflicts.neighbours(idx, subject))


def test_the_labelled_set_has_what_the_issue_asks() -> None:
    pairs = _pairs()
    assert len(pairs) >= 200
    for cls in ("replaces", "contradicts", "compatible", "unrelated"):
        assert sum(p["class"] == cls for p in pairs) >= 40, cls
    for lang in ("en", "ru", "ko", "ident"):
        assert sum(p["lang"] == lang for p in pairs) >= 30, lang
    held = [p for p in pairs if p["split"] == "held_out"]
    assert abs(len(held) - len(pairs) / 2) <= len(pairs) * 0.05
    # A topic is wholly in one half, so no old memory the gate was tuned on is scored.
    halves: dict[str, set[str]] = {}
    for p in pairs:
        halves.setdefault(_topic(p), set()).add(p["split"])
    assert all(len(s) == 1 for s in halves.values())


def test_held_out_precision_and_recall(olds: tuple[Index, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    idx, ids = olds
    tp = fp = fn = 0
    missed: list[str] = []
    for pair in (p for p in _pairs() if p["split"] == "held_out"):
        raised = _raised(idx, ids[_topic(pair)], pair["new"])
        positive = pair["class"] in RAISE
        tp += raised and positive
        fp += raised and not positive
        fn += positive and not raised
        if raised != positive:
            missed.append(f"{'missed' if positive else 'raised'} {pair['id']}")
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    with capsys.disabled():
        print(f"\nconflict gate, held-out half: precision {precision:.3f} recall {recall:.3f} "
              f"(tp {tp}, fp {fp}, fn {fn}); wrong: {', '.join(missed) or 'none'}")
    # Issue 33 asks 0.9 for both: restatements write their value in other words ("eight gigabytes"
    # for "2 GB", "every hour" for "once a day", 레디스 for Redis), which quantities and loanwords read.
    assert precision >= 0.9 and recall >= 0.9, missed


def test_generated_compatible_notes_rarely_raise_a_conflict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The perf harness's notes are written from templates about random services and people and
    never contradict each other; the gate over them (each against the ones before, as an import
    runs it) raised a conflict on nearly every note before it weighed what the notes say."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    perf = __import__("perf")
    rng = random.Random(7)
    idx = Index.open(tmp_path / "index.sqlite")
    raised = 0
    n = 400
    try:
        for i in range(n):
            _, title, content = perf.memory_text(rng)
            entities = rng.sample(perf.ENTITIES, rng.randint(0, 4))
            mem = Memory(id=f"M{i:025d}", body=compose_body(content, title), entities=entities, created=OLD, updated=OLD)
            subject = conflicts.Subject(mem.id, mem.title, mem.excerpt, entities, OLD, [])
            raised += bool(conflicts.neighbours(idx, subject))
            with idx.transaction():
                idx.upsert(f"{i}.md", mem, entities, FileStat(0, 0, ""))
    finally:
        idx.close()
        sys.modules.pop("perf", None)
    assert raised <= n * 0.05, f"{raised} of {n} notes raised a conflict"


def _note(idx: Index, i: int, text: str, entities: list[str]) -> Memory:
    mem = Memory(id=f"M{i:025d}", body=compose_body(text, None), entities=entities, created=OLD, updated=OLD)
    idx.upsert(f"{i}.md", mem, entities, FileStat(0, 0, ""))
    return mem


def test_a_restatement_behind_many_memories_of_its_entity_is_still_raised(tmp_path: Path) -> None:
    """The gate reads only the most recent memories of an entity; an old memory it replaces is found
    by its distinctive words instead of by reading every memory that shares the entity."""
    idx = Index.open(tmp_path / "index.sqlite")
    try:
        with idx.transaction():
            old = _note(idx, 0, "The heron ingest worker pool runs 4 workers on the batch host.", ["heron"])
            for i in range(1, 3 * conflicts.ENTITY_LIMIT):
                _note(idx, i, f"Heron release {i} notes: the changelog lists fixture number {i}.", ["heron"])
        subject = conflicts.Subject("N" * 26, "Heron ingest workers", "The heron ingest worker pool now runs "
                                    "16 workers on the batch host.", ["heron"], NEW, [])
        assert [n.row.id for n in conflicts.neighbours(idx, subject)] == [old.id]
        assert len(conflicts.candidates(idx, subject)) <= conflicts.ENTITY_LIMIT + conflicts.PROBE_LIMIT
    finally:
        idx.close()


def test_a_restatement_that_swaps_a_value_without_saying_so_is_raised(tmp_path: Path) -> None:
    """"run on Python 3.10" then "target Python 3.12", with no word that says it changed, was not
    raised; the same memory naming 3.10 again beside a new detail, or a number in another place, is not."""
    idx = Index.open(tmp_path / "index.sqlite")
    try:
        with idx.transaction():
            old = _note(idx, 0, "The heron ingest workers run on Python 3.10 on the batch host.", ["heron"])

        def raised(text: str) -> bool:
            mem = Memory(id="N" * 26, body=compose_body(text, None))
            subject = conflicts.Subject(mem.id, mem.title, mem.excerpt, ["heron"], NEW, [])
            return [n.row.id for n in conflicts.neighbours(idx, subject)] == [old.id]
        assert raised("Heron ingest workers target Python 3.12 on the batch host.")
        assert not raised("Heron ingest workers keep Python 3.10 wheels in a local cache.")
        assert not raised("The heron batch host runs ingest workers with 16 GB of memory.")
    finally:
        idx.close()


def test_values_are_numbers_identifiers_and_names_not_a_capital_that_opens_a_sentence() -> None:
    found = {(v.kind, v.key) for v in conflicts.values(
        "The cache is 2 GB. Deploys of Osprey go to eu-west-1 on Tuesday; 알림은 Kafka를 거친다.")}
    assert found == {("number", "2"), ("name", "osprey"), ("ident", "eu-west-1"), ("name", "tuesday"),
                     ("name", "kafka")}


def test_term_counts_follow_the_rows_as_they_change(tmp_path: Path) -> None:
    """The gate's rarity weights come from counts kept with the rows: a replaced or removed memory's
    terms stop counting."""
    idx = Index.open(tmp_path / "index.sqlite")
    try:
        with idx.transaction():
            _note(idx, 0, "Kestrel caches live in redis.", [])
            _note(idx, 1, "Kestrel queues live in kafka.", [])
        assert idx.doc_freq(["kestrel", "redi", "kafka", "absent"]) == {"kestrel": 2, "redi": 1, "kafka": 1, "absent": 0}
        with idx.transaction():
            _note(idx, 0, "Kestrel caches live in memcached.", [])  # same path: replaces the row
            idx.remove_path("1.md")
        assert idx.doc_freq(["kestrel", "redi", "kafka"]) == {"kestrel": 1, "redi": 0, "kafka": 0}
    finally:
        idx.close()


def _recount(idx: Index) -> dict[str, int]:
    """term -> memories holding it, counted afresh from the `fts_stem` rows."""
    counts: dict[str, int] = {}
    for title, body in idx.conn.execute("SELECT title, body FROM fts_stem"):
        for term in set(f"{title} {body}".split()):
            counts[term] = counts.get(term, 0) + 1
    return counts


def test_term_counts_held_back_in_a_transaction_match_a_recount(tmp_path: Path) -> None:
    """A bulk index writes the term counts once, before the transaction commits: read inside the
    transaction (as the gate does during a write), after it, and after one rolled back, they are
    what a recount of the rows gives."""
    idx = Index.open(tmp_path / "index.sqlite")
    try:
        with idx.transaction():
            for i in range(40):
                _note(idx, i, f"Osprey shard {i % 7} lives on host {i % 3}; kestrel {i}.", [])
            assert idx.doc_freq(["osprey", "kestrel", "shard"]) == {"osprey": 40, "kestrel": 40, "shard": 40}
            for i in range(0, 40, 2):
                _note(idx, i, f"Heron replaced osprey {i}.", [])  # same path: the row is replaced
            for i in range(1, 40, 4):
                idx.remove_path(f"{i}.md")
        stored = dict(idx.conn.execute("SELECT term, doc FROM term_df"))
        assert stored == _recount(idx)
        with pytest.raises(RuntimeError), idx.transaction():
            _note(idx, 100, "Albatross only here.", [])
            raise RuntimeError("rolled back")
        assert idx.doc_freq(["albatross"]) == {"albatross": 0}
        assert dict(idx.conn.execute("SELECT term, doc FROM term_df")) == _recount(idx)
    finally:
        idx.close()


def _raised_over(tmp_path: Path, old_text: str, new_text: str, entities: list[str]) -> bool:
    idx = Index.open(tmp_path / "index.sqlite")
    try:
        with idx.transaction():
            old = _note(idx, 0, old_text, entities)
        mem = Memory(id="N" * 26, body=compose_body(new_text, None))
        subject = conflicts.Subject(mem.id, mem.title, mem.excerpt, entities, NEW, [])
        return [n.row.id for n in conflicts.neighbours(idx, subject)] == [old.id]
    finally:
        idx.close()


@pytest.mark.parametrize(("old", "new", "entities"), [
    ("The heron cache is 2 GB and lives on the local disk.", "Heron keeps eight gigabytes for its cache on the local disk.",
     ["heron"]),
    ("Heron backups of the ledger run once a day.", "Heron ledger backups run every hour.", ["heron"]),
    ("Бэкапы базы героя делаются раз в сутки.", "Бэкапы базы героя делаются каждый час.", ["герой"]),
    ("회계 데이터베이스 캐시는 레디스에 둔다.", "회계 데이터베이스 캐시는 멤캐시드에 둔다.", ["회계"]),
    ("헤론 서버는 서울 리전에 있다.", "헤론 서버는 도쿄 리전에 있다.", ["헤론"]),
])
def test_a_value_restated_in_other_words_is_raised(tmp_path: Path, old: str, new: str, entities: list[str]) -> None:
    """A number spelt out with its unit named otherwise, how often in other words, and a Korean
    name written in Hangul were no value the gate could see: these restatements were not raised."""
    assert _raised_over(tmp_path, old, new, entities)


@pytest.mark.parametrize(("old", "new"), [
    ("The heron cache is 2 GB and lives on the local disk.", "The heron cache is two gigabytes, kept on local disk."),
    ("Heron backups of the ledger run once a day.", "Heron ledger backups run daily, kept in the vault."),
    ("헤론 캐시는 Redis에 둔다.", "헤론 캐시는 레디스에 둔다."),
])
def test_the_same_value_in_other_words_is_no_swap(old: str, new: str) -> None:
    assert not conflicts.swapped(new, old, ["heron"], ["heron"])


def test_quantities_read_numbers_units_and_frequencies() -> None:
    found = {(v.kind, v.key) for v in conflicts.values(
        "Backups run twice a day, the cache holds 8GB; 보고서는 6시간마다 만들고 로그는 하루에 한 번 지운다.")}
    assert found == {("often", "2/1d"), ("number", "8"), ("often", "1/6h"), ("often", "1/1d")}
    assert {(v.kind, v.key) for v in conflicts.values("Очередь чистится каждые два часа, раз в неделю архив.")} \
        == {("often", "1/2h"), ("often", "1/1w")}
    assert {v.key for v in conflicts.values("The worker keeps 5 GB")} == {v.key for v in conflicts.values(
        "The worker keeps five gigabytes")} == {"5"}
