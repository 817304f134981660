"""uvicorn's h11 protocol with the connection guards of `httpserve` (see its docstring): a deadline
on each request's headers and a cap on the connections that have not yet sent a trusted request.
Its own module because importing uvicorn's protocol costs start-up time that stdio never needs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, ClassVar

from uvicorn.protocols.http.h11_impl import H11Protocol

HEADER_TIMEOUT = 10.0  # seconds for a request's headers to arrive
PENDING_MAX = 64  # connections open without a trusted request

Trusted = Callable[[list[tuple[bytes, bytes]]], bool]


class _GuardedH11(H11Protocol):
    """One subclass per server (`guarded_protocol`): its connections share the `pending` set."""

    trusted: ClassVar[Trusted]
    header_timeout: ClassVar[float]
    pending_max: ClassVar[int]
    pending: ClassVar[dict[Any, None]]  # insertion order: the oldest first
    _deadline: asyncio.TimerHandle | None = None
    _armed_for: object = None
    _seen: object = None
    _trusted = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.pending[self] = None
        while len(self.pending) > self.pending_max:
            next(iter(self.pending))._drop()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self.pending.pop(self, None)
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._inspect()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next, pipelined request
        self._arm()  # the next request's headers have the same deadline
        self._inspect()

    def _inspect(self) -> None:
        """A new request's headers have arrived: stop the clock, and trust the connection once one
        request carries the token."""
        if self.cycle is None or self.cycle is self._seen:
            return
        self._seen = self.cycle
        self._disarm()
        if not self._trusted and type(self).trusted(list(self.cycle.scope["headers"])):
            self._trusted = True
            self.pending.pop(self, None)

    def _arm(self) -> None:
        self._disarm()
        if self.transport is not None and not self.transport.is_closing():
            self._armed_for = self.cycle
            self._deadline = self.loop.call_later(self.header_timeout, self._headers_late)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _headers_late(self) -> None:
        self._deadline = None
        # Only while waiting for headers: no request since arming, the last one answered.
        if self.cycle is self._armed_for and (self.cycle is None or self.cycle.response_complete):
            self._drop()

    def _drop(self) -> None:
        self.pending.pop(self, None)
        self._disarm()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(trusted: Trusted, header_timeout: float = HEADER_TIMEOUT,
                     pending_max: int = PENDING_MAX) -> type[_GuardedH11]:
    """The protocol class for one server: `trusted(headers)` says whether a request's headers carry
    the token (always true without one)."""
    return type("GuardedH11", (_GuardedH11,), {"trusted": staticmethod(trusted), "header_timeout": header_timeout,
                                               "pending_max": pending_max, "pending": {}})
