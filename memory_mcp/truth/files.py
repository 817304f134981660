"""Memory files: parse, validate, serialize, write atomically. The files are the source of truth.

The frontmatter is read with a strict YAML loader: safe types only, no aliases (a "billion laughs"
file must not blow up the server), and timestamps kept as the strings the person wrote, so a file
the server rewrites keeps its dates byte for byte.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import re
import stat
from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from memory_mcp.truth.errors import ParseError
from memory_mcp.truth.model import (
    FIELDS,
    PROVISIONAL_RE,
    ULID_RE,
    FieldKind,
    FieldSpec,
    Memory,
    provisional_id,
)
from memory_mcp.truth.plainscalar import reads_as_text

MAX_FILE_BYTES = 1_000_000
MAX_FRONTMATTER_BYTES = 64_000

# The known keys in the order files write them (model.FIELDS); any other key is kept in `extra`.
KEY_ORDER: tuple[str, ...] = tuple(f.name for f in FIELDS)
# Keys whose simple values the fast reader turns into numbers, as the YAML loader would.
_NUMBER_KEYS = frozenset(f.name for f in FIELDS if f.kind == "number")


# The frontmatter `serialize` writes, and most people's: `key: value` lines whose values are plain
# words, timestamps or flow lists of plain words. Such lines are read without YAML (a reindex spent
# most of its time in the YAML constructor); anything else goes to the YAML loader.
_SIMPLE_LINE = re.compile(r"([a-z_]+): (\S.*)")
# A plain scalar YAML scans as exactly these characters: starts with a letter or digit (no indicator),
# single spaces between runs (no ` #` comment), `:` only inside a run (never `: `).
_BLOCK_SCALAR = re.compile(r"[^\W_][\w./-]*(?::[\w./-]+)*(?: [\w./-]+(?::[\w./-]+)*)*")
_FLOW_ITEM = re.compile(r"[^\W_][\w./-]*(?: [\w./-]+)*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


# Types, states, entity names and dates repeat across files: 1,024 hit as often as 4,096 (1 MB) did.
@functools.lru_cache(maxsize=1024)
def _plain(value: str, pattern: re.Pattern[str]) -> bool:
    """`value` is a plain scalar that YAML reads back as this very string."""
    return pattern.fullmatch(value) is not None and reads_as_text(value)


def _simple_frontmatter(fm_text: str) -> dict[str, object] | None:
    """The mapping of a frontmatter made only of simple `key: value` lines, exactly as the YAML
    loader would give it; None when any line is not that simple."""
    data: dict[str, object] = {}
    for line in fm_text.split("\n"):
        if not line:
            continue
        m = _SIMPLE_LINE.fullmatch(line)
        if m is None or m.group(1) not in KEY_ORDER:
            return None
        key, value = m.group(1), m.group(2)
        if key in _NUMBER_KEYS and _NUMBER.fullmatch(value):
            data[key] = float(value) if "." in value else int(value)
        elif value.startswith("{"):
            mapping = _simple_map(value)
            if mapping is None:
                return None
            data[key] = mapping
        elif value.startswith("["):
            if not value.endswith("]"):
                return None
            items = value[1:-1].split(", ") if value != "[]" else []
            if not all(_plain(item, _FLOW_ITEM) for item in items):
                return None
            data[key] = items
        elif _plain(value, _BLOCK_SCALAR):
            data[key] = value
        else:
            return None
    return data


_MAP_ITEM = re.compile(r"([a-z_]+): (.+)")


def _simple_map(value: str) -> dict[str, str] | None:
    """A flow mapping of plain names to plain words, `{a: x, b: y}`, as the YAML loader reads it;
    None when it is anything else (a quoted or repeated key, a value YAML would not read as text)."""
    if not value.endswith("}"):
        return None
    out: dict[str, str] = {}
    for item in value[1:-1].split(", ") if value != "{}" else []:
        m = _MAP_ITEM.fullmatch(item)
        if m is None or m.group(1) in out or not (_plain(m.group(1), _FLOW_ITEM) and _plain(m.group(2), _FLOW_ITEM)):
            return None
        out[m.group(1)] = m.group(2)
    return out


def decode(raw: bytes) -> str:
    """Bytes of a memory file to text with LF line ends, or ParseError saying why it is not one."""
    if len(raw) > MAX_FILE_BYTES:
        raise ParseError(f"file is {len(raw):,} bytes; memory files are limited to {MAX_FILE_BYTES:,}")
    if b"\x00" in raw:
        raise ParseError("binary file (contains NUL bytes), not markdown")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ParseError(f"not UTF-8 text (byte {e.start}); re-save the file as UTF-8") from None
    return text.replace("\r\n", "\n")


_FM_CLOSE = re.compile(r"^---[ \t]*$", re.MULTILINE)


def split(text: str) -> tuple[str | None, str]:
    """(frontmatter text or None, body). The body is everything after the closing `---` line."""
    if not text.startswith("---\n"):
        return None, text
    m = _FM_CLOSE.search(text, 4)
    if not m:
        raise ParseError("frontmatter opened with '---' but never closed with a '---' line")
    fm = text[4 : m.start()]
    end = m.end() + 1 if text[m.end() : m.end() + 1] == "\n" else m.end()
    return fm, text[end:]


def parse(text: str, rel_path: str) -> Memory:
    """Parse a memory file's text. Raises ParseError with a readable reason."""
    fm_text, body = split(text)
    if fm_text is None:
        return Memory(id=provisional_id(rel_path), body=body, provisional=True)
    if len(fm_text.encode()) > MAX_FRONTMATTER_BYTES:
        raise ParseError(f"frontmatter over {MAX_FRONTMATTER_BYTES:,} bytes")
    from memory_mcp.truth import strictyaml

    try:
        data: object = _simple_frontmatter(fm_text)
        if data is None:
            data = strictyaml.load(fm_text)
    except strictyaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ParseError(f"broken YAML frontmatter{where}: {problem}") from None
    except RecursionError:
        raise ParseError("YAML frontmatter nested too deeply") from None
    except ValueError as e:  # Python refuses to read an integer of over 4,300 digits
        raise ParseError(f"YAML frontmatter holds a number too long to read ({e})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParseError("frontmatter must be a mapping of keys to values")
    return _from_mapping(data, body, rel_path)


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, (dict, list)):
        raise ParseError(f"'{key}' must be a single value, not a {type(value).__name__}")
    return str(value)


