"""query: planning, fusion and safety, against a real SQLite index (no mocks)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_mcp.index.db import Index
from memory_mcp.index.schema import HIDDEN, FileStat, RowFilter
from memory_mcp.recall import planner, query
from memory_mcp.truth.lifecycle import WITHHOLD_AT
from memory_mcp.truth.model import Memory, State, compose_body

DOCS = {
    "deploy": "Deployment runbook\n\nWe deploy the API with blue-green switching on Fridays.",
    "ru_db": "База данных\n\nМы перенесли базу данных на PostgreSQL в марте.",
    "ko_sec": "보안 설정\n\n테스트 서버에서는 보안을 끄고 실행한다.",
    "ko_law": "법률\n\n임종석은 국가보안법위반 혐의로 수배되었다.",
    "ident": "User lookup\n\nThe handler calls getUserById and reads config/flags.yaml for E4012.",
    "snake": "Naming\n\nColumns use snake_case names such as created_at.",
    "csharp": "Backend language\n\nThe billing service is written in C# on .NET 8.",
    "cpp": "Engine language\n\nThe physics engine is written in C++ with CMake.",
    "go": "Tooling\n\nThe CLI is written in Go.",
    "mongo": "Storage\n\nSessions live in MongoDB.",
    "noise": "Lunch\n\nThe team had lunch at the noodle place on Friday.",
}


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Index, dict[int, str]]]:
    idx = Index.open(tmp_path_factory.mktemp("q") / "index.sqlite")
    with idx.transaction():
        for i, (key, text) in enumerate(DOCS.items()):
            mem = Memory(id=f"P{i:016X}", body=compose_body(text, None))
            idx.upsert(f"{key}.md", mem, [], FileStat(0, 0, ""))
    names = {r: p[:-3] for r, p in idx.conn.execute("SELECT rowid, path FROM memories")}
    yield idx, names
    idx.close()


def top(index: tuple[Index, dict[int, str]], q: str, k: int = 1) -> list[str]:
    idx, names = index
    scores = query.text_scores(idx, q, 10)
    return [names[r] for r, _ in sorted(scores.items(), key=lambda kv: -kv[1])[:k]]


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ("how do we deploy", "deploy"),
        ("deployments", "deploy"),  # English inflection via stems
        ("в какой базе данных", "ru_db"),  # Russian case forms
        ("базой данных PostgreSQL", "ru_db"),
        ("보안을 끄는", "ko_sec"),  # the Korean acceptance example: 끄는 finds 끄고
        ("국가보안법", "ko_law"),  # compound found through syllable bigrams
        ("getUserById", "ident"),
        ("user by id", "ident"),
        ("flags.yaml", "ident"),
        ("e4012", "ident"),
        ("created_at", "snake"),
        ("snake case", "snake"),
        ("C#", "csharp"),
        (".NET", "csharp"),
        ("C++", "cpp"),
        ("Go", "go"),
        ("db", "mongo"),  # 1-2 characters, no whole-word match: the LIKE fallback
    ],
)
def test_finds_the_right_memory(index: tuple[Index, dict[int, str]], q: str, expected: str) -> None:
    assert top(index, q) == [expected]


def test_csharp_and_cpp_are_told_apart(index: tuple[Index, dict[int, str]]) -> None:
    assert top(index, "written in C#", 1) == ["csharp"]
    assert top(index, "written in C++", 1) == ["cpp"]


def test_fragment_falls_back_to_trigram(index: tuple[Index, dict[int, str]]) -> None:
    # No word or stem matches "oodl"... but three letters of a substring do.
    assert top(index, "oodle") == ["noise"]


def test_empty_and_blank_queries_give_nothing(index: tuple[Index, dict[int, str]]) -> None:
    idx, _ = index
    for q in ("", "   ", "\n\t", "!!! ???", '""'):
        assert query.text_scores(idx, q, 10) == {}


def test_scores_are_positive_and_pool_is_respected(index: tuple[Index, dict[int, str]]) -> None:
    idx, _ = index
    scores = query.text_scores(idx, "the service engine team language written", 3)
    assert 0 < len(scores) <= 3
    assert all(0 < s <= 1 for s in scores.values()) and max(scores.values()) == 1.0
    assert query.text_scores(idx, "deploy", 0) == {}


def test_stop_word_only_query_still_searches(index: tuple[Index, dict[int, str]]) -> None:
    assert planner.plan("what is it").words == ["what", "is", "it"]


def test_plan_routes_tokens_to_signals() -> None:
    p = planner.plan('Why does getUserById fail with E4012 in "config/flags.yaml" on C# and .NET?')
    assert "getuserbyid" in p.words and "why" not in p.words
    assert {"get", "user", "getuserbyid", "e4012", "flag", "yaml"} <= set(p.stems)
    assert {"getuserbyid", "e4012", "config/flags.yaml"} <= set(p.tri)
    assert {"c#", ".net"} <= set(p.sym) and "c" not in p.words


def test_helpers_for_the_store() -> None:
    assert planner.tokens("What did we decide about the Deployments?") == ["decide", "deployments"]
    # Identifier parts that are stop words ("by") are dropped; the whole identifier stays.
    assert planner.stems("Deploying getUserById") == ["deploy", "get", "user", "id", "getuserbyid"]


def test_fts_or_quotes_everything() -> None:
    assert planner.fts_or(['a"b', "NEAR", "x*"]) == '"a""b" OR "NEAR" OR "x*"'


# ---- any string is a valid query --------------------------------------------------------------

FTS_SYNTAX = ['"', "'", "*", "^", "-", "+", ":", "(", ")", "{", "}", "[", "]", "NEAR", "NEAR(", "AND",
              "OR", "NOT", "title:", "body:", ",", ".", "#", "C#", "C++", ".NET", "\\", "\x00", "🙂",
              "👩‍💻", "보안을", "базы", "getUserById", "E4012", " ", "\n", "é", "ﬁ", "\u200b", "\ufeff"]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(FTS_SYNTAX) | st.text(max_size=8), max_size=20).map(" ".join))
def test_fts_syntax_soup_is_safe(index: tuple[Index, dict[int, str]], q: str) -> None:
    idx, _ = index
    scores = query.text_scores(idx, q, 5)
    assert len(scores) <= 5 and all(0 < s <= 1 for s in scores.values())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_any_text_is_safe(index: tuple[Index, dict[int, str]], q: str) -> None:
    idx, _ = index
    query.text_scores(idx, q, 5)


def test_ten_kilobytes_of_text_is_safe_and_bounded(index: tuple[Index, dict[int, str]]) -> None:
    idx, _ = index
    big = ("deploy the C# getUserById \"NEAR( AND* -x ^y (unbalanced [ 보안을 базы 🙂 " * 200)[:10240]
    p = planner.plan(big)
    assert len(p.words) <= planner.MAX_TERMS and len(p.tri) <= planner.MAX_TRI and len(p.like) <= planner.MAX_LIKE
    assert top(index, big)  # still finds something


def test_empty_index(tmp_path: Path) -> None:
    idx = Index.open(tmp_path / "empty.sqlite")
    try:
        assert query.text_scores(idx, "anything C# 보안", 10) == {}
    finally:
        idx.close()


def test_when_questions_prefer_memories_that_say_when(tmp_path: Path) -> None:
    idx = Index.open(tmp_path / "when.sqlite")
    try:
        with idx.transaction():
            for i, text in enumerate([
                "Migration notes\n\nThe Postgres migration touched every service and its migration scripts.",
                "Migration done\n\nWe finished the Postgres migration last week, on Friday.",
            ]):
                idx.upsert(f"{i}.md", Memory(id=f"P{i:016X}", body=compose_body(text, None)), [], FileStat(0, 0, ""))
        rowid = {p: r for r, p in idx.conn.execute("SELECT rowid, path FROM memories")}
        assert planner.plan("When did we do the Postgres migration?").when
        assert not planner.plan("Why did we do the Postgres migration?").when
        when = query.text_scores(idx, "When did we do the Postgres migration?", 5)
        assert max(when, key=when.get) == rowid["1.md"]
        # Without "when", the memory that says it more often still leads: the time signal is not run.
        why = query.text_scores(idx, "Why did we do the Postgres migration?", 5)
        assert max(why, key=why.get) == rowid["0.md"]
    finally:
        idx.close()


@pytest.fixture
def blank(tmp_path: Path) -> Iterator[Index]:
    """An empty index of its own for one test."""
    idx = Index.open(tmp_path / "blank.sqlite")
    yield idx
    idx.close()


def _put(idx: Index, i: int, text: str, state: State = State.ACTIVE, feedback: float = 0.0) -> None:
    mem = Memory(id=f"P{i:016X}", body=compose_body(text, None), state=state, feedback=feedback)
    idx.upsert(f"h{i}.md", mem, [], FileStat(0, 0, ""))


def _deploy_notes(idx: Index, n: int) -> Index:
    """`idx` with `n` memories that all hold the stem `deploy`, in one of two word forms."""
    with idx.transaction():
        for i in range(n):
            form = "deploys" if i % 3 else "deploying"
            _put(idx, i, f"Note {i}\n\nThe team {form} service{i} " + "again " * (i % 7))
    return idx


def test_fts_within_scores_only_those_rows_and_with_the_whole_query_bm25(blank: Index) -> None:
    idx = _deploy_notes(blank, 60)
    full = dict(idx.fts("fts_word", planner.fts_or(["deploying", "service7"]), 100))
    some = list(full)[::4] + [10_000]  # a rowid no memory has is no match
    within = idx.fts("fts_word", planner.fts_or(["deploying", "service7"]), 100, within=some)
    assert {r for r, _ in within} == set(some) - {10_000}
    assert all(s == full[r] for r, s in within)  # same statistics: bm25 as over all matches
    assert [s for _, s in within] == sorted(s for _, s in within)


def test_the_word_signal_scores_the_stem_signals_candidates_only(blank: Index) -> None:
    idx = _deploy_notes(blank, 60)
    signals = query.run_signals(idx, planner.plan("deploying"), 10)
    stem_rows = {r for r, _ in signals["stem"]}
    assert len(stem_rows) == 10
    # 20 memories say `deploying`; only those among the stem signal's ten get the word bonus.
    assert signals["word"] and {r for r, _ in signals["word"]} <= stem_rows
    full = dict(idx.fts("fts_word", planner.fts_or(["deploying"]), 100))
    assert all(s == -full[r] for r, s in signals["word"])


def test_the_word_signal_searches_everything_when_no_stem_matched(index: tuple[Index, dict[int, str]]) -> None:
    idx, names = index
    p = planner.plan("getuserbyid")
    p.stems = ["nosuchstem"]  # a stem no memory holds: the word signal must not be cut to nothing
    signals = query.run_signals(idx, p, 10)
    assert signals["stem"] == [] and {names[r] for r, _ in signals["word"]} == {"ident"}


USUAL = RowFilter(frozenset({"active"}), withhold_at=WITHHOLD_AT)


def _sql_filtered(idx: Index, table: str, match: str, limit: int) -> list[tuple[int, float]]:
    """What the usual recall's search returns when SQL leaves the hidden rows out."""
    return list(idx.conn.execute(
        f"SELECT rowid, bm25({table}) AS r FROM {table} WHERE {table} MATCH ?"
        f" AND rowid NOT IN (SELECT rowid FROM memories WHERE {HIDDEN}) ORDER BY r LIMIT ?", (match, limit)))


