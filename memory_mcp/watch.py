"""`memory-mcp watch`: keep the index warm while a person edits, instead of waiting for the next call.

Every tool call reconciles anyway; watching only moves that work (and the `reconcile:` commit of a
hand edit) to the moment the file is saved, so a big edit session does not slow the next recall.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from .reconcile import ReconcileReport
from .store import Store


def _relevant(change: watchfiles.Change, path: str) -> bool:
    name = Path(path).name
    return (name.endswith(".md") and not name.startswith((".", "#"))) or name == "dictionary.md"


def watch(store: Store, on_report: Callable[[ReconcileReport], None],
          stop: threading.Event | None = None, debounce_ms: int = 300) -> None:
    """Reconcile after every batch of saved changes under memories/ or to dictionary.md, until `stop`."""
    paths = [store.root / "memories", store.root / "dictionary.md"]
    for _ in watchfiles.watch(*[p for p in paths if p.exists()], watch_filter=_relevant,
                              debounce=debounce_ms, stop_event=stop, raise_interrupt=False):
        on_report(store.refresh())
