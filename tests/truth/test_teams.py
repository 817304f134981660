"""The team pointer file (`.memory.toml`) is read as hostile input: a cloned repository wrote it. Only
the `remote` key, a size limit, a regular UTF-8 TOML file, and a remote git fetches over a network or
an absolute path outside the clone; everything else is refused with `[invalid_pointer]` and a reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_mcp.truth import teams
from memory_mcp.truth.errors import InvalidPointer


def pointer(project: Path, text: str | bytes) -> Path:
    path = project / teams.POINTER
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("url", ["https://git.example.com/team/app-memory.git", "http://git.internal/team/mem",
                                 "ssh://git@git.example.com/team/app-memory", "git://git.example.com/mem.git",
                                 "git@github.com:team/app-memory.git", "host:team/mem", "/srv/git/team-memory.git",
                                 "file:///srv/git/team-memory.git", "https://ann@git.example.com/team/mem.git"])
def test_remotes_a_team_uses_are_read(tmp_path: Path, url: str) -> None:
    pointer(tmp_path, teams.pointer_text(url))
    assert teams.read_pointer(tmp_path) == url


@pytest.mark.parametrize(("url", "why"), [
    ("ext::sh -c touch% pwned", "TRANSPORT::ADDRESS"),
    ("fd::3", "TRANSPORT::ADDRESS"),
    ("transport::https://x", "TRANSPORT::ADDRESS"),
    ("--upload-pack=touch pwned", "starts with '-'"),
    ("-oProxyCommand=x", "starts with '-'"),
    ("ftp://host/x.git", "scheme 'ftp'"),
    ("https://ann:secret@host/x.git", "password"),
    ("https://host/x.git\n[alias]", "white space or control"),
    ("https://host/a b", "white space or control"),
    ("../other-project/.memory", "absolute path"),
    ("~/team.git", "absolute path"),
    ("", "1 to"),
    ("https://host/" + "x" * 2000, "1 to"),
])
def test_hostile_remotes_are_refused_with_the_reason(tmp_path: Path, url: str, why: str) -> None:
    pointer(tmp_path, teams.pointer_text(url))
    with pytest.raises(InvalidPointer, match=r"refused") as e:
        teams.read_pointer(tmp_path)
    assert why in e.value.message and str(e.value).startswith("[invalid_pointer]")


@pytest.mark.parametrize("inside", ["", "/.git", "/.git/../src", "/sub/../.git"])
def test_a_path_into_the_clone_itself_is_refused_as_a_path_or_a_file_url(tmp_path: Path, inside: str) -> None:
    (tmp_path / "sub").mkdir()
    for url in (f"{tmp_path}{inside}", f"file://{tmp_path}{inside}", str(tmp_path.parent)):
        pointer(tmp_path, teams.pointer_text(url))
        with pytest.raises(InvalidPointer, match="project's own clone"):
            teams.read_pointer(tmp_path)


def test_a_link_to_the_clone_from_outside_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    os.symlink(project, tmp_path / "alias")
    pointer(project, teams.pointer_text(str(tmp_path / "alias" / ".git")))
    with pytest.raises(InvalidPointer, match="project's own clone"):
        teams.read_pointer(project)


@pytest.mark.parametrize(("text", "why"), [
    ('remote = "https://h/x.git"\nupload_pack = "sh"\n', "keys a team pointer file does not define"),
    ('[remote]\nurl = "https://h/x.git"\n', "names no remote"),
    ('remote = ["https://h/x.git"]\n', "names no remote"),
    ("# nothing\n", "names no remote"),
    ('remote = "https://h/x.git\n', "not UTF-8 TOML"),
    (b'remote = "https://h/\xff.git"\n', "not UTF-8 TOML"),
    ("# " + "x" * teams.POINTER_MAX_BYTES + '\nremote = "https://h/x.git"\n', "over 4096 bytes"),
])
def test_a_file_that_is_not_a_pointer_is_refused(tmp_path: Path, text: str | bytes, why: str) -> None:
    pointer(tmp_path, text)
    with pytest.raises(InvalidPointer, match=why):
        teams.read_pointer(tmp_path)


def test_a_pointer_that_is_a_link_or_a_fifo_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text('remote = "https://h/x.git"\n')
    project = tmp_path / "proj"
    project.mkdir()
    os.symlink(secret, project / teams.POINTER)
    with pytest.raises(InvalidPointer, match="link"):
        teams.read_pointer(project)
    (project / teams.POINTER).unlink()
    os.mkfifo(project / teams.POINTER)
    with pytest.raises(InvalidPointer, match="named pipe"):  # read without blocking on a writer
        teams.read_pointer(project)


def test_no_pointer_file_is_none_and_found_is_none(tmp_path: Path) -> None:
    assert teams.read_pointer(tmp_path) is None
    assert teams.find(tmp_path, str(tmp_path), tmp_path / "home") is None


def test_every_spelling_of_one_remote_has_one_clone_and_it_is_never_in_the_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    spellings = ["git@git.example.com:team/app-memory.git", "ssh://git@git.example.com/team/app-memory",
                 "https://git.example.com/team/app-memory.git"]
    stores = {teams.store_path(url, tmp_path / "proj", home) for url in spellings}
    [store] = stores
    assert store.parent == home / teams.TEAMS_FOLDER and store.name.startswith("app-memory-")
