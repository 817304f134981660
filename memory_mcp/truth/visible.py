"""Text as a reader will see it: characters that are invisible or that steer a terminal or a
renderer are shown as escapes wherever memory text is rendered (hooks, digest, CLI, the text of
MCP results). Structured fields keep the stored text; only what is rendered is escaped.

Two kinds are escaped:
- C0 and C1 control characters but tab and newline (ESC, CSI, OSC: a file could move the cursor,
  retitle a terminal or hide text), as `\\x1b`;
- Unicode format characters (category Cf: zero-width spaces and joiners, bidi embeddings and
  overrides, the tag characters U+E0000-E007F that can spell a whole hidden sentence) and the line
  and paragraph separators, as `\\u200b` or `\\U000e0041`. A model reads them although a person
  sees nothing; written out, both see the same text.

The class is written out rather than built from `unicodedata` at import (a scan of every code point
costs a hook about 100 ms); a test checks it covers every Cf character this Python knows.
Standard library only: every hook process imports it.
"""

from __future__ import annotations

import re

_FORMAT_BMP = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\ufeff\ufff9-\ufffb"
)
_FORMAT_ASTRAL = "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
HIDDEN = re.compile(f"[{_CONTROLS}{_FORMAT_BMP}{_FORMAT_ASTRAL}]")
# What `has_hidden` searches first: the hidden characters of the Basic Multilingual Plane and any
# character beyond it, whose few hits are then checked against HIDDEN. HIDDEN's own astral ranges
# slowed its search of every character: 3 KB of a recall's text took 27 us, against 10 with this.
_CANDIDATE = re.compile(f"[{_CONTROLS}{_FORMAT_BMP}\U00010000-\U0010ffff]")


def _escape(m: re.Match[str]) -> str:
    n = ord(m.group(0))
    if n <= 0xFF:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}" if n <= 0xFFFF else f"\\U{n:08x}"


def shown(text: str) -> str:
    """`text` with every control and format character but tab and newline written as an escape."""
    return HIDDEN.sub(_escape, text) if has_hidden(text) else text


def has_hidden(text: str) -> bool:
    """Whether `text` holds a character `shown` escapes."""
    return any(m[0] <= "\uffff" or HIDDEN.match(m[0]) for m in _CANDIDATE.finditer(text))
