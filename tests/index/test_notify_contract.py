"""What memory_mcp.index.notify relies on in watchfiles' private `_rust_notify.RustNotify`, checked with a
real watch on a tmp folder. A failure here means watchfiles changed its private API: fix notify.py
(and only notify.py), then widen the watchfiles pin in pyproject.toml."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memory_mcp.index.notify import Notify

CHANGED = "watchfiles changed its private API (watchfiles._rust_notify.RustNotify): "


def _version() -> str:
    import watchfiles

    return getattr(watchfiles, "__version__", "?")


def _events(notify: Notify, *args: object):
    try:
        return notify.events(*args)  # type: ignore[arg-type]
    except TypeError as e:
        pytest.fail(f"{CHANGED}watch(debounce_ms, step_ms, timeout_ms, stop_event) no longer takes those "
                    f"arguments: {e}; watchfiles {_version()}")


def _events_until(notify: Notify, wanted: str, seconds: float = 5.0) -> set[tuple[int, str]]:
    """Every event taken until one names `wanted` (a real watch, so give the kernel a moment)."""
    seen: set[tuple[int, str]] = set()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = _events(notify, 10, 0, 200)
        if got == "timeout":
            continue
        assert isinstance(got, set), f"{CHANGED}watch() returned {got!r} (expected a set of events or " \
                                     f"'signal'/'stop'/'timeout'); watchfiles {_version()}"
        seen |= got
        if any(path == wanted for _, path in got):
            return seen
    pytest.fail(f"{CHANGED}no event for {wanted} within {seconds}s (got {sorted(seen)}); watchfiles {_version()}")


@pytest.fixture
def watched(tmp_path: Path):
    folder = tmp_path / "watched"
    folder.mkdir()
    single = tmp_path / "single.md"
    single.write_text("one\n")
    try:
        notify = Notify([str(folder), str(single)])
    except TypeError as e:
        pytest.fail(f"{CHANGED}the constructor RustNotify(watch_paths, debug, force_polling, poll_delay_ms, "
                    f"recursive, ignore_permission_denied) no longer takes those arguments: {e}; "
                    f"watchfiles {_version()}")
    yield notify, folder, single
    notify.close()


def test_events_are_a_set_of_change_and_absolute_path(watched) -> None:
    from watchfiles import Change

    notify, folder, single = watched
    assert not notify.polling, f"{CHANGED}a native watch reports itself as polling: {notify._rust!r}"
    # In a folder watched from the start: in a folder made now, notify adds the watch after the
    # folder's own event, so the file's creation can arrive as a modification (it failed that way in CI).
    new = folder / "a.md"
    new.write_text("hello\n")
    seen = _events_until(notify, str(new))
    for event in seen:
        assert isinstance(event, tuple) and len(event) == 2, f"{CHANGED}an event is {event!r}, not (change, path)"
        change, path = event
        assert isinstance(change, int) and isinstance(path, str), f"{CHANGED}an event is {event!r}"
        assert change in {c.value for c in Change}, f"{CHANGED}unknown change kind {change} in {event!r}"
    assert (Change.added.value, str(new)) in seen, f"{CHANGED}creating a file gave {sorted(seen)}"
    single.write_text("two\n")
    seen = _events_until(notify, str(single))
    assert any(c == Change.modified.value for c, p in seen if p == str(single)), \
        f"{CHANGED}writing a watched file gave {sorted(seen)}"
    new.unlink()
    seen = _events_until(notify, str(new))
    assert (Change.deleted.value, str(new)) in seen, f"{CHANGED}deleting a file gave {sorted(seen)}"


def test_timeout_and_stop_are_the_strings_watch_py_checks_for(watched) -> None:
    notify, _, _ = watched
    got = _events(notify, 10, 0, 50, None)
    assert got == "timeout", f"{CHANGED}watch() with nothing happening returned {got!r}, not 'timeout'"
    stop = threading.Event()
    stop.set()
    got = _events(notify, 300, 50, 0, stop)
    assert got == "stop", f"{CHANGED}watch() with the stop event set returned {got!r}, not 'stop'"


def test_a_closed_watch_raises_runtime_error(watched) -> None:
    notify, _, _ = watched
    notify.close()
    with pytest.raises(RuntimeError):
        notify.events(10, 0, 50)


def test_a_missing_path_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        Notify([str(tmp_path / "not-there")])


def test_internal_error_is_a_runtime_error_and_polling_shows_in_repr(tmp_path: Path) -> None:
    """watch.py catches RuntimeError for a watch that died, and tells polling by the repr."""
    from watchfiles._rust_notify import RustNotify, WatchfilesRustInternalError

    assert issubclass(WatchfilesRustInternalError, RuntimeError), \
        f"{CHANGED}WatchfilesRustInternalError is no longer a RuntimeError: watch.py would not catch it"
    polling = RustNotify([str(tmp_path)], False, True, 300, True, False)
    try:
        assert repr(polling).startswith("RustNotify(Poll"), \
            f"{CHANGED}a polling watch's repr is {polling!r}: Notify.polling cannot tell it apart"
    finally:
        polling.close()
