"""The Python object writer the commit path builds its trees with: the same ids git's own index gives
the same content, objects `git fsck` accepts, in SHA-1 and SHA-256 repositories, and the cases it
leaves to git's index. Real git repositories."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from conftest import git

from memory_mcp.vcs.history import History
from memory_mcp.vcs.objects import commit_body, subject

FORMATS = ["sha1", "sha256"]


def _repo(path: Path, fmt: str) -> History:
    path.mkdir()
    git(path, "init", "-q", f"--object-format={fmt}", "-b", "main")
    (path / "README.md").write_text("readme\n")
    (path / "memories" / "2025" / "01").mkdir(parents=True)
    (path / "memories" / "2025" / "01" / "a-1.md").write_text("first\n")
    (path / "memories" / "old.md").write_text("old\n")
    git(path, "add", ".")
    git(path, "-c", "user.name=P", "-c", "user.email=p@example.com", "commit", "-qm", "init")
    return History(path)


def _tree_git_writes(root: Path) -> str:
    """The tree git's own index gives the work tree as it is (every file added), in a separate index."""
    env_index = root / ".git" / "check.index"
    env = {"GIT_INDEX_FILE": str(env_index), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(root), "add", "-A", "."], env=env, check=True)
    tree = subprocess.run(["git", "-C", str(root), "write-tree"], env=env, check=True, capture_output=True,
                          text=True).stdout.strip()
    env_index.unlink()
    return tree


