"""``to_dict()`` for the dataclasses that results, predictions and explanations are written from."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any


class AsDict:
    """Mixin for a dataclass: :meth:`to_dict` is ``dataclasses.asdict`` (nested dataclasses become dicts too)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]  # every user is a dataclass
