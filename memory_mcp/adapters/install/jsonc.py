"""JSON config files with comments, read and edited the way their clients read them.

Gemini CLI strips `//` and `/* */` comments from settings.json before parsing it, so people keep
comments there. Installing must read such a file and change only the one entry it owns: the edits
here replace, insert or delete the text of one member of one object and leave every other byte
(comments, order, indentation) as the person wrote it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_mcp.truth.errors import InvalidArgument


def blank_comments(text: str) -> str:
    """`text` with every comment outside strings turned into spaces (line ends kept), so positions in
    it are positions in `text` and `json.loads` reads what the client reads."""
    out = list(text)
    i, n, in_string = 0, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            in_string = c != '"'
        elif c == '"':
            in_string = True
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = ["\n" if ch == "\n" else " " for ch in text[i:end]]
            i = end
            continue
        i += 1
    return "".join(out)


def load(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and the object it holds with comments read as the client reads them
    ("", {} when the file is missing); a clear error when it is not one JSON object."""
    if not path.exists():
        return "", {}
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(blank_comments(text)) if text.strip() else {}
    except ValueError as e:
        raise InvalidArgument(f"{path} is not valid JSON ({e}); fix or remove it first.") from None
    if not isinstance(data, dict):
        raise InvalidArgument(f"{path} does not hold a JSON object; fix or remove it first.")
    return text, data


@dataclass(frozen=True)
class _Member:
    key: str
    start: int  # the key's opening quote
    value_start: int
    value_end: int


class _Scanner:
    """Spans of the members of an object in comment-blanked JSON text (already known to be valid)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.decoder = json.JSONDecoder()

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i

    def value_end(self, i: int) -> int:
        _, end = self.decoder.raw_decode(self.text, i)
        return end

    def members(self, open_brace: int) -> tuple[list[_Member], int]:
        """The members of the object whose `{` is at `open_brace`, and the position of its `}`."""
        i, found = self.skip(open_brace + 1), []
        while self.text[i] != "}":
            key, after_key = self.decoder.raw_decode(self.text, i)
            colon = self.skip(after_key)
            start = self.skip(colon + 1)
            end = self.value_end(start)
            found.append(_Member(key, i, start, end))
            i = self.skip(end)
            if self.text[i] == ",":
                i = self.skip(i + 1)
        return found, i


def _indent_at(text: str, pos: int) -> str:
    line = text[text.rfind("\n", 0, pos) + 1:pos]
    return line[:len(line) - len(line.lstrip())]


def set_member(text: str, path: list[str], value: object) -> str:
    """`text` (a JSON object, comments allowed) with the member at `path` (keys from the top) set to
    `value`; missing objects on the way are made. Only the text of that member changes."""
    blank = blank_comments(text)
    scan = _Scanner(blank)
    brace = scan.skip(0)
    for depth, key in enumerate(path):
        members, close = scan.members(brace)
        hit = next((m for m in members if m.key == key), None)
        leaf = depth == len(path) - 1
        if hit is not None and not leaf:
            brace = hit.value_start
            continue
        inner: object = value
        for k in reversed(path[depth + 1:]):
            inner = {k: inner}
        if hit is not None:
            indent = _indent_at(text, hit.start)
            shown = json.dumps(inner, indent=2).replace("\n", "\n" + indent)
            return text[:hit.value_start] + shown + text[hit.value_end:]
        if members:  # after the last member, past a comment that ends its line
            last = members[-1]
            indent = _indent_at(text, members[0].start)
            entry = f"{json.dumps(key)}: " + json.dumps(inner, indent=2).replace("\n", "\n" + indent)
            pos = last.value_end
            line_end = blank.find("\n", pos)
            line_end = len(text) if line_end < 0 else line_end
            if blank[pos:line_end].strip():
                return text[:pos] + ",\n" + indent + entry + text[pos:]
            return text[:pos] + "," + text[pos:line_end] + "\n" + indent + entry + text[line_end:]
        outer = _indent_at(text, brace)
        indent = outer + "  "
        entry = f"{json.dumps(key)}: " + json.dumps(inner, indent=2).replace("\n", "\n" + indent)
        return text[:brace + 1] + text[brace + 1:close].rstrip() + "\n" + indent + entry + "\n" + outer + text[close:]
    return text


def delete_member(text: str, path: list[str]) -> str:
    """`text` without the member at `path` (and the comma that joined it to its neighbours)."""
    blank = blank_comments(text)
    scan = _Scanner(blank)
    brace = scan.skip(0)
    for depth, key in enumerate(path):
        members, _ = scan.members(brace)
        index = next((n for n, m in enumerate(members) if m.key == key), None)
        if index is None:
            return text
        hit = members[index]
        if depth < len(path) - 1:
            brace = hit.value_start
            continue
        if index + 1 < len(members):  # up to the next member: its comma goes with it
            start, end = hit.start, members[index + 1].start
        elif index > 0:  # the last one: the comma after the one before goes (its comment stays)
            comma = blank.index(",", members[index - 1].value_end)
            line = text.rfind("\n", 0, hit.start)
            start = line if line > comma and not text[line:hit.start].strip() else comma + 1
            return text[:comma] + text[comma + 1:start] + text[hit.value_end:]
        else:  # the only one: from the end of the line before it
            start, end = hit.start, hit.value_end
            before = text.rfind("\n", 0, start)
            if before >= 0 and not text[before:start].strip():
                start = before
        # Leave no blank line where the member stood.
        line_start = text.rfind("\n", 0, start) + 1
        if index + 1 < len(members) and not text[line_start:start].strip():
            start = line_start
            end = text.rfind("\n", 0, end) + 1 if "\n" in text[start:end] else end
        return text[:start] + text[end:]
    return text


def member_text(text: str, path: list[str]) -> str:
    """The text of the value at `path` ("" when there is none)."""
    scan = _Scanner(blank_comments(text))
    brace, span = scan.skip(0), (0, 0)
    for key in path:
        members, _ = scan.members(brace)
        hit = next((m for m in members if m.key == key), None)
        if hit is None:
            return ""
        brace, span = hit.value_start, (hit.value_start, hit.value_end)
    return text[span[0]:span[1]]


def is_empty(text: str) -> bool:
    """Whether the text is an empty object with no comment in it (nothing of the person's is left)."""
    return blank_comments(text) == text and "".join(text.split()) in ("", "{}")
