"""Recall's token budget, MMR diversity and score floor, through the core on a real store."""

import pytest

from memory_mcp.app.store import Store
from memory_mcp.recall import ranking
from memory_mcp.truth import budget


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Store:
    s = Store.open(tmp_path_factory.mktemp("budget") / "store")
    # Three near-copies about the deploy freeze, and two distinct memories that also mention it.
    for i in range(3):
        s.remember(f"The deploy freeze starts Friday at noon; no deploy freeze exceptions, variant {i}.",
                   title=f"Deploy freeze on Friday {i}")
    s.remember("Hotfixes during the deploy freeze need a second reviewer from the platform team.",
               title="Hotfix review during the freeze")
    s.remember("The deploy freeze calendar lives in the release wiki page.", title="Where the freeze calendar is")
    return s


def test_max_tokens_cuts_the_list_and_says_so(store: Store) -> None:
    full = store.recall("deploy freeze", limit=10)
    assert len(full.results) == 5 and not full.truncated
    one = budget.estimate_tokens(f"{full.results[0].path} {full.results[0].title} {full.results[0].excerpt}") + 8
    cut = store.recall("deploy freeze", limit=10, max_tokens=one * 2 + 1)
    assert cut.truncated
    assert 1 <= len(cut.results) <= 2
    assert [h.id for h in cut.results] == [h.id for h in full.results[: len(cut.results)]]


def test_zero_budget_means_no_budget(store: Store) -> None:
    assert len(store.recall("deploy freeze", limit=10, max_tokens=0).results) == 5


def test_diversity_keeps_near_duplicates_from_filling_the_list(store: Store) -> None:
    plain = store.recall("deploy freeze Friday noon exceptions", limit=3)
    diverse = store.recall("deploy freeze Friday noon exceptions", limit=3, diversity=0.7)
    copies = lambda r: sum("Deploy freeze on Friday" in h.title for h in r.results)  # noqa: E731
    assert copies(plain) == 3
    assert copies(diverse) < 3
    assert diverse.results[0].id == plain.results[0].id  # the best match still leads


def test_min_score_drops_weak_results(store: Store) -> None:
    everything = store.recall("deploy freeze", limit=10)
    floor = everything.results[1].score
    kept = store.recall("deploy freeze", limit=10, min_score=floor)
    assert kept.results and all(h.score >= floor for h in kept.results)
    assert len(kept.results) < len(everything.results)


def test_mmr_without_diversity_is_relevance_order() -> None:
    items = [3.0, 2.0, 1.0]
    assert ranking.mmr(items, lambda x: x, lambda a, b: 1.0, 0.0, 2) == [3.0, 2.0]



def test_budget_smaller_than_one_result_still_returns_the_best(store: Store) -> None:
    full = store.recall("deploy freeze", limit=10)
    tiny = store.recall("deploy freeze", limit=10, max_tokens=1)
    assert [h.id for h in tiny.results] == [full.results[0].id]
    assert tiny.truncated


def test_filtered_recall_searches_deeper_than_the_first_pool(tmp_path) -> None:
    """Regression: the text pool was cut before the state filter, so many archived memories that
    match better could hide the one active memory that matches."""
    from memory_mcp.truth import files
    from memory_mcp.truth.model import Memory, State, compose_body, now_iso

    s = Store.open(tmp_path / "store")
    for i in range(90):
        mem = Memory(id=f"01JD2K3A9FZQ4W8XVBH5T{i:05d}", state=State.ARCHIVED,
                     body=compose_body(f"Kestrel pipeline kestrel pipeline note {i}.", f"Kestrel pipeline {i}"),
                     created=now_iso(), updated=now_iso())
        files.atomic_write(s.root / "memories" / f"old-{i}.md", files.serialize(mem))
    live = s.remember("The pipeline named kestrel was rebuilt last week.", title="Rebuilt")
    r = s.recall("kestrel pipeline", limit=1)
    assert [h.id for h in r.results] == [live.id]
