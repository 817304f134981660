"""System edits of a file a person wrote: only the lines an edit must change are changed, and the
file keeps its byte order mark and line ends (its mode is kept by files.atomic_write_bytes).

The server's own files are written whole (files.serialize); a person's layout, comments and quoting
survive an edit of theirs (a feedback count, an archived memory made active again)."""

from __future__ import annotations

import codecs

from memory_mcp.truth.files import decode, field_text, serialize, split
from memory_mcp.truth.model import FIELDS, Memory


def edit(original: bytes, before: Memory, after: Memory) -> bytes:
    """The bytes of a person's file (`original`, which parses as `before`) once it says `after`.

    The frontmatter lines of the fields that changed are rewritten and the body replaced; every other
    line stays as it was. When that cannot be done line by line (no frontmatter yet, an unknown key
    changed, a changed key whose value spans several lines) the file is written whole."""
    current = decode(original)
    changed = {f.name: field_text(after, f.name) for f in FIELDS
               if field_text(before, f.name) != field_text(after, f.name)}
    text = None
    # A file exactly as the server writes it is the server's own: written whole, in key order.
    if before.extra == after.extra and current != serialize(before):
        text = set_scalars(current, changed, after.body)
    return encode_like(text if text is not None else serialize(after), original)


def set_scalars(text: str, values: dict[str, str | None], body: str | None = None) -> str | None:
    """`text` with top-level one-line keys set to these YAML values (None removes the key) and, when
    given, its body replaced; everything else untouched. None when a key's value spans several lines
    or there is no frontmatter: the caller then rewrites the whole file."""
    fm, old_body = split(text)
    if fm is None:
        return None
    lines = fm.split("\n")
    pending = dict(values)
    out: list[str] = []
    for i, line in enumerate(lines):
        key = line.split(":", 1)[0] if ":" in line and not line.startswith((" ", "\t", "-", "#")) else None
        if key in pending:
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if following.startswith((" ", "\t", "-")) and following.strip():
                return None
            value = pending.pop(key)
            if value is not None:
                out.append(f"{key}: {value}")
            continue
        out.append(line)
    if out and out[-1] == "":
        out.pop()
    out += [f"{k}: {v}" for k, v in pending.items() if v is not None]
    return "---\n" + "\n".join(out) + "\n---\n" + (old_body if body is None else body)


def encode_like(text: str, original: bytes) -> bytes:
    """`text` (LF line ends) as bytes with the line ends and BOM of the file it came from."""
    if b"\r\n" in original:
        text = text.replace("\n", "\r\n")
    data = text.encode("utf-8")
    return codecs.BOM_UTF8 + data if original.startswith(codecs.BOM_UTF8) else data
