"""textproc: the terms the fts_stem table holds and the planner searches for."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_mcp.index import textproc as tp


def _terms(text: str) -> set[str]:
    return set(tp.terms(text))


def test_english_inflections_share_a_stem() -> None:
    assert tp.stem_word("deploying") == tp.stem_word("deployed") == tp.stem_word("deploys")
    assert _terms("We adopted the migration") & _terms("adoption of migrations") >= {"adopt", "migrat"}


def test_russian_inflections_share_a_stem() -> None:
    # The same noun in four cases, and ё written as е.
    forms = ["база", "базы", "базой", "базе"]
    assert len({tp.stem_word(f) for f in forms}) == 1
    assert tp.stem_word("ёлка") == tp.stem_word("елка")


def test_irregular_english_verbs_meet_their_base_form() -> None:
    assert _terms("what did she buy") & _terms("she bought it") == {"she", "buy"}
    assert tp.stem_word("went") == tp.stem_word("go") and tp.stem_word("children") == tp.stem_word("child")
    # Forms that are mostly nouns are left alone.
    assert tp.stem_word("ground") == "ground" and tp.stem_word("rose") == "rose"


def test_script_is_chosen_per_token() -> None:
    assert tp.script_of("running") == "latin"
    assert tp.script_of("бег") == "cyrillic"
    assert tp.script_of("보안") == "hangul"
    assert tp.script_of("4012") == "digit"
    # A Russian and an English word in one text are each stemmed by their own language.
    assert tp.terms("серверы servers") == [tp.stem_word("серверы"), "server"]


def test_identifiers_split_into_parts_and_keep_the_whole() -> None:
    assert tp.split_identifier("getUserById") == ["get", "User", "By", "Id"]
    assert tp.split_identifier("HTTPServer") == ["HTTP", "Server"]
    assert tp.split_identifier("snake_case_name") == ["snake", "case", "name"]
    assert tp.split_identifier("E4012") == ["E", "4012"]
    t = _terms("call getUserById now")
    assert {"get", "user", "by", "id", "getuserbyid"} <= t
    assert {"snake", "case", "snakecase"} <= _terms("snake_case")
    assert {"config", "flag", "yaml"} <= _terms("config/flags.yaml")
    assert {"e4012", "4012"} <= _terms("error E4012")


def test_korean_particles_and_endings_are_stripped() -> None:
    assert tp.korean_stem("보안을") == "보안"
    assert tp.korean_stem("서울에서") == "서울"
    # The acceptance example: the verb stem 끄 is shared by 끄는 and 끄고.
    assert tp.korean_stem("끄는") == tp.korean_stem("끄고") == "끄"
    assert _terms("보안을 끄는") == _terms("보안을 끄고")
    # One syllable always remains.
    assert tp.korean_stem("는") == "는"


def test_korean_compounds_give_bigrams() -> None:
    t = _terms("국가보안법위반 혐의")
    assert "보안" in t and "국가" in t


def test_stem_text_is_space_joined_terms() -> None:
    text = "Deploying getUserById to 서울에서 серверы"
    assert tp.stem_text(text) == " ".join(tp.terms(text))
    assert tp.stem_text("") == ""


def test_word_tokens_match_unicode61_units() -> None:
    assert tp.word_tokens("snake_case C++ Ｆｕｌｌ-width café") == ["snake", "case", "c", "full", "width", "café"]


def test_chunks_keep_inner_punctuation() -> None:
    assert tp.chunks("Use C++ and .NET, see (config/flags.yaml).") == ["Use", "C++", "and", ".NET", "see",
                                                                       "config/flags.yaml"]


def test_stopwords_cover_the_three_languages() -> None:
    assert tp.is_stopword("what") and tp.is_stopword("когда") and tp.is_stopword("무엇")
    assert not tp.is_stopword("deploy")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_terms_never_fail_and_are_whitespace_free(text: str) -> None:
    for term in tp.terms(text):
        assert term and not any(ch.isspace() for ch in term)
    assert tp.stem_text(text) == tp.stem_text(text)
