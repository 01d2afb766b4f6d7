"""Candidate designs and the search over them.

A candidate is fabric class x compute NIC x links per server x leaf oversubscription x switch
model.  The rules (docs/MODEL.md "Recommendation", "Platform facts") are the same for the
recommendation and for the sweep grid (:mod:`advisor.scenarios.sweeps`):

* the NICs are the platform's: its reference NIC, the NICs its vendor publishes, and other
  catalog NICs as alternatives; a platform with integrated scale-out ports (Gaudi 3) gets
  those ports only, no added NICs;
* a NIC faster than the server's PCIe x16 slot cannot run at line rate and is pruned;
* a switch must have ports and a cage form factor at the NIC's speed, and the catalog must
  hold a cable or optic joining the two cages (else the design is pruned, saying why);
* links per server: the platform's reference count (one per GPU on HGX) and fewer
  (priced alternatives); never more than the reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.engine.decision.bom import NetworkParts, switch_cage
from advisor.engine.decision.job_facts import Platform
from advisor.engine.facts.catalog.network import Nic, Switch
from advisor.engine.facts.vocabulary import ETHERNET, FABRIC_IDS, INFINIBAND, fabric_label

OVERSUBSCRIPTIONS: tuple[float, ...] = (1.0, 2.0, 3.0)
"""Leaf oversubscription ratios tried (r:1); 1:1 is field practice for compute fabrics."""
_IB_GEN = {100: "EDR", 200: "HDR", 400: "NDR", 800: "XDR"}


def fabric_title(fabric: str, gbps: int) -> str:
    if fabric == INFINIBAND:
        return f"InfiniBand {_IB_GEN.get(gbps, f'{gbps}G')}"
    return f"{fabric_label(fabric)} {gbps}G"


@dataclass(frozen=True)
class Candidate:
    fabric: str
    nic: Nic
    nics_per_node: int
    """Compute links per server (NIC ports; 24 x 200G on Gaudi 3)."""
    oversubscription: float
    switch: Switch
    adaptive_routing: bool | None
    in_network_reduction: bool
    planes: int = 1
    """Independent fabrics the rails are split over (search.multi_plane_variant)."""
    _layout: tuple[int, int, int] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """(switch radix at the NIC's speed, rails, links per rail), read off the catalog items on
    first use (the search asks each candidate for them several times); not part of the value."""

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        fabric: str,
        nic: Nic,
        nics_per_node: int,
        oversubscription: float,
        switch: Switch,
        adaptive_routing: bool | None,
        in_network_reduction: bool,
        planes: int = 1,
    ) -> None:
        object.__setattr__(self, "fabric", fabric)
        object.__setattr__(self, "nic", nic)
        object.__setattr__(self, "nics_per_node", nics_per_node)
        object.__setattr__(self, "oversubscription", oversubscription)
        object.__setattr__(self, "switch", switch)
        object.__setattr__(self, "adaptive_routing", adaptive_routing)
        object.__setattr__(self, "in_network_reduction", in_network_reduction)
        object.__setattr__(self, "planes", planes)
        object.__setattr__(self, "_layout", None)

    def _value(self) -> tuple[object, ...]:
        """The compared fields' values, in the fields' order (as ``@dataclass`` reads them)."""
        return (
            self.fabric,
            self.nic,
            self.nics_per_node,
            self.oversubscription,
            self.switch,
            self.adaptive_routing,
            self.in_network_reduction,
            self.planes,
        )

    def __eq__(self, other: object) -> bool:
        """As the dataclass's own (the field tuples compared): field by field in order, each
        identical or equal, stopping at the first that differs."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Candidate)
        return (
            self.fabric == other.fabric
            and (self.nic is other.nic or self.nic == other.nic)
            and self.nics_per_node == other.nics_per_node
            and self.oversubscription == other.oversubscription
            and (self.switch is other.switch or self.switch == other.switch)
            and self.adaptive_routing == other.adaptive_routing
            and self.in_network_reduction == other.in_network_reduction
            and self.planes == other.planes
        )

    def __hash__(self) -> int:
        return hash(self._value())

    def varied(
        self, *, oversubscription: float | None = None, planes: int | None = None
    ) -> Candidate:
        """This candidate with another leaf oversubscription or number of planes (the search's
        single-switch and multi-plane variants): ``dataclasses.replace`` without its walk over
        the fields, the catalog layout read once kept (the same NIC, links and switch)."""
        other = Candidate(
            self.fabric,
            self.nic,
            self.nics_per_node,
            self.oversubscription if oversubscription is None else oversubscription,
            self.switch,
            self.adaptive_routing,
            self.in_network_reduction,
            self.planes if planes is None else planes,
        )
        object.__setattr__(other, "_layout", self._layout)
        return other

    @property
    def nic_gbps(self) -> int:
        return self.nic.port_gbps

    def _read_layout(self) -> tuple[int, int, int]:
        kept = self._layout
        if kept is None:
            rails, per_rail = self.nic.rail_layout(self.nics_per_node)
            kept = (self.switch.radix_at(self.nic_gbps) or 0, rails, per_rail)
            object.__setattr__(self, "_layout", kept)
        return kept

    @property
    def radix(self) -> int:
        return self._read_layout()[0]

    @property
    def rails(self) -> int:
        """Rails of the compute fabric (one per link, or a Gaudi 3 server's 3 plies)."""
        return self._read_layout()[1]

    @property
    def links_per_rail(self) -> int:
        """Links each server puts on its rail's leaf together (8 per Gaudi 3 ply)."""
        return self._read_layout()[2]

    @property
    def design_key(self) -> tuple[str, int, int, float, bool | None, bool, int, int, int]:
        """What the performance model sees; candidates sharing it share one evaluation."""
        return (
            self.fabric,
            self.nic_gbps,
            self.nics_per_node,
            self.oversubscription,
            self.adaptive_routing,
            self.in_network_reduction,
            self.radix,
            self.planes,
            self.links_per_rail,
        )

    def design_dict(self) -> dict[str, Any]:
        return {
            "fabric": self.fabric,
            "nic_gbps": self.nic_gbps,
            "nics_per_node": self.nics_per_node,
            "oversubscription": self.oversubscription,
            "switch_model": self.switch.sku,
            "nic_sku": self.nic.sku,
        }


def compute_nics(parts: NetworkParts, platform: Platform) -> list[Nic]:
    """NICs that may carry the compute fabric of this platform: its integrated ports, or the
    NICs on its own boards (ConnectX-8 on the HGX / DGX B300 GPU board and on GB300 NVL72's
    compute trays, whose GPUs reach the fabric through them: a tray has no slots for more
    compute NICs, and a card on the host's PCIe would put the host between GPU and wire), or
    any card."""
    if platform.integrated and platform.reference_nic is not None:
        return [platform.reference_nic]
    if platform.on_board_nics:
        return [
            n.as_bought(platform.on_board_nics)
            for n in parts.nics
            if n.sku in platform.on_board_nics
        ]
    return [n for n in parts.nics if not n.integrated and n.use in ("compute", "any")]


def full_links(platform: Platform, nic: Nic) -> int:
    """Links per server at the platform's reference count of cards: one card per reference
    NIC (one per GPU on HGX) times this card's links (16 x 400G for a ConnectX-8 run as
    2 x 400GbE on a B300 server); integrated ports: the platform's own count."""
    if nic.integrated:
        return platform.reference_count
    return platform.reference_cards * max(1, nic.links)


def link_counts(platform: Platform, nic: Nic) -> list[int]:
    """The platform's full count of cards and fewer (a half, a quarter, one card), in links;
    never more than the reference."""
    if nic.integrated:
        return [platform.reference_count]
    per_card = max(1, nic.links)
    cards = platform.reference_cards
    counts = {cards, max(1, cards // 2), max(1, cards // 4), 1}
    return sorted(c * per_card for c in counts if c <= cards)


def card_gbps(nic: Nic) -> int:
    """One port's total line rate (speed x links per port: 800 for a ConnectX-8 run as
    2 x 400GbE): what the PCIe slot must carry for the port to run at line rate.  Separate
    ports of a multi-port card can each be used alone, so they are not summed."""
    return nic.port_gbps * max(1, nic.links_per_port)


def enumerate_candidates(
    parts: NetworkParts, platform: Platform, *, rdma_only: bool = False
) -> tuple[list[Candidate], list[dict[str, Any]]]:
    """All candidate designs and the design classes pruned before sizing (with reasons)."""
    pruned: list[dict[str, Any]] = []
    slot = platform.slot_gbps
    nics = compute_nics(parts, platform)
    too_fast = sorted({card_gbps(n) for n in nics if not n.integrated and card_gbps(n) > slot})
    if too_fast:
        pruned.append(
            {
                "design": {"card_gbps": too_fast},
                "reason": f"{platform.gpu_name} servers have PCIe Gen{platform.pcie_gen} x16 slots "
                f"carrying about {slot:.0f} Gb/s"
                + ("" if platform.pcie_known else " (generation assumed: not in the catalog)")
                + f", too little to run a {'/'.join(str(g) for g in too_fast)}G NIC at line "
                "rate",
            }
        )
    if platform.integrated:
        pruned.append(
            {
                "design": {"nic_sku": "added NICs"},
                "reason": f"{platform.gpu_name} scales out through its integrated ports "
                f"({platform.reference_count} x {platform.reference_gbps}G per server); no "
                "NICs are added",
            }
        )
    elif platform.on_board_nics:
        pruned.append(
            {
                "design": {"nic_sku": "added NICs"},
                "reason": f"{platform.gpu_name} servers reach the compute fabric through the "
                "NICs on their own boards; no compute NICs are added",
            }
        )
    out: list[Candidate] = []
    no_cage: set[tuple[str, str]] = set()
    for fabric in FABRIC_IDS:
        if rdma_only and fabric == ETHERNET:
            continue
        for nic in nics:
            if (not nic.integrated and card_gbps(nic) > slot) or not nic.serves(fabric):
                continue
            if fabric != ETHERNET and not nic.rdma:
                continue
            for switch in parts.switches:
                if switch.role in ("management", "storage") or not switch.serves(fabric):
                    continue
                if not switch.radix_at(nic.port_gbps):
                    continue
                try:
                    switch_cage(switch, nic.port_gbps)
                except ValueError:
                    no_cage.add((switch.sku, f"{nic.port_gbps}G"))
                    continue
                ar = _adaptive(fabric, nic, switch)
                inr = fabric == INFINIBAND and switch.in_network_reduction
                for n in link_counts(platform, nic):
                    for r in OVERSUBSCRIPTIONS:
                        out.append(Candidate(fabric, nic, n, r, switch, ar, inr))
    for sku, speed in sorted(no_cage):
        pruned.append(
            {"design": {"switch_model": sku}, "reason": f"no cage form factor listed at {speed}"}
        )
    return out, pruned


def _adaptive(fabric: str, nic: Nic, switch: Switch) -> bool | None:
    if fabric == INFINIBAND:
        return switch.adaptive_routing
    if fabric == ETHERNET:
        return None
    if nic.packet_spraying:
        return True
    return bool(switch.adaptive_routing and nic.adaptive_routing)