def test_the_hidden_rows_are_kept_in_step_with_writes_and_rollbacks(blank: Index) -> None:
    idx = blank

    def from_sql() -> set[int]:
        return {r for (r,) in idx.conn.execute(f"SELECT rowid FROM memories WHERE {HIDDEN}")}

    with idx.transaction():
        for i, (state, fb) in enumerate([(State.ACTIVE, 0.0), (State.ARCHIVED, 0.0), (State.DEPRECATED, 1.0),
                                         (State.ACTIVE, WITHHOLD_AT), (State.ACTIVE, WITHHOLD_AT + 0.1)]):
            _put(idx, i, f"Memory {i}\n\nbody {i}", state, fb)
    assert idx.hidden_rowids() == from_sql() and len(from_sql()) == 3
    with idx.transaction():
        _put(idx, 0, "Memory 0\n\nnow archived", State.ARCHIVED)  # replaces the row: a new rowid
        _put(idx, 1, "Memory 1\n\nactive again")
        assert idx.hidden_rowids() == from_sql()
    assert idx.hidden_rowids() == from_sql()
    with pytest.raises(RuntimeError), idx.transaction():
        _put(idx, 2, "Memory 2\n\nactive", State.ACTIVE)
        raise RuntimeError("roll back")
    assert idx.hidden_rowids() == from_sql() and len(from_sql()) == 3


