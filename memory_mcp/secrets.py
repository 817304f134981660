"""Credential detection for content about to be remembered.

Memories are committed to git and may be pushed to a remote, so a credential must never reach a
file. Findings name the kind and the line, never any character of the value. Documented example
keys (AWS's AKIAIOSFODNN7EXAMPLE and friends) count: an agent cannot tell them from real ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("AWS access key id", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16}\b")),
    ("AWS secret access key", re.compile(
        r"(?i)(?:aws|secret)[^\n]{0,30}?(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])")),
    ("GitHub token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_-]{20,}")),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}")),
    ("Stripe secret key", re.compile(r"\b[sr]k_live_[A-Za-z0-9]{20,}")),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    ("private key block", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")),
    ("JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}")),
    ("password in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s/@]+@[^\s/]+", re.IGNORECASE)),
    ("bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{20,}")),
    ("password assignment", re.compile(
        r"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b\s*[:=]\s*"
        r"['\"]?(?=[^\s'\"]*[0-9])(?=[^\s'\"]*[A-Za-z])[^\s'\"]{8,}")),
]


@dataclass(frozen=True)
class Finding:
    kind: str
    line: int


def scan(text: str) -> list[Finding]:
    """Every credential-looking match in `text`: its kind and 1-based line, at most one per kind."""
    found: dict[str, Finding] = {}
    for kind, pattern in _PATTERNS:
        m = pattern.search(text)
        if m and kind not in found:
            found[kind] = Finding(kind, text.count("\n", 0, m.start()) + 1)
    return sorted(found.values(), key=lambda f: f.line)
