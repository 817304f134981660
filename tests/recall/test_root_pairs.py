"""Recall across derivations of one root whose stems differ (issue 33): tests/data/root_pairs.json on
a real store. Each pair's query shares with its memory only another derivation of a root (decide /
decision, удалить / удаление, 만들려면 / 만드는); each near miss's query shares only a prefix with a word
of its memory (decimal / decidedly), and that memory should stay out of the top 3."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from conftest import ROOT

from memory_mcp.app.store import Store
from memory_mcp.index import textproc
from memory_mcp.recall import planner
from memory_mcp.truth.files import serialize
from memory_mcp.truth.model import Memory, compose_body

DATA = json.loads((ROOT / "tests" / "data" / "root_pairs.json").read_text(encoding="utf-8"))
LANGS = ("en", "ru", "ko")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, dict[str, str]]]:
    """Every memory of both lists in one store: item id -> memory id."""
    root = tmp_path_factory.mktemp("roots") / "store"
    Store.open(root).close()
    ids: dict[str, str] = {}
    for i, item in enumerate(DATA["pairs"] + DATA["near_miss"]):
        mem = Memory(id=f"01J{i:023d}", body=compose_body(item["memory"], None))
        ids[item["id"]] = mem.id
        (root / "memories" / f"{i}.md").write_text(serialize(mem), encoding="utf-8")
    s = Store.open(root)
    yield s, ids
    s.close()


def _top3(s: Store, items: list[dict], ids: dict[str, str]) -> dict[str, tuple[int, int, int]]:
    """lang -> (items whose memory is in the top 3, items that got no answer, items)."""
    out: dict[str, tuple[int, int, int]] = {}
    for lang in LANGS:
        mine = [it for it in items if it["lang"] == lang]
        answers = [[r.id for r in s.recall(it["query"], limit=3).results] for it in mine]
        out[lang] = (sum(ids[it["id"]] in a for it, a in zip(mine, answers, strict=True)),
                     sum(not a for a in answers), len(mine))
    return out


def test_the_sets_have_what_the_issue_asks() -> None:
    for key in ("pairs", "near_miss"):
        for lang in LANGS:
            assert sum(p["lang"] == lang for p in DATA[key]) >= 30, (key, lang)


def test_root_pairs_and_near_misses(store: tuple[Store, dict[str, str]], capsys: pytest.CaptureFixture[str]) -> None:
    s, ids = store
    pairs, near = _top3(s, DATA["pairs"], ids), _top3(s, DATA["near_miss"], ids)
    with capsys.disabled():
        for lang in LANGS:
            print(f"\nroot pairs {lang}: top 3 {pairs[lang][0]}/{pairs[lang][2]}, nothing {pairs[lang][1]}; "
                  f"near misses in the top 3 {near[lang][0]}/{near[lang][2]}", end="")
        print()
    # Before the root fallback (issue 33): en 13/32, ru 24/32, ko 0/30 in the top 3 (nothing at all
    # for 19, 6 and 29); after it en 32, ru 28, ko 27, nothing for 0, 3, 0. Near misses in the top 3
    # stay en 4/32, ru 5/30, ko 0/30: the word-prefix signal (`pre`) finds them, as before.
    assert pairs["en"][0] >= 32 and pairs["ru"][0] >= 28 and pairs["ko"][0] >= 27
    assert pairs["en"][1] == 0 and pairs["ko"][1] == 0
    assert near["en"][0] <= 4 and near["ru"][0] <= 5 and near["ko"][0] <= 3


@pytest.mark.parametrize(("word", "other"), [
    ("decision", "decide"), ("decide", "decision"), ("retain", "retention"), ("omission", "omit"),
    ("запустить", "запуск"), ("만드는", "만들려면"), ("골라", "고르려면"), ("바꿔", "바꾸려면"), ("도와", "도우려면"),
    ("듣는", "들으려면"), ("짓는", "지으려면"), ("써서", "쓰려면"),
])
def test_a_derivation_finds_the_other_through_its_stem(word: str, other: str) -> None:
    """What `derivations` looks up matches a stem of the other derivation, exactly or as its prefix."""
    needles = planner.derivations(word, textproc.stem_word(word))
    held = set(textproc.terms(other))
    assert any(n.strip('"*') in held if not n.endswith("*") else any(t.startswith(n.strip('"*')) for t in held)
               for n in needles), (needles, held)


@pytest.mark.parametrize(("word", "other"), [("decidedly", "decimal"), ("retainer", "retail"), ("만들어진", "만두"),
                                             ("удалённый", "удача")])
def test_a_derivation_does_not_reach_a_word_that_only_shares_its_prefix(word: str, other: str) -> None:
    needles = planner.derivations(word, textproc.stem_word(word))
    held = set(textproc.terms(other))
    assert not any(t.startswith(n.strip('"*')) if n.endswith("*") else n.strip('"') == t
                   for n in needles for t in held), (needles, held)