def _list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if not isinstance(value, list) or any(isinstance(v, (dict, list)) or v is None for v in value):
        raise ParseError(f"'{key}' must be a list of names, like [a, b]")
    return [str(v) for v in value]


def _map(data: dict[str, Any], key: str) -> dict[str, str]:
    value = data.get(key)
    if value is None or value == "":
        return {}
    if not isinstance(value, dict) or any(not isinstance(k, str) or isinstance(v, (dict, list))
                                          for k, v in value.items()):
        raise ParseError(f"'{key}' must be a mapping of names to single values, like {{client: cli, host: laptop}}")
    return {k: str(v) for k, v in value.items() if v is not None and v != ""}


def _enum(data: dict[str, Any], key: str, enum: type[StrEnum], default: object) -> object:
    value = data.get(key)
    if value is None:
        return default
    try:
        return enum(str(value))
    except ValueError:
        allowed = ", ".join(e.value for e in enum)
        raise ParseError(f"unknown {key} '{value}' (allowed: {allowed})") from None


def _number(data: dict[str, Any], f: FieldSpec) -> float:
    value = data.get(f.name, 0) or 0
    wanted = "a number" if f.bounds is None else f"a number between {f.bounds[0]:g} and {f.bounds[1]:g}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(f"{f.name} must be {wanted}, not '{value}'")
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits has no float
        number = math.inf
    if not math.isfinite(number):  # `.inf`, or a 400-digit number: nothing a file could write back
        raise ParseError(f"{f.name} must be {wanted}, not a number of {len(str(value))} characters")
    return number if f.bounds is None else max(f.bounds[0], min(f.bounds[1], number))


