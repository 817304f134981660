"""What text costs against a token budget (recall's `max_tokens`, the digest's cap)."""

from __future__ import annotations


def estimate_tokens(text: str) -> int:
    """A cheap token estimate: about four characters a token, never less than one."""
    return max(1, (len(text) + 3) // 4)


def hit_tokens(path: str, title: str, excerpt: str) -> int:
    """What one recall hit costs against a `max_tokens` budget (its text plus the list's markup)."""
    return estimate_tokens(f"{path} {title} {excerpt}") + 8
