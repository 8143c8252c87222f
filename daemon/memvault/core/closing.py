"""``with`` for anything that has a ``close()``: the vault, the daemon's client, the
memory tool."""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closes:
    """``with thing:`` closes ``thing`` at the block's end."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
