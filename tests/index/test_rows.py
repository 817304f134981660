"""What the index hands back as a row: `schema.to_row` turns stored JSON back into values."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_mcp.app.store import Store
from memory_mcp.index.schema import RowFilter
from memory_mcp.truth.stamp import Writer
from memory_mcp.truth.writeoptions import Remember


def test_rows_of_one_session_share_a_read_only_written_by(tmp_path: Path) -> None:
    """A map column (`written_by`) is decoded once per distinct value and shared by the rows that
    hold it (a recall reads 24 whole rows; decoding each was 60 us of an agent-built store's recall):
    sharing is only safe because no row can change it."""
    store = Store.open(tmp_path / "s")
    try:
        by = Writer("test-client", "session-1", tmp_path)
        for text in ("Invoices round half-even to the cent.", "Refunds go through the ledger service."):
            store.remember(Remember(content=text, by=by))
        rows = store.session.index().select(RowFilter(states=frozenset({"active"})))
    finally:
        store.close()
    assert len(rows) == 2
    first, second = (r.written_by for r in rows)
    assert first["client"] == "test-client" and first["session"] == "session-1"
    assert first == second and first is second
    with pytest.raises(TypeError):
        first["client"] = "someone else"  # type: ignore[index]
