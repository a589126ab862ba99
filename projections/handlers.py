"""One typed handler per Event kind: the table a projection's fold dispatches each Event through.

A projection registers each rule once, ``@HANDLERS.on(SubmissionAccepted)`` over a function of the
Event and the projection's mutable draft; its fold looks the handler up by the Event's class (one
dict lookup per Event) and Events of a kind without a handler change nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar, cast

from evoledger.ledger.events import EventBase

__all__ = ["Handlers"]

D = TypeVar("D")
E = TypeVar("E", bound=EventBase)


class Handlers(Generic[D]):
    """The handlers of one projection whose draft is ``D``, by Event class."""

    __slots__ = ("_table", "of")

    def __init__(self) -> None:
        self._table: dict[type[EventBase], Callable[[EventBase, D], None]] = {}
        self.of: Callable[[type[EventBase]], Callable[[EventBase, D], None] | None] = self._table.get
        """The handler of Events of a class (``None``: that kind changes nothing); a plain dict lookup."""

    def on(self, kind: type[E]) -> Callable[[Callable[[E, D], None]], Callable[[E, D], None]]:
        """Register the decorated function as the handler of Events of class ``kind`` (one per kind)."""

        def register(handler: Callable[[E, D], None]) -> Callable[[E, D], None]:
            if kind in self._table:
                raise ValueError(f"{kind.__name__} already has a handler")
            # sound: the table only ever calls it with an Event whose class is ``kind``
            self._table[kind] = cast("Callable[[EventBase, D], None]", handler)
            return handler

        return register