def test_the_usual_recall_search_matches_the_sql_filter_when_the_best_matches_are_hidden(blank: Index) -> None:
    idx = blank
    with idx.transaction():
        # The 30 shortest, best-ranked matches are archived; 40 longer ones stay active.
        for i in range(30):
            _put(idx, i, f"Old {i}\n\nrelease", State.ARCHIVED)
        for i in range(30, 70):
            _put(idx, i, f"New {i}\n\nrelease notes " + "words " * i)
    for limit in (5, 20, 40, 60):
        match = planner.fts_or(["release"])
        got = idx.fts("fts_word", match, limit, USUAL)
        assert got == _sql_filtered(idx, "fts_word", match, limit)
        assert len(got) == min(limit, 40)


def test_coverage_counts_whole_terms_not_parts_of_longer_ones(blank: Index) -> None:
    idx = blank
    with idx.transaction():
        _put(idx, 0, "Alpha\n\nzetaxx gamma omega")
    (rid,) = [r for (r,) in idx.conn.execute("SELECT rowid FROM memories")]
    stems = idx.stem_texts([rid])[rid].split()
    assert "gamma" in stems and "zeta" not in stems
    p = planner.Plan(stems=["zeta", "gamma", "omega", "alpha"])
    # `zeta` is only the start of `zetaxx`: three of the four terms are held.
    assert query.apply_coverage(idx, p, {rid: 1.0})[rid] == pytest.approx((3 / 4) ** query.COVERAGE_EXP)


