"""Sync over real remotes, not only a path: `git daemon`, smart HTTP (git http-backend behind
lighttpd) and ssh (sshd), each on loopback (tests/remote_servers.py; a server not installed is
skipped with the reason). Clones writing at once, a teammate offline for a day, a force-pushed
remote, a remote that deletes every memory, a re-clone at another path, the worktrees of a bare
repository. After each: nothing lost, `git fsck` clean, every clone at the remote's commit."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import git
from remote_servers import Server, free_port, git_daemon, missing, serving

from memory_mcp.app import syncrecord
from memory_mcp.app.store import Store
from memory_mcp.truth.errors import SyncOffline

pytestmark = pytest.mark.slow
EXE = str(Path(sys.executable).parent / "memory-mcp")


def server_or_skip(kind: str):  # type: ignore[no-untyped-def]
    reason = missing(kind)
    if reason:
        pytest.skip(reason)


def mm(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> str:
    done = subprocess.run([EXE, *args], capture_output=True, text=True, cwd=cwd, env=env or dict(os.environ),
                          timeout=120)
    assert done.returncode in ok, done.stderr
    return done.stdout + done.stderr


def team(server: Server, tmp_path: Path, people: list[str], seed: int = 1) -> list[Path]:
    """A store per person: the first made here with `seed` memories and pushed to `team.git`, the
    others cloned from the server; each commits under its person's name."""
    server.bare("team.git")
    first = Store.open(tmp_path / people[0])
    for i in range(seed):
        first.remember(f"Seed fact {i}: the auk cluster has {i + 3} nodes.")
    server.attach(first.root, "team.git")
    first.sync()
    first.close()
    stores = [first.root] + [server.clone("team.git", tmp_path / p) for p in people[1:]]
    for person, root in zip(people, stores, strict=True):
        git(root, "config", "user.name", person)
        git(root, "config", "user.email", f"{person.lower()}@example.org")
    return stores


