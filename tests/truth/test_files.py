"""The file format (design section 2): parse, serialize, round-trip stability, hostile input."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_mcp.truth import files, strictyaml
from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.model import Memory, MemoryType, State, Trust, provisional_id

ID = "01JD2K3A9FZQ4W8XVBH5T6N7RM"
ID2 = "01JD2K3A9FZQ4W8XVBH5T6N7RN"

# ------------------------------------------------------------------ strategies
YAML_LOOKALIKES = [
    "true", "false", "yes", "no", "on", "off", "null", "Null", "~", "1.5", "1e3", "0x1F", "017", ".inf",
    "-.inf", ".nan", "2026-01-01", "2026-01-01T10:00:00Z", "12:30", "- x", "-x", "--", "---", "...",
    "#comment", "a #b", "a: b", "a:b", "'q'", '"dq"', "it's", '"', "'", "[a]", "{b: c}", "&anchor",
    "*alias", "!tag", "!!python/object", "%x", "@x", "`x", "? q", "| x", "> x", " lead", "trail ",
    "", " ", "\t", "a\\b", "C#", "c++", "<<", "=", "\u00e9t\u00e9", "\u043f\u0430\u043c\u044f\u0442\u044c",
    "\ud55c\uad6d\uc5b4", "\U0001f600", "a\nb", "a\rb", "\x00", "\x1b[0m", "\u2028", "\ufeffbom",
]
# Everything YAML can carry in a double-quoted scalar. Left out (and tested on their own below):
# surrogates (not encodable), DEL and C1 controls (YAML refuses them), NEL (a YAML line break).
TEXT_CHARS = st.characters(
    blacklist_categories=("Cs",),
    blacklist_characters="\x7f\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c\x8d\x8e\x8f"
                         "\x90\x91\x92\x93\x94\x95\x96\x97\x98\x99\x9a\x9b\x9c\x9d\x9e\x9f\ufffe\uffff",
)
texts = st.one_of(st.sampled_from(YAML_LOOKALIKES), st.text(TEXT_CHARS, max_size=30))
ulids = st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=26, max_size=26).map(lambda s: "01J" + s[3:])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40),
                    st.floats(allow_nan=False, allow_infinity=True, width=64), texts)
nested = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(texts, inner, max_size=3)), max_leaves=8)
extra_keys = texts.filter(lambda k: k not in files.KEY_ORDER)
bodies = st.one_of(
    st.sampled_from(["", "# Title\n\nText.\n", "no heading\n", "# t\n\n---\nnot frontmatter\n---\n",
                     "line\r\nwith crlf\r\n", "\n\n# late heading\n"]),
    st.text(TEXT_CHARS, max_size=200),
)


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    return Memory(
        id=draw(ulids),
        body=draw(bodies),
        type=draw(st.sampled_from(list(MemoryType))),
        state=draw(st.sampled_from(list(State))),
        trust=draw(st.sampled_from(list(Trust))),
        entities=draw(st.lists(texts, max_size=4)),
        source=draw(texts),
        created=draw(st.one_of(st.none(), st.just("2026-08-24T14:03:00Z"), texts)),
        updated=draw(st.one_of(st.none(), st.just("2026-08-24T14:03:00Z"), texts)),
        review_after=draw(st.one_of(st.none(), st.just("2026-11-01"), texts)),
        conflicts_with=draw(st.lists(ulids, max_size=2)),
        distinct_from=draw(st.lists(ulids, max_size=2)),
        supersedes=draw(st.lists(ulids, max_size=2)),
        superseded_by=draw(st.one_of(st.none(), ulids)),
        deprecated_reason=draw(st.one_of(st.none(), texts)),
        feedback=draw(st.floats(-1, 1).map(lambda x: round(x, 2))),
        extra=draw(st.dictionaries(extra_keys, nested, max_size=4)),
    )


ROUND_TRIP = settings(max_examples=200, derandomize=True, deadline=None,
                      suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------ round trip
@ROUND_TRIP
@given(memories())
def test_serialize_parse_serialize_is_byte_identical(mem: Memory) -> None:
    text = files.serialize(mem)
    again = files.serialize(files.parse(text, "memories/x.md"))
    assert again == text


@ROUND_TRIP
@given(memories())
def test_parse_gives_back_every_field(mem: Memory) -> None:
    back = files.parse(files.serialize(mem), "memories/x.md")
    assert back.id == mem.id and back.body == mem.body
    assert (back.type, back.state, back.trust) == (mem.type, mem.state, mem.trust)
    assert back.entities == mem.entities
    assert back.source == mem.source
    assert back.created == (mem.created or None)
    assert back.updated == (mem.updated or None)
    assert back.review_after == (mem.review_after or None)
    assert (back.conflicts_with, back.distinct_from, back.supersedes) == (
        mem.conflicts_with, mem.distinct_from, mem.supersedes)
    assert back.superseded_by == mem.superseded_by
    assert back.deprecated_reason == (mem.deprecated_reason or None)
    assert back.feedback == mem.feedback
    assert back.extra == mem.extra and list(back.extra) == list(mem.extra)
    assert back.provisional is False


@settings(max_examples=60, derandomize=True, deadline=None)
@given(memories().filter(lambda m: "\r" not in m.body and not m.body.startswith("\ufeff")))
def test_round_trip_through_a_real_file(tmp_path_factory: pytest.TempPathFactory, mem: Memory) -> None:
    path = tmp_path_factory.mktemp("rt") / "m.md"
    files.atomic_write(path, files.serialize(mem))
    text = files.decode(path.read_bytes())
    assert text == files.serialize(mem)
    assert files.serialize(files.parse(text, "memories/m.md")) == text


def test_key_order_is_fixed_and_empty_optionals_omitted() -> None:
    mem = Memory(id=ID, body="# T\n\nx\n", type=MemoryType.DECISION, entities=["a"], source="s",
                 created="2026-01-01T00:00:00Z", updated="2026-01-02T00:00:00Z", review_after="2026-03-01",
                 conflicts_with=[ID2], distinct_from=[ID2], supersedes=[ID2], superseded_by=ID2,
                 deprecated_reason="old", feedback=-0.2, extra={"zz": 1, "aa": 2})
    keys = [ln.split(":")[0] for ln in files.serialize(mem).split("---\n")[1].splitlines()]
    assert keys == ["id", "type", "state", "trust", "entities", "source", "created", "updated", "review_after",
                    "conflicts_with", "distinct_from", "supersedes", "superseded_by", "deprecated_reason",
                    "feedback", "zz", "aa"]
    bare = files.serialize(Memory(id=ID, body="b\n"))
    assert bare == f"---\nid: {ID}\ntype: fact\nstate: active\ntrust: agent-inferred\nentities: []\n---\nb\n"


def test_yaml_lookalike_strings_stay_strings() -> None:
    values = ["true", "null", "1.5", "2026-01-01", "~", "- x", "#c", "a: b", "yes", "0x1F"]
    mem = Memory(id=ID, body="b\n", entities=values, source="true", review_after="2026-01-01",
                 deprecated_reason="null")
    back = files.parse(files.serialize(mem), "memories/x.md")
    assert back.entities == values
    assert (back.source, back.review_after, back.deprecated_reason) == ("true", "2026-01-01", "null")


def test_unknown_keys_preserved_in_order_with_nested_values() -> None:
    text = (f"---\nid: {ID}\ntype: fact\nstate: active\ntrust: user-stated\nentities: [x]\n"
            "project: {name: web, tags: [a, b], nested: {deep: [1, 2.5, null, true]}}\n"
            "aliases:\n  - one\n  - 'two: three'\n"
            "when: 2026-01-01\n---\n# T\n\nbody\n")
    mem = files.parse(text, "memories/x.md")
    assert list(mem.extra) == ["project", "aliases", "when"]
    assert mem.extra["project"] == {"name": "web", "tags": ["a", "b"], "nested": {"deep": [1, 2.5, None, True]}}
    assert mem.extra["when"] == "2026-01-01"  # timestamps are kept as text, not turned into dates
    out = files.serialize(mem)
    assert files.parse(out, "memories/x.md").extra == mem.extra
    assert files.serialize(files.parse(out, "memories/x.md")) == out


def test_timestamps_written_by_hand_stay_text() -> None:
    mem = files.parse(f"---\nid: {ID}\ncreated: 2026-08-24T14:03:00Z\nreview_after: 2026-11-01\n---\nb\n", "m.md")
    assert mem.created == "2026-08-24T14:03:00Z" and mem.review_after == "2026-11-01"


# ------------------------------------------------------------------ files without frontmatter or id
def test_file_without_frontmatter_gets_a_stable_provisional_id() -> None:
    mem = files.parse("# Hand note\n\nSome text.\n", "memories/sub/note.md")
    assert mem.provisional and mem.id == provisional_id("memories/sub/note.md")
    assert mem.title == "Hand note" and mem.excerpt == "Some text."
    assert files.parse("# Hand note\n", "memories/sub/note.md").id == mem.id
    assert files.parse("# Hand note\n", "memories/other.md").id != mem.id


def test_frontmatter_without_id_is_provisional() -> None:
    mem = files.parse("---\ntype: decision\n---\nFirst line is the title\n", "memories/a.md")
    assert mem.provisional and mem.type == MemoryType.DECISION and mem.title == "First line is the title"


# ------------------------------------------------------------------ refused input
@pytest.mark.parametrize(("text", "reason"), [
    ("---\nid: [unclosed\n---\nb\n", "broken YAML"),
    ("---\nid: " + ID + "\nno closing line\n", "never closed"),
    ("---\n- a\n- b\n---\nb\n", "mapping"),
    ("---\nid: not-a-ulid\n---\nb\n", "not a ULID"),
    ("---\nid: " + ID + "\nstate: zombie\n---\nb\n", "unknown state"),
    ("---\nid: " + ID + "\ntype: rumour\n---\nb\n", "unknown type"),
    ("---\nid: " + ID + "\nfeedback: lots\n---\nb\n", "feedback"),
    ("---\nid: " + ID + "\nentities: [{a: 1}]\n---\nb\n", "entities"),
    ("---\nid: " + ID + "\nsource: {a: 1}\n---\nb\n", "source"),
    ("---\nid: " + ID + "\n1: x\n---\nb\n", "must be text"),
])
def test_broken_frontmatter_is_refused_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ParseError) as e:
        files.parse(text, "memories/x.md")
    assert reason in e.value.message
    assert e.value.code == "frontmatter_parse"


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip(string.ascii_lowercase, string.ascii_lowercase[1:12], strict=False))
    with pytest.raises(ParseError, match="aliases"):
        files.parse(f"---\nid: {ID}\n{bomb}---\nb\n", "memories/x.md")


def test_python_object_tag_is_not_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = (f"---\nid: {ID}\nx: !!python/object/apply:os.system [\"touch {marker}\"]\n"
            f"y: !!python/object/new:pathlib.Path [\"{marker}\"]\n---\nb\n")
    with pytest.raises(ParseError, match="tag"):
        files.parse(text, "memories/x.md")
    assert not marker.exists()


def test_decode_refuses_binary_latin1_and_huge_files() -> None:
    with pytest.raises(ParseError, match="binary"):
        files.decode(b"---\nid: x\n---\n\x00\x01\x02")
    with pytest.raises(ParseError, match="UTF-8"):
        files.decode("# caf\u00e9\n".encode("latin-1"))
    with pytest.raises(ParseError, match="limited"):
        files.decode(b"a" * (files.MAX_FILE_BYTES + 1))
    with pytest.raises(ParseError, match="frontmatter over"):
        files.parse("---\nid: " + ID + "\nx: '" + "a" * files.MAX_FRONTMATTER_BYTES + "'\n---\nb\n", "m.md")


def test_decode_accepts_crlf_and_bom() -> None:
    text = files.decode(b"\xef\xbb\xbf---\r\nid: " + ID.encode() + b"\r\n---\r\n# T\r\n\r\nbody\r\n")
    mem = files.parse(text, "memories/x.md")
    assert mem.id == ID and mem.body == "# T\n\nbody\n"


def test_feedback_out_of_range_is_clamped() -> None:
    assert files.parse(f"---\nid: {ID}\nfeedback: 3\n---\nb\n", "m.md").feedback == 1.0
    assert files.parse(f"---\nid: {ID}\nfeedback: -7.5\n---\nb\n", "m.md").feedback == -1.0


# ------------------------------------------------------------------ atomic write
def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "m.md"
    files.atomic_write(path, "one\n")
    files.atomic_write(path, "two \u00e9\n")
    assert path.read_bytes() == "two \u00e9\n".encode()
    assert [p.name for p in path.parent.iterdir()] == ["m.md"]


# ------------------------------------------------------------------ characters YAML cannot carry
@pytest.mark.parametrize("value", ["a\x7fb", "a\x9bb"])
def test_control_characters_survive_the_round_trip(value: str) -> None:
    mem = Memory(id=ID, body="b\n", source=value, entities=[value])
    back = files.parse(files.serialize(mem), "memories/x.md")
    assert back.source == value and back.entities == [value]


def test_next_line_character_survives_the_round_trip() -> None:
    mem = Memory(id=ID, body="b\n", extra={"note": "a\x85b"})
    text = files.serialize(mem)
    assert files.serialize(files.parse(text, "memories/x.md")) == text


def test_all_digit_id_survives_the_round_trip() -> None:
    mem = Memory(id="00000000000000000000000000", body="b\n")
    assert files.parse(files.serialize(mem), "memories/x.md").id == mem.id


# ------------------------------------------------------------------ fast paths agree with YAML
SIMPLE_KEYS = ["id", "type", "state", "entities", "source", "created", "feedback", "supersedes", "colour"]


@given(st.lists(st.tuples(st.sampled_from(SIMPLE_KEYS),
                          st.one_of(st.sampled_from(YAML_LOOKALIKES), st.text(TEXT_CHARS, max_size=12),
                                    st.lists(st.one_of(st.sampled_from(YAML_LOOKALIKES),
                                                       st.text(TEXT_CHARS, max_size=8)), max_size=3).map(
                                        lambda xs: "[" + ", ".join(xs) + "]"))),
                min_size=1, max_size=6))
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_simple_frontmatter_reader_reads_what_yaml_reads_or_passes(lines: list[tuple[str, str]]) -> None:
    """The YAML-free reader of plain `key: value` frontmatter must give exactly the YAML loader's
    mapping, or step aside (None) and leave the text to YAML."""
    text = "".join(f"{k}: {v}\n" for k, v in lines)
    fast = files._simple_frontmatter(text)
    if fast is not None:
        assert fast == strictyaml.load(text)


def test_simple_frontmatter_reader_takes_what_serialize_writes() -> None:
    mem = Memory(id=ID, body="# T\n\nb\n", type=MemoryType.DECISION, state=State.ARCHIVED, trust=Trust.USER_STATED,
                 entities=["pnpm", "web-workspace", "\u043f\u0430\u043c\u044f\u0442\u044c"], source="session 2026-08-24",
                 created="2026-08-24T14:03:00Z", updated="2026-08-24T14:03:00Z", supersedes=[ID2], feedback=-0.2)
    fm, _ = files.split(files.serialize(mem))
    assert files._simple_frontmatter(fm or "") == strictyaml.load(fm or "")
    assert files._simple_frontmatter(fm or "") is not None