class _Counting(Index):
    """An index that records which `fts` calls narrowed the rows they scored."""

    narrowed = 0

    def fts(self, table: str, match: str, limit: int, where: RowFilter | None = None,
            within: Sequence[int] | None = None, among: str | None = None) -> list[tuple[int, float]]:
        if among is not None:
            self.narrowed += 1
        return super().fts(table, match, limit, where, within, among)


def test_best_of_gives_the_list_ranking_every_match_gives(tmp_path: Path) -> None:
    rng = random.Random(5)
    # Zipf-like words: a few in most memories, most in a few, as in a real store.
    vocab = [f"w{i}" for i in range(400)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    idx = _Counting.open(tmp_path / "zipf.sqlite")
    try:
        with idx.transaction():
            for i in range(600):
                words = rng.choices(vocab, weights, k=rng.randint(3, 40))
                state = State.ARCHIVED if i % 9 == 0 else State.ACTIVE
                _put(idx, i, f"Note {i}\n\n" + " ".join(words), state)
        typed = RowFilter(frozenset({"active"}), frozenset({"fact"}), (), WITHHOLD_AT)
        for _ in range(150):
            terms = list(dict.fromkeys(rng.choices(vocab, weights, k=rng.randint(2, 7))))
            limit = rng.choice([5, 20, 50])
            for where in (None, USUAL, typed):
                want = idx.fts("fts_stem", planner.fts_or(terms), limit, where)
                assert query.best_of(idx, "fts_stem", terms, limit, where) == want, (terms, limit, where)
        assert idx.narrowed > 100  # the bound held often enough for the narrowed path to be tested
    finally:
        idx.close()


def test_rank_facts_are_the_rows_own_values(blank: Index) -> None:
    # Recall scores a query's candidates on RankFacts and reads whole rows only for what it shows:
    # each fact must be the Row attribute of the same name, else the two would rank differently.
    from memory_mcp.index.schema import RankFacts, Row

    assert set(RankFacts.__dataclass_fields__) <= set(Row.__dataclass_fields__)
    with blank.transaction():
        _put(blank, 1, "A decision\n\nWe deploy on Fridays", feedback=-0.25)
        _put(blank, 2, "An old note\n\nThe deploy moved", state=State.ARCHIVED)
    rows = {r.rowid: r for r in blank.rows()}
    facts = blank.rank_facts(rows)
    assert len(facts) == 2
    for f in facts:
        assert {name: getattr(f, name) for name in RankFacts.__dataclass_fields__} == {
            name: getattr(rows[f.rowid], name) for name in RankFacts.__dataclass_fields__}