def _text_or_default(data: dict[str, Any], f: FieldSpec) -> object:
    value = _text(data, f.name)
    return f.default if value is None else value


# How each kind of field is read from the frontmatter mapping (the id has its own rules, below).
_READERS: dict[FieldKind, Callable[[dict[str, Any], FieldSpec], object]] = {
    "enum": lambda data, f: _enum(data, f.name, f.enum, f.default),  # type: ignore[arg-type]
    "list": lambda data, f: _list(data, f.name),
    "text": _text_or_default,
    "date": _text_or_default,
    "number": _number,
    "map": lambda data, f: _map(data, f.name),
}
# Numbers are checked before unknown keys and the other fields, as they always were, so a file with
# several mistakes keeps reporting the same one.
_READ_FIRST = tuple((f.name, _READERS[f.kind], f) for f in FIELDS if f.kind == "number")
_READ_THEN = tuple((f.name, _READERS[f.kind], f) for f in FIELDS if f.kind not in ("id", "number"))


def _from_mapping(data: dict[str, Any], body: str, rel_path: str) -> Memory:
    raw_id = data.get("id")
    provisional = raw_id is None or raw_id == ""
    if provisional:
        mem_id = provisional_id(rel_path)
    else:
        mem_id = str(raw_id)
        if not ULID_RE.match(mem_id) or PROVISIONAL_RE.match(mem_id):
            raise ParseError(f"id '{mem_id[:40]}' is not a ULID (26 characters of Crockford base32)")
    values: dict[str, object] = {name: read(data, f) for name, read, f in _READ_FIRST}
    extra = {k: v for k, v in data.items() if k not in KEY_ORDER}
    for key in extra:
        if not isinstance(key, str):
            raise ParseError(f"frontmatter key {key!r} must be text")
    for name, read, f in _READ_THEN:
        values[name] = read(data, f)
    return Memory(id=mem_id, body=body, extra=extra, provisional=provisional, **values)  # type: ignore[arg-type]


_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def scalar(value: str) -> str:
    """A string as a YAML scalar: plain when it reads back identically, else double-quoted."""
    if _plain(value, _BLOCK_SCALAR):
        # The common case (ids, dates, names), decided without YAML: such a value is one plain scalar
        # in a block and in a flow list alike (a `:` inside it is followed by a word character).
        return value
    if value and value == value.strip() and "\n" not in value:
        from memory_mcp.truth import strictyaml

        try:
            if strictyaml.load(f"k: {value}") == {"k": value} and strictyaml.load(f"k: [{value}]") == {"k": [value]}:
                return value
        except strictyaml.YAMLError:
            pass
    # A JSON string is a valid YAML double-quoted scalar, once the characters YAML will not take
    # raw (controls, NEL and the Unicode line separators it would fold) are escaped too.
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", json.dumps(value, ensure_ascii=False))


def _flow_list(values: list[str]) -> str:
    return "[" + ", ".join(scalar(v) for v in values) + "]"


def _flow_map(values: dict[str, str]) -> str:
    return "{" + ", ".join(f"{scalar(k)}: {scalar(v)}" for k, v in values.items()) + "}"


def _dump_extra(extra: dict[str, object]) -> str:
    """Unknown keys as block YAML; unicode kept readable unless it would not read back the same."""
    from memory_mcp.truth import strictyaml

    text = strictyaml.dump(extra, allow_unicode=True)
    if strictyaml.load(text) != extra:
        text = strictyaml.dump(extra, allow_unicode=False)
    return text


# How each kind of field's value is written after `key: `.
_WRITERS: dict[FieldKind, Callable[[Any], str]] = {
    "id": scalar,
    "enum": lambda value: value.value,
    "list": _flow_list,
    "text": scalar,
    "date": scalar,
    "number": lambda value: repr(round(value, 2)),
    "map": _flow_map,
}
_WRITE = {f.name: (_WRITERS[f.kind], f.always_written) for f in FIELDS}


