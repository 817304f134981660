"""The `paths:` globs of file-aware memories: which memories are about a given file.

Globs are relative to the project root; `**` crosses folders (and matches none), `*` and `?` stay
within one folder name, as in .gitignore and most editors.
"""

from __future__ import annotations

import fnmatch
import functools
import re
from collections.abc import Callable
from pathlib import Path

from memory_mcp.truth.errors import InvalidArgument

# A glob longer than this, or past this many on one memory, is refused when written (and never
# matches when a person wrote it by hand): matching costs the glob's length times the path's.
MAX_GLOB_CHARS = 256
MAX_GLOBS = 32
# The matcher's lazily built automaton keeps at most this many states per glob; past it, steps are
# computed afresh (still linear, only slower), so one odd glob cannot fill memory.
_CACHED_STATES = 2048


def glob_match(pattern: str, path: str) -> bool:
    """Whether a project-relative `path` matches `pattern`: `**` crosses folders (and matches none),
    `*` and `?` stay within one folder name, as in .gitignore and most editors."""
    pattern, path = pattern.strip().lstrip("/"), path.lstrip("/")
    if pattern.endswith("/"):
        pattern += "**"
    return len(pattern) <= MAX_GLOB_CHARS and _compile(pattern).matches(path)


# One step of a glob: the set of characters it takes (a test on one character) and the state it goes
# to; a state may also be left without taking a character (`skip`), for `*`, `**` and `**/`.
_Test = Callable[[str], bool]


def _not_slash(ch: str) -> bool:
    return ch != "/"


def _not_newline(ch: str) -> bool:
    return ch != "\n"  # `**` is any run of characters but a line break, as the regex `.*` it was


def _is_slash(ch: str) -> bool:
    return ch == "/"


class _Glob:
    """A glob as a nondeterministic automaton, run over a path one character at a time keeping the
    set of states it can be in: time is the glob's length times the path's, whatever the glob (a
    backtracking regex took minutes on `**?` sixteen times then `**Q`). The sets met are numbered
    and their steps kept (a lazily built deterministic automaton), so a glob matched against many
    paths costs one dictionary look-up per character."""

    def __init__(self, pattern: str) -> None:
        self.moves: list[list[tuple[_Test, int]]] = []
        self.skips: list[int | None] = []
        self._parse(pattern)
        self.accept = len(self.moves)
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._steps: list[dict[str, int]] = []
        self._start = self._number(self._closure({0}))

    def _state(self, skip: int | None = None) -> int:
        self.moves.append([])
        self.skips.append(skip)
        return len(self.moves) - 1

    def _parse(self, pattern: str) -> None:
        i = 0
        while i < len(pattern):
            s = len(self.moves)
            if pattern.startswith("**/", i):  # (?:.*/)?: nothing, or any run ending in a slash
                self._state(skip=s + 2)
                self._state()
                for at in (s, s + 1):
                    self.moves[at] += [(_is_slash, s + 2), (_not_newline, s + 1)]
                i += 3
            elif pattern.startswith("**", i):
                self._state(skip=s + 1)
                self.moves[s].append((_not_newline, s))
                i += 2
            elif pattern[i] == "*":
                self._state(skip=s + 1)
                self.moves[s].append((_not_slash, s))
                i += 1
            else:
                test, i = _one_char(pattern, i)
                self._state()
                self.moves[s].append((test, s + 1))

    def _closure(self, states: set[int]) -> frozenset[int]:
        todo, seen = list(states), set(states)
        while todo:
            s = todo.pop()
            nxt = self.skips[s] if s < self.accept else None
            if nxt is not None and nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
        return frozenset(seen)

    def _number(self, states: frozenset[int]) -> int:
        if states not in self._ids:
            if len(self._sets) >= _CACHED_STATES:
                return -1 - len(self._sets)  # not kept: the caller steps from the set itself
            self._ids[states] = len(self._sets)
            self._sets.append(states)
            self._steps.append({})
        return self._ids[states]

    def _step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        return self._closure({to for s in states if s < self.accept for test, to in self.moves[s] if test(ch)})

    def matches(self, path: str) -> bool:
        at, loose = self._start, frozenset[int]()
        for ch in path:
            if at >= 0:
                nxt = self._steps[at].get(ch)
                if nxt is None:
                    stepped = self._step(self._sets[at], ch)
                    nxt = self._number(stepped)
                    if nxt >= 0:
                        self._steps[at][ch] = nxt
                    else:
                        loose = stepped
                at = nxt
            else:
                loose = self._step(loose, ch)
            if (at >= 0 and not self._sets[at]) or (at < 0 and not loose):
                return False
        return self.accept in (self._sets[at] if at >= 0 else loose)


