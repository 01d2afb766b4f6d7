"""A GPU's scale-up link (NVLink, Infinity Fabric, PCIe) as a communicator's domain uses it:
the figures :func:`advisor.engine.model.collectives.make_domain` reads of the GPU."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from advisor.engine.model.nccl_versions import NIC_BEHIND_C2C_GPUS

if TYPE_CHECKING:
    from advisor.engine.facts.catalog import GpuSpec


@dataclass(frozen=True)
class ScaleUp:
    """A GPU's scale-up link (NVLink, Infinity Fabric, PCIe) as a domain uses it."""

    kind: str
    gbytes_per_s: float
    efficiency: float | None = None
    """Achieved share of the link rate (None: the kind's default)."""
    nvls: bool = False
    """NVLink SHARP (in-switch reduction) available."""
    blackwell: bool = False
    """Blackwell-generation NVLink (NCCL sizes its NVLS channels by compute capability)."""
    hopper: bool = False
    """Hopper generation (DeepEP's internode kernels' forwarding limit was measured there)."""
    generation: str = ""
    """Catalog GPU generation (``volta`` ... ``blackwell``); NCCL picks its one-server LL cap
    by compute capability (:data:`LL_MAX_BUSBW_ONE_NODE`); empty: unknown."""
    nic_c2c: bool = False
    """The compute NICs hang off the host CPU, reached over a C2C link (Grace superchips:
    :data:`nccl_versions.NIC_BEHIND_C2C_GPUS`); NCCL enables LL128 across domains on that path
    only from 2.27.3."""
    _value_hash: int = field(default=-1, init=False, repr=False, compare=False)
    """The value hash, kept once computed (-1: not yet): a scale-up keys every design network
    (``design_network.net_for``, once per plan and design priced)."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        kind: str,
        gbytes_per_s: float,
        efficiency: float | None = None,
        nvls: bool = False,
        blackwell: bool = False,
        hopper: bool = False,
        generation: str = "",
        nic_c2c: bool = False,
    ) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "gbytes_per_s", gbytes_per_s)
        object.__setattr__(self, "efficiency", efficiency)
        object.__setattr__(self, "nvls", nvls)
        object.__setattr__(self, "blackwell", blackwell)
        object.__setattr__(self, "hopper", hopper)
        object.__setattr__(self, "generation", generation)
        object.__setattr__(self, "nic_c2c", nic_c2c)
        object.__setattr__(self, "_value_hash", -1)

    def _value(self) -> tuple[object, ...]:
        """The compared fields' values, in the fields' order (as ``@dataclass`` reads them)."""
        return (
            self.kind,
            self.gbytes_per_s,
            self.efficiency,
            self.nvls,
            self.blackwell,
            self.hopper,
            self.generation,
            self.nic_c2c,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, ScaleUp)
        return self._value() == other._value()

    def __hash__(self) -> int:
        kept = self._value_hash
        if kept == -1:
            kept = hash(self._value())
            object.__setattr__(self, "_value_hash", kept)
        return kept

    @classmethod
    def of(cls, gpu: GpuSpec, nvls: bool | None = None) -> ScaleUp:
        """The catalog GPU's scale-up; ``nvls`` None: the GPU's own NVLink SHARP."""
        from advisor.engine.model.efficiency import profile

        return cls(
            kind=gpu.scaleup_kind,
            gbytes_per_s=gpu.scaleup_gbytes_per_s,
            efficiency=gpu.scaleup_efficiency,
            nvls=gpu.nvlink_sharp if nvls is None else nvls,
            blackwell=profile(gpu).generation == "blackwell",
            hopper=profile(gpu).generation == "hopper",
            generation=gpu.generation,
            nic_c2c=gpu.id in NIC_BEHIND_C2C_GPUS,
        )