def field_text(mem: Memory, name: str) -> str | None:
    """The YAML text `serialize` writes after `name: `, or None when it leaves the key out."""
    write, always = _WRITE[name]
    value = getattr(mem, name)
    return write(value) if always or value else None  # empty text, an empty list, None and 0 are left out


def serialize(mem: Memory) -> str:
    """The file text of a memory: fixed key order, empty optional keys omitted, unknown keys last."""
    lines = [f"{name}: {text}" for name in KEY_ORDER if (text := field_text(mem, name)) is not None]
    head = "\n".join(lines) + "\n"
    if mem.extra:
        head += _dump_extra(mem.extra)
    return f"---\n{head}---\n{mem.body}"


def frontmatter(mem: Memory) -> dict[str, object]:
    """The frontmatter of `mem` as a mapping, in file order, exactly as `serialize` writes it."""
    from memory_mcp.truth import strictyaml

    fm_text, _ = split(serialize(mem))
    data = strictyaml.load(fm_text or "")
    return data if isinstance(data, dict) else {}


def masked(mem: Memory) -> Memory:
    """`mem` as it may be shown when its file holds a credential: each text value masked."""
    from memory_mcp.truth.secrets import mask

    def shown(value: Any) -> Any:
        if isinstance(value, str):
            return mask(value)
        if isinstance(value, dict):
            return {k: shown(v) for k, v in value.items()}
        return [shown(v) for v in value] if isinstance(value, list) else value

    texts = {f.name: shown(getattr(mem, f.name)) for f in FIELDS if f.kind in ("text", "list", "map")}
    return replace(mem, body=mask(mem.body), extra={k: shown(v) for k, v in mem.extra.items()}, **texts)


def atomic_write(path: Path, text: str) -> None:
    """Write `text` as UTF-8 to `path` atomically (see `atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


# The temp files atomic_write_bytes makes: `.<name>.<8 random characters of mkstemp>.tmp`.
_TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")
_TEMP_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"


def _new_temp_file(path: Path) -> tuple[int, str]:
    """A new file `.NAME.XXXXXXXX.tmp` beside `path`, open, as `tempfile.mkstemp` makes one (mode 0600,
    never a file that exists or a link), without importing tempfile (1.3 ms of a one-shot `remember`)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        letters = "".join(_TEMP_LETTERS[b % len(_TEMP_LETTERS)] for b in os.urandom(8))
        tmp = os.path.join(path.parent, f".{path.name}.{letters}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp file name beside {path}")


def is_temp_name(name: str) -> bool:
    """Whether a file name is one `atomic_write_bytes` gives its temp files."""
    return _TEMP_NAME.match(name) is not None


def leftover_temp_files(folder: Path) -> list[Path]:
    """Temp files of `atomic_write_bytes` under `folder`: only a writer killed mid-write leaves one.
    Folders are walked as `Path.rglob` does (links to folders not followed) by name, with a Path
    made only for a find: every process's first call looks, and rglob made one of each file (1.3 of
    its 2.3 ms at 1,000 memories)."""
    found: list[Path] = []
    folders = [str(folder)]
    while folders:
        try:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif entry.name[0] == "." and _TEMP_NAME.match(entry.name) and entry.is_file():
                        found.append(Path(entry.path))
        except OSError:  # a folder gone or unreadable meanwhile is passed over
            continue
    return found


def _umask() -> int:
    mask = os.umask(0o022)  # reading the umask means setting it: set it straight back
    os.umask(mask)
    return mask


_UMASK = _umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so a crash leaves either the old file or the new one, never half.

    The temp file is a dot-file in the same folder: the scanner skips dot-files, and rename
    within one folder is atomic."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _new_temp_file(path)
    try:
        # mkstemp makes the file 0600: a file replaced keeps its mode, a new one gets the umask's.
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
