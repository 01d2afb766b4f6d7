"""The hardware catalog: GPUs, model presets and the network items (NICs, switches, optics).

``Catalog.to_dict()`` / ``Catalog.from_dict()`` round-trip everything so the Django shell can
store an edited copy and pass it back to :func:`advisor.engine.evaluate`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from advisor.engine.facts.catalog.gpus import GPUS, GpuSpec
from advisor.engine.facts.catalog.models import MODELS, ModelSpec, with_derived_defaults
from advisor.engine.facts.catalog.network import (
    CABLES,
    NICS,
    SWITCHES,
    TRANSCEIVERS,
    Cable,
    Nic,
    Switch,
    Transceiver,
)
from advisor.engine.facts.catalog.rules import check_catalog_items

BUILTIN_VERSION_PREFIX = "builtin-"
"""The built-in catalog's version is this prefix and a digest of its items
(:func:`content_version`), so every change to the built-in catalog names a new version: runs
record the catalog they were priced with, and ``migrate`` re-applies staff edits on top of a
changed built-in catalog only when its version changes (``advisor.hardware.services.
catalog_reapply_edits``). A hand-kept "builtin-2025.11.1" stayed the same while B300, GB300,
MI355X and the 800G parts were added."""

__all__ = [
    "BUILTIN_VERSION_PREFIX",
    "Cable",
    "Catalog",
    "GpuSpec",
    "ModelSpec",
    "Nic",
    "Switch",
    "Transceiver",
    "default_catalog",
]


@dataclass(frozen=True)
class Catalog:
    """Everything the engine knows about hardware and model presets."""

    version: str
    gpus: tuple[GpuSpec, ...]
    models: tuple[ModelSpec, ...]
    nics: tuple[Nic, ...]
    switches: tuple[Switch, ...]
    transceivers: tuple[Transceiver, ...]
    cables: tuple[Cable, ...]
    _gpu_index: dict[str, GpuSpec] = field(init=False, repr=False, compare=False, hash=False)
    _model_index: dict[str, ModelSpec] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_gpu_index", {g.id: g for g in self.gpus})
        object.__setattr__(self, "_model_index", {m.id: m for m in self.models})

    def gpu(self, gpu_id: str) -> GpuSpec | None:
        return self._gpu_index.get(gpu_id)

    def model(self, model_id: str) -> ModelSpec | None:
        return self._model_index.get(model_id)

    @property
    def gpu_ids(self) -> tuple[str, ...]:
        return tuple(g.id for g in self.gpus)

    @property
    def model_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.models)

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible copy of the whole catalog."""
        return {
            "version": self.version,
            "gpus": [g.to_dict() for g in self.gpus],
            "models": [m.to_dict() for m in self.models],
            "nics": [n.to_dict() for n in self.nics],
            "switches": [s.to_dict() for s in self.switches],
            "transceivers": [t.to_dict() for t in self.transceivers],
            "cables": [c.to_dict() for c in self.cables],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Catalog:
        """Inverse of :meth:`to_dict`; missing sections fall back to the built-in items.

        Every item must obey the catalog rules (:mod:`.rules`: prices above 0 and below a sane
        maximum, positive whole ports, radix and speeds, allowed GPUs per server); one that
        does not raises :class:`~.rules.CatalogError` naming the item and the field."""
        base = default_catalog()
        catalog = cls(
            version=str(raw.get("version", base.version)),
            gpus=_load(raw, "gpus", GpuSpec.from_dict, base.gpus),
            models=_load(
                raw, "models", lambda d: with_derived_defaults(ModelSpec.from_dict(d)), base.models
            ),
            nics=_load(raw, "nics", Nic.from_dict, base.nics),
            switches=_load(raw, "switches", Switch.from_dict, base.switches),
            transceivers=_load(raw, "transceivers", Transceiver.from_dict, base.transceivers),
            cables=_load(raw, "cables", Cable.from_dict, base.cables),
        )
        check_catalog_items(
            gpus=catalog.gpus,
            nics=catalog.nics,
            switches=catalog.switches,
            transceivers=catalog.transceivers,
            cables=catalog.cables,
        )
        return catalog


def _load(raw: dict[str, Any], key: str, make: Any, default: tuple[Any, ...]) -> tuple[Any, ...]:
    items = raw.get(key)
    if items is None:
        return default
    return tuple(make(item) for item in items)


def content_version(catalog: Catalog) -> str:
    """:data:`BUILTIN_VERSION_PREFIX` and the first 12 hex digits of the SHA-256 of the
    catalog's items (:meth:`Catalog.to_dict` without its version, keys sorted)."""
    items = {key: value for key, value in catalog.to_dict().items() if key != "version"}
    text = json.dumps(items, sort_keys=True, default=str)
    return BUILTIN_VERSION_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:12]


@lru_cache(maxsize=1)
def default_catalog() -> Catalog:
    """The built-in catalog (cached; it is immutable), versioned by its content."""
    catalog = Catalog(
        version=BUILTIN_VERSION_PREFIX,
        gpus=GPUS,
        models=MODELS,
        nics=NICS,
        switches=SWITCHES,
        transceivers=TRANSCEIVERS,
        cables=CABLES,
    )
    return replace(catalog, version=content_version(catalog))