@pytest.mark.parametrize("fmt", FORMATS)
def test_trees_built_along_the_changed_paths_match_git_write_tree(tmp_path: Path, fmt: str) -> None:
    history = _repo(tmp_path / "store", fmt)
    root = history.root
    steps = [
        {"memories/2025/01/b-2.md": "second\n"},  # a new file in an existing folder
        {"memories/2026/03/c-3.md": "third\n", "memories/2026/03/d-4.md": "fourth\n"},  # new folders
        {"memories/2025/01/a-1.md": None},  # a deletion: its folder stays (b-2 is there)
        {"memories/2025/01/b-2.md": None},  # the folder's last file: the folder goes
        {"memories/old.md": "old, edited\n", "dictionary.md": "# words\n"},  # a change at two depths
        {"memories/2026/03-notes.md": "sorts before the folder 03/ in git's order\n"},
    ]
    for k, step in enumerate(steps):
        for rel, text in step.items():
            if text is None:
                (root / rel).unlink()
            else:
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
        commit = history.commit_paths(list(step), f"step {k}", [])
        assert commit is not None
        assert git(root, "rev-parse", "HEAD").strip() == commit
        assert git(root, "rev-parse", "HEAD^{tree}").strip() == _tree_git_writes(root), step
    assert git(root, "rev-list", "--count", "HEAD").strip() == str(len(steps) + 1)
    done = subprocess.run(["git", "-C", str(root), "fsck", "--strict", "--no-dangling"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    # Every object the writer made reads back through git, and the person's index agrees with HEAD.
    assert git(root, "cat-file", "-p", "HEAD:memories/2026/03/c-3.md") == "third\n"
    assert git(root, "status", "--porcelain").strip() == ""


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_tree_read_from_a_packed_repository_is_rebuilt_exactly(tmp_path: Path, fmt: str) -> None:
    """Trees of a commit this object did not make are read through git (here from a pack)."""
    history = _repo(tmp_path / "store", fmt)
    git(history.root, "repack", "-adq")
    (history.root / "memories" / "2025" / "01" / "e-5.md").write_text("fifth\n")
    assert history.commit_paths(["memories/2025/01/e-5.md"], "pack", []) is not None
    assert git(history.root, "rev-parse", "HEAD^{tree}").strip() == _tree_git_writes(history.root)


def test_a_file_where_the_commit_has_a_folder_is_left_to_git(tmp_path: Path) -> None:
    """A path that replaces a folder of the commit by a file falls back to git's index, which
    refuses it as `git add` would leave the folder's files staged: the commit matches git's."""
    history = _repo(tmp_path / "store", "sha1")
    root = history.root
    (root / "memories" / "2025" / "01" / "a-1.md").unlink()
    (root / "memories" / "2025" / "01").rmdir()
    (root / "memories" / "2025" / "01").write_text("now a file\n")
    commit = history.commit_paths(["memories/2025/01/a-1.md", "memories/2025/01"], "swap", [])
    assert commit is not None
    assert git(root, "cat-file", "-p", "HEAD:memories/2025/01") == "now a file\n"


def test_an_executable_file_is_committed_with_its_mode(tmp_path: Path) -> None:
    history = _repo(tmp_path / "store", "sha1")
    tool = history.root / "memories" / "run.sh"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert history.commit_paths(["memories/run.sh"], "tool", []) is not None
    assert git(history.root, "ls-tree", "HEAD", "memories/run.sh").split()[0] == "100755"


def test_line_ending_conversion_commits_what_git_would(tmp_path: Path) -> None:
    """core.autocrlf turns CRLF into LF on the way in: the bytes on disk are not the blob."""
    history = _repo(tmp_path / "store", "sha1")
    git(history.root, "config", "core.autocrlf", "input")
    history = History(history.root)
    (history.root / "memories" / "crlf.md").write_bytes(b"one\r\ntwo\r\n")
    assert history.commit_paths(["memories/crlf.md"], "crlf", []) is not None
    assert git(history.root, "cat-file", "-p", "HEAD:memories/crlf.md") == "one\ntwo\n"


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_commit_written_in_python_has_the_id_git_commit_tree_gives(tmp_path: Path, fmt: str) -> None:
    """Same tree, parent, identity, second and message: the same commit id as `git commit-tree`."""
    history = _repo(tmp_path / "store", fmt)
    root = history.root
    head = git(root, "rev-parse", "HEAD").strip()
    tree = git(root, "rev-parse", "HEAD^{tree}").strip()
    when = 1_700_000_000
    message = "remember: a title\n\nbody line\n\nMemory-Id: 01ABC"
    ours = history._object_writer().write(b"commit", commit_body(tree, head, "Pat <pat@example.org>",
                                                                 "Sam <sam@example.org>", when, message)).hex()
    offset = time.localtime(when).tm_gmtoff // 60
    date = f"{when} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"
    env = {"PATH": "/usr/bin:/bin", "GIT_AUTHOR_NAME": "Pat", "GIT_AUTHOR_EMAIL": "pat@example.org",
           "GIT_COMMITTER_NAME": "Sam", "GIT_COMMITTER_EMAIL": "sam@example.org",
           "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    theirs = subprocess.run(["git", "-C", str(root), "commit-tree", tree, "-p", head, "-F", "-"], env=env,
                            input=message, capture_output=True, text=True, check=True).stdout.strip()
    assert ours == theirs
    assert git(root, "cat-file", "-t", ours).strip() == "commit"


def test_commits_carry_the_identity_configured_after_the_server_started(tmp_path: Path) -> None:
    """The identity git would use is asked again when the repository's config changes."""
    root = _repo(tmp_path / "store", "sha1").root
    git(root, "config", "user.name", "Robin First")
    git(root, "config", "user.email", "robin@example.org")
    history = History(root)
    (root / "memories" / "x.md").write_text("x\n")
    history.commit_paths(["memories/x.md"], "one", [])
    assert git(root, "log", "-1", "--format=%an").strip() == "Robin First"
    git(root, "config", "user.name", "Robin Later")
    (root / "memories" / "y.md").write_text("y\n")
    history.commit_paths(["memories/y.md"], "two", [])
    assert git(root, "log", "-1", "--format=%an <%ae>|%cn").strip() == "Robin Later <robin@example.org>|Robin Later"


@pytest.mark.parametrize("named_apart", ["config", "environment"])
def test_a_committer_named_apart_from_the_author_is_the_commits_committer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, named_apart: str) -> None:
    """One `git var` answers for the author and the committer only when nothing names them apart:
    a `committer.*` key in any config git reads, or GIT_COMMITTER_* in the environment, still gives
    the commit the committer git would."""
    root = _repo(tmp_path / "store", "sha1").root
    git(root, "config", "user.name", "Robin Author")
    git(root, "config", "user.email", "robin@example.org")
    if named_apart == "config":
        git(root, "config", "committer.name", "Casey Committer")
    else:
        monkeypatch.setenv("GIT_COMMITTER_NAME", "Casey Committer")
    history = History(root)
    (root / "memories" / "x.md").write_text("x\n")
    history.commit_paths(["memories/x.md"], "one", [])
    assert git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == \
        "Robin Author <robin@example.org>|Casey Committer <robin@example.org>"


def test_object_write_survives_prune_packed_removing_the_fan_out_folder(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The background `git repack -d` runs `git prune-packed`, which removes the fan-out folders it
    empties. A 10,000-memory agent build failed when one went between the writer's mkdir and its
    open: the folder is removed here at that worst moment, once, and the object must still land."""
    import builtins

    from memory_mcp.vcs import objects as gitobjects

    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    objects = root / ".git" / "objects"
    data = b"a memory body\n"
    hexid = subprocess.run(["git", "hash-object", "--stdin"], input=data, cwd=root, capture_output=True,
                           check=True).stdout.decode().strip()
    (objects / hexid[:2]).mkdir(exist_ok=True)  # the folder is there when the writer looks
    real_open = builtins.open
    removed: list[Path] = []

    def open_after_prune(file: object, *args: object, **kwargs: object) -> object:
        folder = Path(str(file)).parent
        if not removed and folder.parent == objects:
            folder.rmdir()  # what prune-packed does to a folder it has emptied
            removed.append(folder)
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(gitobjects, "open", open_after_prune, raising=False)
    writer = gitobjects.ObjectWriter(objects, gitobjects.ObjectFormat("sha1"))
    oid = writer.write(b"blob", data)
    assert removed, "the folder was never removed: the test did not exercise the race"
    assert oid.hex() == hexid
    shown = subprocess.run(["git", "cat-file", "-p", hexid], cwd=root, capture_output=True, check=True).stdout
    assert shown == data
    assert not [p for p in (objects / hexid[:2]).iterdir() if p.name.startswith("tmp_obj_")]


@pytest.mark.parametrize("message", ["one line", "\n\n  first line  \nsecond line\t\n\nthe body\n", "title\n \nbody",
                                     "a\r\nb\n"])
def test_a_messages_subject_is_the_one_git_log_prints(tmp_path: Path, message: str) -> None:
    """The index keeps each version's commit subject from the commits made here without asking git
    (`provenance.own_commits`): it must be the `%s` that `git log` gives the same message."""
    history = _repo(tmp_path / "store", "sha1")
    tree = git(history.root, "rev-parse", "HEAD^{tree}").strip()
    made = subprocess.run(["git", "-C", str(history.root), "-c", "user.name=P", "-c", "user.email=p@example.com",
                           "commit-tree", tree, "-F", "-"], input=message,
                          capture_output=True, text=True, check=True).stdout.strip()
    assert subject(message) == git(history.root, "log", "-1", "--format=%s", made).removesuffix("\n")
