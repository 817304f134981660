"""The `claude-code` import reader: a Claude Code auto-memory folder as memories.

Such a folder (`~/.claude/projects/<project>/memory/`) holds `MEMORY.md`, its index (one line per
topic file, `- [Title](file.md) — summary`, plus notes of its own), and the topic files beside it,
each with `name`, `description` and `type` frontmatter (newer versions nest `type` under
`metadata:`). A folder without `MEMORY.md` is not one, and a markdown file without that frontmatter
is not a topic file: both are refused rather than imported, so pointing the import at a repository
does not turn its README and docs into memories.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory_mcp.app.sources import BULLET, RECORD_ERRORS, Batch, Incoming, new_memory, reason, stamp
from memory_mcp.truth import files, strictyaml
from memory_mcp.truth.errors import InvalidArgument, ParseError
from memory_mcp.truth.model import MemoryType
from memory_mcp.truth.paths import read_regular

INDEX = "MEMORY.md"
# Claude Code's four auto-memory types, as ours: who the user is is a fact about them; feedback is how
# they want the work done (a preference); project notes are facts about the work; references stay references.
CLAUDE_TYPES = {"user": MemoryType.FACT, "feedback": MemoryType.PREFERENCE, "project": MemoryType.FACT,
                "reference": MemoryType.REFERENCE}
TOPIC_KEYS = ("name", "description", "type", "metadata")
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def read_claude_code(folder: Path) -> Batch:
    """The memories of an auto-memory folder (or of the project folder holding `memory/`)."""
    if not (folder / INDEX).exists() and (folder / "memory" / INDEX).exists():
        folder = folder / "memory"
    if not (folder / INDEX).exists():
        raise InvalidArgument(f"{folder} is not a Claude Code auto-memory folder (it has no {INDEX}); pass "
                              "one such as ~/.claude/projects/<project>/memory. Nothing was imported.")
    batch = Batch("claude-code", str(folder))
    titles: dict[str, str] = {}
    index = _read(folder / INDEX, INDEX, batch)
    if index is not None:
        titles, notes = _index(index, folder)
        batch.items += notes
    for p in sorted(folder.glob("*.md")):
        if p.name == INDEX or p.name.startswith(".") or (p.is_dir() and not p.is_symlink()):
            continue  # the index, hidden files, and folders named like a topic file
        text = _read(p, p.name, batch)
        if text is None:
            continue
        try:
            batch.items.append(_topic(text, p, titles.get(p.name)))
        except RECORD_ERRORS as e:
            batch.unreadable.append((p.name, reason(e)))
    return batch


def _read(path: Path, rel: str, batch: Batch) -> str | None:
    """The text of one file of the folder, or None with the reason listed in `batch`."""
    if path.is_symlink():
        # As the store's own walk does: a link may lead anywhere (~/.ssh, another project), and
        # whatever it reads would be committed to git.
        batch.unreadable.append((rel, "symbolic link: not followed (links may lead out of the folder)"))
        return None
    try:
        return files.decode(read_regular(path, files.MAX_FILE_BYTES + 1))
    except OSError as e:
        batch.unreadable.append((rel, f"cannot read: {e.strerror}"))
    except RECORD_ERRORS as e:
        batch.unreadable.append((rel, reason(e)))
    return None


def _topic(text: str, path: Path, link_text: str | None) -> Incoming:
    """One topic file as a memory. Its title: `name` when it reads as one, else the link text
    MEMORY.md gives it (Claude Code often names a file by its slug, `user_role`)."""
    meta = _frontmatter(text)
    _, body = files.split(text)
    nested = meta.get("metadata")
    nested = nested if isinstance(nested, dict) else {}
    name = " ".join(str(meta.get("name") or "").split())
    description = " ".join(str(meta.get("description") or "").split())
    kind = str(meta.get("type") or nested.get("type") or "").strip().lower()
    mem_type = CLAUDE_TYPES.get(kind) or (MemoryType(kind) if kind in MemoryType.__members__.values() else
                                          MemoryType.FACT)
    body = body.strip()
    # The description is Claude Code's one-line summary of the file: it makes the excerpt recall shows.
    if description and description not in body:
        if body.startswith("#"):
            heading, _, rest = body.partition("\n")
            body = f"{heading}\n\n{description}\n\n{rest.strip()}".rstrip()
        else:
            body = f"{description}\n\n{body}".rstrip()
    slug = not name or (" " not in name and ("_" in name or "-" in name or name == path.stem))
    if body.startswith("#"):
        title = None  # the file's own heading
    elif slug:
        title = (link_text or name.replace("_", " ").replace("-", " ")).strip() or None
    else:
        title = name
    modified = stamp(meta.get("modified") or meta.get("updated")) or _mtime(path)
    return Incoming(path.name, new_memory(body, title, mem_type, source=f"claude-code memory: {path.name}",
                                          created=stamp(meta.get("created")) or modified, updated=modified))


def _frontmatter(text: str) -> dict[str, Any]:
    """A topic file's frontmatter mapping; refused when there is none with a topic file's keys."""
    fm_text, _ = files.split(text)
    meta: object = None
    if fm_text is not None:
        try:
            meta = strictyaml.load(fm_text)
        except strictyaml.YAMLError as e:
            raise ParseError(f"broken YAML frontmatter: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(meta, dict) or not any(k in meta for k in TOPIC_KEYS):
        raise InvalidArgument("not a Claude Code topic file (no frontmatter with name, description or type); "
                              "not imported")
    return meta


def _index(text: str, folder: Path) -> tuple[dict[str, str], list[Incoming]]:
    """MEMORY.md: the link text of each topic file it points at (file name -> text), and its other
    lines, which are notes of their own (headings and comments aside), one memory each."""
    titles: dict[str, str] = {}
    notes: list[Incoming] = []
    in_code = False
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not stripped or stripped.startswith("#") or stripped.startswith("<!--"):
            continue
        links = [(label, target.split("#")[0]) for label, target in _LINK.findall(stripped)]
        topics = [(label, target) for label, target in links if (folder / target).is_file()]
        for label, target in topics:
            titles.setdefault(Path(target).name, " ".join(label.split()))
        if topics:
            continue
        content = BULLET.sub("", stripped).strip()
        if content:
            notes.append(Incoming(f"{INDEX} line {n}", new_memory(content, None, source=f"claude-code {INDEX} line {n}")))
    return titles, notes


def _mtime(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