def memory_ids(root: Path) -> set[str]:
    found = set()
    for path in (root / "memories").rglob("*.md"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("id: "):
                found.add(line[4:].strip())
                break
    return found


def assert_converged(stores: list[Path], remote_head: str) -> None:
    """Each clone at the remote's commit, clean, sound, holding the same memories."""
    ids = memory_ids(stores[0])
    for root in stores:
        assert git(root, "rev-parse", "HEAD").strip() == remote_head
        assert git(root, "status", "--porcelain", "--", "memories") == ""
        assert not (root / ".git" / "MERGE_HEAD").exists()
        fsck = subprocess.run(["git", "-C", str(root), "fsck", "--no-progress", "--strict"], capture_output=True,
                              text=True)
        assert fsck.returncode == 0 and "error" not in fsck.stderr, fsck.stderr
        assert memory_ids(root) == ids


def settle(stores: list[Path]) -> str:
    """Sync each clone in turn until all stand at one commit; that commit."""
    for _ in range(3):
        for root in stores:
            mm("--store", str(root), "sync")
        heads = {git(root, "rev-parse", "HEAD").strip() for root in stores}
        if len(heads) == 1:
            return heads.pop()
    raise AssertionError("the clones did not converge")


@pytest.mark.parametrize(("kind", "clones"), [("daemon", 3), ("http", 3), ("ssh", 2)])
def test_clones_writing_and_syncing_at_once_lose_nothing(kind: str, clones: int, tmp_path: Path) -> None:
    server_or_skip(kind)
    with serving(kind, tmp_path / "served") as server:
        stores = team(server, tmp_path, ["Ann", "Bob", "Cid"][:clones])
        before = memory_ids(stores[0])

        def work(i: int, root: Path) -> None:
            for r in range(3):
                mm("--store", str(root), "remember", f"Clone {i} round {r}: the heron queue holds {i * 10 + r} jobs.")
                # Three clones pushing at once: a sync that lost the race three times says so (exit 2).
                mm("--store", str(root), "sync", ok=(0, 2))

        threads = [threading.Thread(target=work, args=(i, root)) for i, root in enumerate(stores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        head = settle(stores)
        assert git(stores[0], "ls-remote", "origin", "main").split()[0] == head
    assert_converged(stores, head)
    assert len(memory_ids(stores[0]) - before) == clones * 3
    # Each sync is one commit or none: every merge in the history is a sync's, with two parents.
    for line in git(stores[0], "log", "--merges", "--format=%P%x09%s").splitlines():
        parents, _, subject = line.partition("\t")
        assert len(parents.split()) == 2 and subject.startswith("sync: merge"), subject


def test_a_teammate_offline_for_a_day_catches_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server_or_skip("daemon")
    port = free_port()
    base = tmp_path / "served"
    base.mkdir()
    with git_daemon(base, port) as server:
        ann, bob = team(server, tmp_path, ["Ann", "Bob"], seed=2)
    shared = sorted(memory_ids(ann))[0]
    # The server is gone for a day: Bob works on, dated yesterday; his sync says offline, once.
    a, b = Store.open(ann), Store.open(bob)
    yesterday = "2026-01-01T10:00:00+0000"
    monkeypatch.setenv("GIT_AUTHOR_DATE", yesterday)
    monkeypatch.setenv("GIT_COMMITTER_DATE", yesterday)
    for i in range(3):
        b.remember(f"Offline note {i}: the ferry timetable changed on line {i}.")
    b.update(shared, content="Bob's view: the auk cluster has four nodes.")
    with pytest.raises(SyncOffline):
        b.sync()
    assert "could not be reached" in syncrecord.take_news(bob)
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    with git_daemon(base, port):
        for i in range(3):
            a.remember(f"Online note {i}: the build farm moved to rack {i}.")
        a.update(shared, content="Ann's view: the auk cluster has six nodes.")
        a.sync()
        result = b.sync()  # a day's divergence: merged file by file, the shared memory kept twice
        assert [c.id for c in result.conflicts] == [shared]
        head = settle([ann, bob])
    assert_converged([ann, bob], head)
    texts = [p.read_text() for p in (ann / "memories").rglob("*.md")]
    for said, files in (("Bob's view", 1), ("Ann's view", 1), ("Offline note", 3), ("Online note", 3)):
        assert sum(said in t for t in texts) == files, said
    assert "2026-01-01" in git(ann, "log", "--format=%ad", "--date=short")
    arrived = syncrecord.load(bob)[-2] if syncrecord.load(bob)[-1].pulled == 0 else syncrecord.load(bob)[-1]
    assert arrived.arrived == {"Ann": 3} and arrived.conflicts == 1


def test_a_force_pushed_remote_loses_nothing_here_and_gets_it_back(tmp_path: Path) -> None:
    server_or_skip("http")
    with serving("http", tmp_path / "served") as server:
        ann, bob = team(server, tmp_path, ["Ann", "Bob"], seed=3)
        a, b = Store.open(ann), Store.open(bob)
        mine = {a.remember(f"Ann's fact {i}: the heron queue is drained at {i} am.").id for i in range(2)}
        a.sync()
        theirs = b.remember("Bob's fact: the auk cluster's switch is in rack 9.").id
        # Bob rewrites the branch: his history, without Ann's two commits, forced onto the server.
        git(bob, "push", "-q", "--force", "origin", "HEAD:main")
        forced = git(bob, "rev-parse", "HEAD").strip()
        result = a.sync()
        assert not result.deleted and result.pushed >= 1
        remote = git(ann, "ls-remote", "origin", "main").split()[0]
        # Never a force-push of ours: Bob's rewritten tip is in what the server holds now.
        assert subprocess.run(["git", "-C", str(ann), "merge-base", "--is-ancestor", forced, remote]).returncode == 0
        head = settle([ann, bob])
    assert_converged([ann, bob], head)
    assert mine | {theirs} <= memory_ids(bob)


def test_a_remote_that_deletes_every_memory_is_refused_by_the_background_sync(tmp_path: Path) -> None:
    server_or_skip("http")
    with serving("http", tmp_path / "served") as server:
        ann, bob = team(server, tmp_path, ["Ann", "Bob"], seed=4)
        before = memory_ids(ann)
        git(bob, "rm", "-q", "-r", "memories")
        git(bob, "commit", "-q", "-m", "start over")
        git(bob, "push", "-q", "origin", "HEAD:main")
        mm("sync", "--background", "session start", "--store", str(ann))
    assert memory_ids(ann) == before
    last = syncrecord.latest(ann)
    assert last is not None and last.outcome == syncrecord.REFUSED and "deletes 4 of the 4" in last.message
    assert git(ann, "rev-parse", f"{last.rescue}/remote").strip() == git(bob, "rev-parse", "HEAD").strip()
    assert "refused what the remote brings" in last.news()


def project_env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), "MEMORY_MCP_SYNC": "off"}


def project_store(where: str) -> str:
    return next(line for line in where.splitlines() if line.startswith("project store"))


def test_a_reclone_at_another_path_finds_its_store(tmp_path: Path) -> None:
    server_or_skip("http")
    env = project_env(tmp_path)
    with serving("http", tmp_path / "served") as server:
        server.bare("code.git")
        first = server.clone("code.git", tmp_path / "one" / "app")
        (first / "README").write_text("app\n")
        git(first, "add", "README")
        git(first, "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-q", "-m", "start")
        git(first, "push", "-q", "origin", "HEAD:main")
        mm("remember", "The app's billing job runs at midnight UTC.", cwd=first, env=env)
        again = server.clone("code.git", tmp_path / "two" / "elsewhere")
    stores = [project_store(mm("where", cwd=p, env=env)) for p in (first, again)]
    assert stores[0] == stores[1] and "not made yet" not in stores[0]
    assert "billing job runs at midnight" in mm("recall", "billing job", cwd=again, env=env)


def test_the_worktrees_of_a_bare_repository_share_one_store(tmp_path: Path) -> None:
    server_or_skip("http")
    env = project_env(tmp_path)
    with serving("http", tmp_path / "served") as server:
        server.bare("code.git")
        seed = server.clone("code.git", tmp_path / "seed")
        git(seed, "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "start")
        git(seed, "push", "-q", "origin", "HEAD:main")
        bare = tmp_path / "work" / "code.git"
        subprocess.run(["git", "clone", "-q", "--bare", server.url("code.git"), str(bare)], check=True)
    git(bare, "worktree", "add", "-q", str(tmp_path / "work" / "main"), "main")
    git(bare, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "work" / "feature"))
    main, feature = tmp_path / "work" / "main", tmp_path / "work" / "feature"
    mm("remember", "Feature branches are rebased before review.", cwd=main, env=env)
    wheres = [project_store(mm("where", cwd=p, env=env)) for p in (main, feature)]
    assert wheres[0] == wheres[1]
    assert "rebased before review" in mm("recall", "feature branches rebased", cwd=feature, env=env)
