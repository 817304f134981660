"""A memory's text made safe to show in the page: markdown with raw HTML off (a `<script>` or an
`<img onerror>` in a memory is shown as text), search words marked in escaped text, and the diff
between two versions of a file. Everything returned as `Markup` was escaped here first."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date
from functools import cache

from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from memory_mcp.truth.visible import shown


@cache
def _markdown() -> MarkdownIt:
    # commonmark with html off: raw HTML blocks and inline tags are escaped, not passed through;
    # links with a javascript:, vbscript:, file: or data: target are not made links (validateLink).
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def markdown(text: str) -> Markup:
    """A memory body as HTML: markdown-it escapes every character of the text it does not render;
    a link opens nothing of this page to the site it names."""
    md = _markdown()
    tokens = md.parse(shown(text))
    for token in tokens:
        for child in token.children or ():
            if child.type == "link_open":
                child.attrSet("rel", "noopener noreferrer nofollow")
    return Markup(md.renderer.render(tokens, md.options, {}))


def marked(text: str, query: str) -> Markup:
    """`text` escaped, with each word of `query` (two characters or more) wrapped in <mark>."""
    words = sorted({w for w in re.findall(r"\w{2,}", query.lower())}, key=len, reverse=True)
    text = shown(text)
    if not words:
        return Markup(escape(text))
    pattern = re.compile("(" + "|".join(re.escape(w) for w in words) + ")", re.IGNORECASE)
    parts = pattern.split(text)
    return Markup("").join(Markup("<mark>{}</mark>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


def field(value: object) -> Markup:
    """A frontmatter value as the page shows it, escaped: a mapping (`written_by`) as a list of its
    keys and values, a list of plain values joined by commas (of mappings, one item each), a date as
    ISO, true and false and null as YAML spells them."""
    if isinstance(value, dict):
        items = Markup("").join(Markup('<li><span class="key">{}</span> {}</li>').format(shown(str(k)), field(v))
                                for k, v in value.items())
        return Markup('<ul class="map">{}</ul>').format(items)
    if isinstance(value, list | tuple):
        if any(isinstance(v, dict | list | tuple) for v in value):
            return Markup('<ol class="items">{}</ol>').format(
                Markup("").join(Markup("<li>{}</li>").format(field(v)) for v in value))
        return Markup(", ").join(field(v) for v in value) if value else Markup('<span class="none">[]</span>')
    if value is None:
        return Markup('<span class="none">null</span>')
    if isinstance(value, bool):
        return Markup("true" if value else "false")
    return Markup(escape(shown(value.isoformat() if isinstance(value, date) else str(value))))


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "add", "del", "hunk" or "same"
    text: str


def diff(before: str, after: str, before_name: str, after_name: str) -> list[DiffLine]:
    """The unified diff of two versions of a file, a line each, for the template to escape."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), before_name, after_name, lineterm="")
    out = []
    for line in lines:
        kind = ("hunk" if line.startswith(("@@", "---", "+++")) else "add" if line.startswith("+")
                else "del" if line.startswith("-") else "same")
        out.append(DiffLine(kind, shown(line)))
    return out