def _one_char(pattern: str, i: int) -> tuple[_Test, int]:
    """The test of the one-character glob item at `i` (`?`, a `[...]` class or a literal character)
    and where the next item starts."""
    ch = pattern[i]
    if ch == "?":
        return _not_slash, i + 1
    end = pattern.find("]", i + 1) if ch == "[" else -1
    if end >= 0 and pattern[i:end + 1] not in ("[]", "[!]"):  # fnmatch reads those two as literal text
        # The class as fnmatch reads it (ranges, `!` for not), one character long.
        cls = re.compile(fnmatch.translate(pattern[i:end + 1])[4:-3])
        return (lambda c: cls.fullmatch(c) is not None), end + 1
    return ch.__eq__, i + 1


@functools.lru_cache(maxsize=512)
def _compile(pattern: str) -> _Glob:
    return _Glob(pattern)


def matches_any(globs: list[str], rel: str) -> bool:
    """Whether a project-relative path matches one of a memory's globs (an absolute one never does:
    it is outside the project)."""
    return not rel.startswith("/") and any(glob_match(g, rel) for g in globs[:MAX_GLOBS])


def specificity(globs: list[str], rel: str) -> tuple[int, int]:
    """How closely the most specific of a memory's globs that matches `rel` names it, smaller
    first: (0, 0) for the exact path, (1, -n) for a glob whose literal prefix (the text before its
    first wildcard) is n characters long, so `src/billing/**` comes before `src/**` and `**` last;
    (2, 0) when none matches."""
    best = (2, 0)
    for g in globs[:MAX_GLOBS]:
        if glob_match(g, rel):
            g = g.strip().lstrip("/")
            literal = len(re.split(r"[*?\[]", g, maxsplit=1)[0])
            # A folder (`src/`) is its `src/**`.
            best = min(best, (1, -literal) if literal < len(g) or g.endswith("/") else (0, 0))
    return best


def project_relative(file: str, project: Path) -> str:
    """`file` relative to the project root with / separators, when it is absolute and inside the
    project; a relative one is taken as relative to the root already; one outside stays absolute."""
    given = Path(file)
    if not given.is_absolute():
        return given.as_posix().removeprefix("./")
    try:
        return given.resolve().relative_to(project.resolve()).as_posix()
    except ValueError:
        return given.as_posix()


def check(globs: list[str]) -> list[str]:
    """Globs as a memory keeps them (trimmed, without a leading ./ or /, blank ones dropped); one that
    climbs out of the project (`..`) is refused, since nothing inside the project could match it, and
    so are more than MAX_GLOBS of them or one longer than MAX_GLOB_CHARS."""
    out: list[str] = []
    for g in (g.strip().removeprefix("./").lstrip("/") for g in globs):
        if len(g) > MAX_GLOB_CHARS:
            raise InvalidArgument(f"the glob {g[:40]!r}... is {len(g)} characters long; a glob may have at most "
                                  f"{MAX_GLOB_CHARS}.")
        if ".." in g.split("/"):
            raise InvalidArgument(f"the glob {g[:80]!r} leaves the project (..); paths are relative to the "
                                  "project root, e.g. src/billing/**.")
        if g and g not in out:
            out.append(g)
    if len(out) > MAX_GLOBS:
        raise InvalidArgument(f"{len(out)} paths globs given; a memory may have at most {MAX_GLOBS} (a folder's "
                              "glob, such as src/billing/**, covers all its files).")
    return out
