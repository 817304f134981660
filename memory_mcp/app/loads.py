"""Where the memories load, for the local page's insights: each store served (the project's, its
team store, the user's) with how many memories it holds, and the project's team store as the team
issue records it when it is not served: named by the project's pointer file but not joined on this
machine, refused, or none at all."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memory_mcp.truth import roots, teams
from memory_mcp.truth.errors import StoreError

if TYPE_CHECKING:
    from memory_mcp.app.store import Store

SERVED = "served"
NOT_JOINED = "not joined"  # the project's pointer names a team store the person has not joined here
NOT_SERVED = "not served"  # joined, but the page serves other stores (`--store` named one)
REFUSED = "refused"  # the pointer file is not one this program wrote or would (its reason in `why`)
NONE = "none"  # the project names no team store


@dataclass(frozen=True)
class Load:
    """One scope memories load from: how many it holds (None when it is not served), where it is,
    the team store's remote, and, for a team store not served, why."""

    scope: str
    state: str
    count: int | None = None
    root: str = ""
    remote: str = ""
    why: str = ""


def where_they_load(stores: Mapping[str, Store], folder: Path | None) -> list[Load]:
    """Every store served (`stores`: by scope, in read order), and the team store of the project
    holding `folder` (the folder the page runs in) after the project's when it is not among them."""
    team = _team(folder)
    out = []
    for name, store in stores.items():
        try:
            count: int | None = store.timeline(limit=1).total
        except StoreError:
            count = 0  # a store not trusted here, or unreadable: it loads nothing
        out.append(Load(name, SERVED, count, str(store.root), team.remote if team and name == roots.TEAM else ""))
    if roots.TEAM in stores:
        return out
    if team is None:
        missing = Load(roots.TEAM, NONE)
    elif team.error:
        missing = Load(roots.TEAM, REFUSED, why=team.error)
    else:
        missing = Load(roots.TEAM, NOT_SERVED if team.joined else NOT_JOINED, root=str(team.store or ""),
                       remote=team.remote)
    return [*out[:1], missing, *out[1:]]


def _team(folder: Path | None) -> teams.Team | None:
    """The team store the pointer file of the project holding `folder` names (None: no pointer)."""
    if folder is None:
        return None
    try:
        return roots.team(roots.locate(folder, record=False))
    except StoreError:  # a project whose store is refused: status says why
        return None
