"""A memory's standing with the person on this machine: their own, accepted, not accepted yet, or
rejected; and the one sort key that puts them in that order within a type.

A standing is a fact about one version of a memory (its id and the git blob of its file's bytes),
never about the memory file: whoever writes the file could write "accepted" into it, and a team
shares it. The person's decisions are kept in their config folder (`app/authorship.py`).

Standard library only: every hook process imports it.
"""

from __future__ import annotations

import hashlib

OWN = "own"  # written through this program on this machine (or a hand edit made here)
ACCEPTED = "accepted"  # held by the store when the person trusted it or upgraded, or accepted since
UNACCEPTED = "unaccepted"  # added or changed since by someone else: shown last within a type, marked
REJECTED = "rejected"  # hidden from this person's hooks, digest and recall
STANDINGS = (OWN, ACCEPTED, UNACCEPTED, REJECTED)
# Within a type: own, then accepted, then not accepted. The one place this order is decided: the
# digest (app/provenance.py), the prompt hook and the file hook (adapters/hooks/events.py) sort by it.
_RANK = {OWN: 0, ACCEPTED: 1, "": 1, UNACCEPTED: 2, REJECTED: 3}
DROPPED = _RANK[REJECTED]  # the rank of what is not shown at all


def rank(standing: str) -> int:
    """The sort key of a standing within a type (a hit with no standing known sorts as accepted)."""
    return _RANK.get(standing, 2)


def blob_sha(data: bytes) -> str:
    """The git blob id (SHA-1) of a file's bytes: the version of a memory a decision is about, and
    the key that finds the commit that wrote it."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
