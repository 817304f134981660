"""The `written_by` stamp's values: what a hostile or odd place can put in them."""

from __future__ import annotations

from pathlib import Path

from memory_mcp.truth.stamp import Place, Writer, clean, stamp


def test_a_project_folder_name_that_is_not_utf8_is_stamped_as_escapes() -> None:
    """A project folder whose name is not UTF-8 reached the stamp as surrogates, and every write in
    it failed with UnicodeEncodeError in the index (the whole project could not remember)."""
    name = b"caf\xe9-app".decode("utf-8", "surrogateescape")
    value = stamp(Writer("cli", "s1", Path("/p") / name), Place(project=name, branch="main"))
    assert value["project"] == "caf\\xe9-app"
    assert all(v.encode("utf-8") for v in value.values())


def test_stamp_values_are_one_short_line() -> None:
    assert clean("a\nb\u2028c\x00d") == "a b c d"
    assert clean("x" * 500) == "x" * 120
    assert clean("stray \ud800 surrogate").encode("utf-8")
