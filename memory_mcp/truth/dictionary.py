"""dictionary.md: the entity vocabulary. `- name: description (aka: alias1, alias2)` per line."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.paths import read_regular

DICTIONARY = "dictionary.md"  # the store-relative path of the file
MAX_DICTIONARY_BYTES = 1_000_000

_LINE = re.compile(r"^\s*[-*]\s+([^:\n]+?)\s*(?::\s*(.*))?$")
# The placeholder entry the store template explains the format with (indented on purpose).
_TEMPLATE_EXAMPLE = "canonical-name"
_AKA = re.compile(r"\(\s*aka\s*:\s*([^)]*)\)\s*$", re.IGNORECASE)


@dataclass
class Dictionary:
    """Canonical entity names and the aliases that map to them (matched without regard to case)."""

    canonical: dict[str, str] = field(default_factory=dict)  # lower(name or alias) -> canonical name
    names: list[str] = field(default_factory=list)
    version: str = ""
    problem: str | None = None  # why the file was not read (a link, a device, too big)
    # Indented entry-like lines, not read as entries: `line N: text`, for memory_status to show.
    skipped: list[str] = field(default_factory=list)
    _mention_re: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def load(cls, path: Path, previous: Dictionary | None = None) -> Dictionary:
        """Read dictionary.md; a missing file is an empty dictionary. `previous` comes back as it is
        when the file still holds the text it was parsed from (the file is read on every call).

        A link, a device, a pipe or an oversized file is not read: an empty dictionary with its
        `problem` comes back, so that one file cannot point the store at another or hang it."""
        try:
            raw = read_regular(path, MAX_DICTIONARY_BYTES + 1)
        except FileNotFoundError:
            return cls(version="")
        except OSError as e:
            return cls._refused(f"cannot read: {e.strerror}")
        except ParseError as e:
            return cls._refused(e.message)
        if len(raw) > MAX_DICTIONARY_BYTES:
            return cls._refused(f"file is over {MAX_DICTIONARY_BYTES:,} bytes, the limit of the dictionary")
        text = raw.decode("utf-8", errors="replace")
        if previous is not None and previous.version == _version(text):
            return previous
        return cls.parse(text)

    @classmethod
    def _refused(cls, problem: str) -> Dictionary:
        # Its own version: a dictionary that turns into a link (or back) re-normalises every memory.
        return cls(version=_version(f"refused: {problem}"), problem=problem)

    @classmethod
    def parse(cls, text: str) -> Dictionary:
        d = cls(version=_version(text))
        in_code = False
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip().startswith("```"):
                in_code = not in_code
            if in_code:
                continue
            m = _LINE.match(line)
            if not m:
                continue
            # Indented lines are examples in an explanation (the template's is), not entries; they
            # are reported, since a person may have indented a real entry by mistake.
            if line.startswith(("    ", "\t")):
                if m.group(1).strip() != _TEMPLATE_EXAMPLE:
                    d.skipped.append(f"line {number}: {line.strip()[:120]}")
                continue
            name = m.group(1).strip()
            aliases: list[str] = []
            aka = _AKA.search(m.group(2) or "")
            if aka:
                aliases = [a.strip() for a in aka.group(1).split(",") if a.strip()]
            if name.lower() not in d.canonical:
                d.names.append(name)
            for key in (name, *aliases):
                d.canonical.setdefault(key.lower(), name)
        return d

    def __bool__(self) -> bool:
        return bool(self.names)

    def mentioned(self, text: str) -> list[str]:
        """Canonical names of the entities whose name or alias occurs in `text` as whole words,
        without regard to case (`recall billing` names `payments-service` when billing is its alias)."""
        if not self.canonical or not text:
            return []
        if self._mention_re is None:
            # Longest first, so `payments api` wins over `payments` where both are keys.
            keys = sorted(self.canonical, key=len, reverse=True)
            self._mention_re = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, keys)) + r")(?!\w)")
        found = (self.canonical[m.group(0)] for m in self._mention_re.finditer(" ".join(text.lower().split())))
        return list(dict.fromkeys(found))

    def normalise(self, entity: str) -> str:
        """The canonical name of `entity`, or the entity trimmed when the dictionary does not know it."""
        cleaned = " ".join(entity.split())
        return self.canonical.get(cleaned.lower(), cleaned)

    def normalise_all(self, entities: list[str]) -> tuple[list[str], list[str]]:
        """(canonical names without duplicates, in order; the ones the dictionary does not know)."""
        out: dict[str, None] = {}
        unknown: dict[str, None] = {}
        for e in entities:
            n = self.normalise(e)
            if not n:
                continue
            if n.lower() not in {k.lower() for k in out}:
                out[n] = None
            if self and n.lower() not in self.canonical:
                unknown[n] = None
        return list(out), list(unknown)


def _version(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]
