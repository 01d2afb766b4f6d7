"""Network hardware catalog: NICs, switches, transceivers and cables.

Every item is a frozen dataclass with a public source.  Technical figures (ports, speeds,
radix, typical power) come from vendor datasheets; prices are indicative street prices,
always marked ``price_is_estimate=True`` and meant to be edited by the customer (the Django
shell stores an edited copy through ``to_dict`` / ``from_dict``).

Fabric ids: ``ethernet`` (TCP/IP), ``roce`` (RoCE v2), ``infiniband``.
Speeds are per port in Gb/s.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, ClassVar, TypeVar

from advisor.engine.facts.vocabulary import ETHERNET as ETHERNET
from advisor.engine.facts.vocabulary import ETHERNET_FABRIC_IDS, FABRIC_IDS
from advisor.engine.facts.vocabulary import INFINIBAND as INFINIBAND
from advisor.engine.facts.vocabulary import ROCE as ROCE

_T = TypeVar("_T", bound="_Item")


@dataclass(frozen=True)
class _Item:
    """Common fields and JSON round trip of a catalog item."""

    sku: str
    description: str
    fabrics: tuple[str, ...]
    power_w: float
    unit_price_usd: float
    source: str
    price_is_estimate: bool
    part_number: str = ""
    """The vendor's orderable part number (OPN) as its datasheet prints it; "" when the item
    is a class of products with no one part to order (docs/MODEL.md "Part numbers")."""

    category: ClassVar[str] = "other"

    @property
    def id(self) -> str:
        return self.sku

    @property
    def display_name(self) -> str:
        """The name customers read: the description without its parenthesised detail
        ("NVIDIA Spectrum-4 SN5600 51.2T Ethernet"); never the catalog id."""
        return self.description.split(" (")[0]

    def serves(self, fabric: str) -> bool:
        return fabric in self.fabrics

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key, value in d.items():
            if isinstance(value, tuple):
                d[key] = [list(v) if isinstance(v, tuple) else v for v in value]
        d["category"] = self.category
        return d

    @classmethod
    def from_dict(cls: type[_T], raw: dict[str, Any]) -> _T:
        kwargs: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in raw:
                continue
            value = raw[f.name]
            if isinstance(value, list):
                value = tuple(tuple(v) if isinstance(v, list) else v for v in value)
            kwargs[f.name] = value
        return cls(**kwargs)


WITH_THE_SERVERS = "comes with the servers"
"""The part number column of a NIC the platform ships on its own boards (:meth:`Nic.on_board`)."""


@dataclass(frozen=True)
class Nic(_Item):
    """A network adapter; ``port_gbps`` per port, ``ports`` on the card."""

    port_gbps: int = 100
    ports: int = 1
    rdma: bool = True
    adaptive_routing: bool = False
    """Takes part in switch adaptive routing (Spectrum-X SuperNIC with Spectrum-4, IB)."""
    packet_spraying: bool = False
    """Sprays packets over all ECMP paths itself (UEC transport), so even a plain ECMP
    fabric avoids hash collisions."""
    form_factor: str = "qsfp28"
    """Cage of each port: sfp28, qsfp28, qsfp56, qsfp112 or osfp."""
    links_per_port: int = 1
    """Logical links each cage carries at ``port_gbps`` (4 for Gaudi 3's 4 x 200G OSFP)."""
    vendor: str = "NVIDIA"
    integrated: bool = False
    """Ports built into the accelerator or its baseboard (Gaudi 3): nothing to buy, price 0."""
    use: str = "compute"
    """"compute" (GPU fabric), "storage" (storage / in-band adapter) or "any"."""
    lane_gbps: int = 0
    """Electrical lane rate of a port (50 for HDR/200G QSFP56, 100 for 2 x 100G PAM4 200G);
    0 when every module of that form factor and speed fits."""
    rail_groups: int = 0
    """Rails (plies) a server's links form, each ply's links landing together on one leaf
    as whole cages (Gaudi 3: 3 plies, one per scale-out port of each card, two 4 x 200G
    OSFPs per ply; Intel Gaudi network configuration, "Terminology": Fabric Rail or Ply);
    0: every link is its own rail (one NIC per rail)."""

    category: ClassVar[str] = "nic"

    @property
    def links(self) -> int:
        """Logical links of one card (ports x links per port)."""
        return self.ports * self.links_per_port

    def on_board(self) -> Nic:
        """This NIC as a platform ships it on its own boards (HGX / DGX B300's GPU board, GB300
        NVL72's compute trays: :attr:`GpuSpec.compute_nics_on_board`): bought with the servers,
        so a quote lists it at no price and, for a part number, :data:`WITH_THE_SERVERS` (the
        PCIe card's number orders a card; the same sku: the design and its rules are the
        card's)."""
        return replace(
            self,
            description=f"{self.description}, on the platform's own boards",
            unit_price_usd=0.0,
            part_number=WITH_THE_SERVERS,
            price_is_estimate=False,
            source=f"{self.source}; on the platform's boards: priced in the servers",
        )

    def as_bought(self, on_board: Collection[str]) -> Nic:
        """This NIC as a design on a platform buys it: :meth:`on_board` when the platform ships
        it (its sku among ``on_board``, ``GpuSpec.on_board_nic_skus``), else the card; the one
        rule the candidates, the platform's reference and a stored option's BOM all price by."""
        return self.on_board() if self.sku in on_board else self

    def rail_layout(self, links: int) -> tuple[int, int]:
        """(rails, links per rail) of a server with ``links`` compute links of this NIC."""
        groups = self.rail_groups
        if groups > 1 and links % groups == 0:
            return groups, links // groups
        return links, 1


@dataclass(frozen=True)
class Switch(_Item):
    """A fixed-configuration switch; ``radix_by_gbps`` lists (speed, ports) incl. breakout."""

    radix_by_gbps: tuple[tuple[int, int], ...] = ()
    switching_tbps: float = 0.0
    adaptive_routing: bool = False
    in_network_reduction: bool = False
    """SHARP-class in-network all-reduce (InfiniBand Quantum family)."""
    port_latency_ns: float = 0.0
    rack_units: int = 1
    role: str = "fabric"
    """"fabric" (leaf/spine of an AI fabric), "tor" (front-end/storage ToR), "storage" (a
    storage / in-band leaf only, never a compute-fabric candidate), "management"."""
    cages_by_gbps: tuple[tuple[int, str, int], ...] = ()
    """(speed, cage form factor, logical ports per cage at that speed): a QM9700's 32 OSFP
    cages carry 2 x 400G each; an SN5600's 64 OSFP cages 1 x 800G, 2 x 400G or 4 x 200G."""
    vendor: str = "NVIDIA"

    category: ClassVar[str] = "switch"

    def cage_at(self, gbps: int) -> tuple[str, int] | None:
        """(cage form factor, logical ports per cage) at ``gbps``, or None if unknown."""
        for speed, cage, per_cage in self.cages_by_gbps:
            if speed == gbps:
                return cage, per_cage
        return None

    def radix_at(self, gbps: int) -> int | None:
        """Ports available at ``gbps`` (with breakout), or None if unsupported."""
        for speed, ports in self.radix_by_gbps:
            if speed == gbps:
                return ports
        return None

    @property
    def speeds_gbps(self) -> tuple[int, ...]:
        return tuple(speed for speed, _ in self.radix_by_gbps)


@dataclass(frozen=True)
class Transceiver(_Item):
    """A pluggable optical module; ``ports_per_module`` is 2 for twin-port OSFP."""

    gbps: int = 100
    form_factor: str = "qsfp28"
    reach_m: float = 100.0
    media: str = "mmf"
    ports_per_module: int = 1
    end: str = "any"
    """"nic", "switch" or "any": twin-port finned OSFP modules sit in switch cages only."""
    fibers_per_module: int = 1
    """Fiber cords a module takes (a twin-port 2 x SR4 module has two MPO-12 connectors)."""
    lane_gbps: int = 0
    """Lane rate (modules pair only at the same lane rate; 0 = the speed's only kind)."""

    category: ClassVar[str] = "transceiver"


@dataclass(frozen=True)
class Cable(_Item):
    """A cable: ``kind`` dac (passive copper), aoc (active optical) or fiber (patch cord)."""

    kind: str = "dac"
    gbps: int = 100
    reach_m: float = 3.0
    media: str = "copper"
    """"copper", "mmf" (multimode) or "smf" (single-mode); fiber cords match transceivers."""
    form_factor: str = ""
    """Connector of end A (the switch end of a breakout); "" for fiber cords."""
    form_factor_b: str = ""
    """Connector of end B (each leg of a breakout); "" means the same as end A."""
    links: int = 1
    """Logical links at ``gbps`` the cable carries (end A); a twin-port 2 x 400G DAC: 2."""
    legs: int = 1
    """Ends on side B: 1 for a straight cable, 2 or 4 for a breakout/splitter cable."""

    @property
    def end_b(self) -> str:
        return self.form_factor_b or self.form_factor

    category: ClassVar[str] = "cable"


_NV = "NVIDIA"
_PRICE = "indicative street price, estimate"

NICS: tuple[Nic, ...] = (
    Nic(
        sku="cx6lx-25g",
        part_number="MCX631102AN-ADAT",
        use="any",
        description="NVIDIA ConnectX-6 Lx 2x25GbE",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=25,
        ports=2,
        power_w=12.0,
        unit_price_usd=450.0,
        form_factor="sfp28",
        source=f"{_NV} ConnectX-6 Lx datasheet (2x25GbE, RoCE v2); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx6dx-100g",
        part_number="MCX623106AN-CDAT",
        use="any",
        description="NVIDIA ConnectX-6 Dx 2x100GbE",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=100,
        ports=2,
        power_w=20.0,
        unit_price_usd=1100.0,
        form_factor="qsfp28",
        source=f"{_NV} ConnectX-6 Dx datasheet (2x100GbE, RoCE v2); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx6-hdr-200g",
        part_number="MCX653105A-HDAT",
        lane_gbps=50,
        description="NVIDIA ConnectX-6 VPI HDR 200Gb/s InfiniBand / 200GbE",
        fabrics=FABRIC_IDS,
        port_gbps=200,
        ports=1,
        power_w=19.0,
        unit_price_usd=1500.0,
        form_factor="qsfp56",
        source=f"{_NV} ConnectX-6 VPI datasheet (HDR 200Gb/s, MCX653105A-HDAT); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx7-400g",
        part_number="MCX75310AAS-NEAT",
        description="NVIDIA ConnectX-7 NDR 400Gb/s InfiniBand / 400GbE",
        fabrics=FABRIC_IDS,
        port_gbps=400,
        ports=1,
        power_w=25.0,
        unit_price_usd=2400.0,
        form_factor="osfp",
        source=f"{_NV} ConnectX-7 datasheet (NDR 400Gb/s or 400GbE, OSFP); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="bf3-supernic-400g",
        part_number="900-9D3D4-00EN-HA0",
        description="NVIDIA BlueField-3 SuperNIC 400GbE (Spectrum-X)",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=400,
        ports=1,
        power_w=75.0,
        unit_price_usd=3000.0,
        adaptive_routing=True,
        form_factor="qsfp112",
        source=f"{_NV} BlueField-3 SuperNIC datasheet (B3140H, 400GbE, Spectrum-X RoCE AR); "
        "part number: NVIDIA BlueField-3 Networking Platform User Guide, Supported Interfaces "
        "and Port Configurations (docs.nvidia.com/networking/display/bf3dpu: HHHL single-slot "
        "SuperNIC model B3140H, OPNs 900-9D3D4-00EN-HA0 and 900-9D3D4-00NN-HA0); "
        f"{_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="uec-400g",
        description="UEC-ready 400GbE AI NIC (AMD Pensando Pollara 400 class)",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=400,
        ports=1,
        power_w=30.0,
        unit_price_usd=2000.0,
        adaptive_routing=True,
        packet_spraying=True,
        form_factor="qsfp112",
        vendor="AMD",
        source="AMD Pensando Pollara 400 product brief (400GbE, UEC 1.0 ready, "
        f"packet spraying); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx8-800g",
        part_number="900-9X81E-00EX-ST0",
        description="NVIDIA ConnectX-8 SuperNIC C8180, 800Gb/s XDR InfiniBand, single-port OSFP",
        fabrics=(INFINIBAND,),
        port_gbps=800,
        ports=1,
        power_w=45.0,
        unit_price_usd=4000.0,
        adaptive_routing=True,
        form_factor="osfp",
        source=f"{_NV} ConnectX-8 SuperNIC user manual (C8180, 900-9X81E-00EX-ST0: 1 x OSFP, "
        "XDR 800Gb/s InfiniBand or 2 x 400GbE, PCIe Gen6 x16); part number: NVIDIA ConnectX-8 "
        "SuperNIC User Manual, Introduction and Supported Interfaces "
        "(docs.nvidia.com/networking/display/connectx8supernic: C8180 SuperNICs "
        f"900-9X81E-00EX-ST0 and -DT0); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx8-2x400g",
        part_number="900-9X81E-00EX-ST0",
        description="NVIDIA ConnectX-8 SuperNIC C8180 in Ethernet mode: 2 x 400GbE on one OSFP "
        "(Spectrum-X, one 400G link per plane)",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=400,
        ports=1,
        links_per_port=2,
        power_w=45.0,
        unit_price_usd=4000.0,
        adaptive_routing=True,
        form_factor="osfp",
        source=f"{_NV} ConnectX-8 SuperNIC user manual (C8180: the 800G OSFP port runs as 2 x "
        "400GbE; Spectrum-X multi-plane with Spectrum-4 SN5600); part number: the same C8180 "
        "card as the 800G XDR entry, 900-9X81E-00EX-ST0 (NVIDIA ConnectX-8 SuperNIC User Manual, "
        f"Introduction, docs.nvidia.com/networking/display/connectx8supernic); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="thor2-400g",
        part_number="BCM957608-P1400GDF00",
        description="Broadcom Thor 2 (BCM57608) 400GbE RoCE NIC, 1 x 400G QSFP112",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=400,
        ports=1,
        power_w=25.0,
        unit_price_usd=1800.0,
        form_factor="qsfp112",
        vendor="Broadcom",
        source="Broadcom BCM57608 Thor 2 400G Ethernet controller and P1400GD adapter product "
        "briefs (1 x 400GbE QSFP112, RoCE v2, PCIe Gen5 x16); part number: public listings "
        "print the P1400GD as BCM957608-P1400GDF00 (an Alcatel-Lucent Enterprise AI data-centre "
        "server specification: '8 x BCM957608-P1400GDF00 Single-Port 400G' GPU NICs; an AMD "
        "SMI PCI VPD parser test: PN BCM957608-P1400GDF00, 'Broadcom BCM57608 1x400G QSFP-DD "
        f"PCIe Ethernet NIC'); no Broadcom ordering page was found; {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="vulcano-800g",
        description="AMD Pensando Vulcano 800G AI NIC (UEC 1.0, 800GbE, PCIe Gen6 x16)",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=800,
        ports=1,
        power_w=40.0,
        unit_price_usd=3500.0,
        adaptive_routing=True,
        packet_spraying=True,
        form_factor="osfp",
        vendor="AMD",
        source="AMD Advancing AI 2025 (Pensando Vulcano: 800G UEC AI NIC, PCIe Gen6, for the "
        f"MI400 series / Helios rack); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="bf3-2x200g",
        part_number="900-9D3B6-00CV-AA0",
        use="storage",
        description="NVIDIA BlueField-3 B3220 dual-port 200Gb/s QSFP112 (converged storage / "
        "in-band)",
        fabrics=ETHERNET_FABRIC_IDS,
        port_gbps=200,
        ports=2,
        power_w=75.0,
        unit_price_usd=2800.0,
        form_factor="qsfp112",
        source=f"{_NV} BlueField-3 DPU datasheet (B3220, 900-9D3B6-00CV-AA0: 2 x 200GbE "
        f"QSFP112); NVIDIA Enterprise RA (converged storage / in-band, 2 x 200G per server); "
        "part number: NVIDIA DOCA Installation Guide for Linux, Supported Platforms "
        "(docs.nvidia.com/doca/archive/2-8-0: 900-9D3B6-00CV-AA0, B3220 P-Series FHHL DPU, "
        "200GbE / NDR200, dual-port QSFP112, crypto enabled) and BlueField-3 user guide "
        f"(docs.nvidia.com/networking/display/bf3dpu); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx6-2x200g",
        part_number="MCX653106A-HDAT",
        lane_gbps=50,
        use="storage",
        description="NVIDIA ConnectX-6 VPI dual-port 200Gb/s (storage / in-band)",
        fabrics=FABRIC_IDS,
        port_gbps=200,
        ports=2,
        power_w=24.0,
        unit_price_usd=2000.0,
        form_factor="qsfp56",
        source=f"{_NV} ConnectX-6 VPI MCX653106A-HDAT (2 x HDR 200Gb/s); DGX A100 user guide "
        f"(2 x dual-port ConnectX-6 for storage / in-band); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="cx7-2x400g-qsfp112",
        use="storage",
        description="NVIDIA ConnectX-7 VPI dual-port 400Gb/s QSFP112 (storage / in-band)",
        fabrics=FABRIC_IDS,
        port_gbps=400,
        ports=2,
        power_w=30.0,
        unit_price_usd=3200.0,
        form_factor="qsfp112",
        source=f"{_NV} DGX H100 datasheet (2 x dual-port QSFP112 ConnectX-7 VPI, up to "
        f"400Gb/s, for storage and in-band management); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="bf3-dpu-2x400g",
        part_number="900-9D3B6-00CN-AB0",
        use="storage",
        description="NVIDIA BlueField-3 DPU dual-port 400Gb/s QSFP112 (storage / in-band)",
        fabrics=FABRIC_IDS,
        port_gbps=400,
        ports=2,
        power_w=150.0,
        unit_price_usd=4500.0,
        form_factor="qsfp112",
        source=f"{_NV} DGX B200 datasheet (2 x dual-port QSFP112 BlueField-3 DPU, up to "
        "400Gb/s); BlueField-3 B3240 datasheet; part number: NVIDIA DOCA Installation Guide "
        "for Linux, Supported Platforms (docs.nvidia.com/doca/archive/2-9-0: 900-9D3B6-00CN-AB0, "
        "B3240 P-Series dual-slot FHHL DPU, 400GbE / NDR, dual-port QSFP112, crypto enabled) "
        f"and BlueField-3 user guide (docs.nvidia.com/networking/display/bf3dpu); {_PRICE}",
        price_is_estimate=True,
    ),
    Nic(
        sku="gaudi3-scaleout-200g",
        lane_gbps=100,
        description="Intel Gaudi 3 integrated scale-out ports: 24 x 200GbE RoCE on 6 OSFP "
        "(3 per accelerator; part of the accelerator, no card to buy)",
        fabrics=(ROCE,),
        port_gbps=200,
        ports=6,
        links_per_port=4,
        power_w=0.0,
        unit_price_usd=0.0,
        form_factor="osfp",
        vendor="Intel",
        integrated=True,
        rail_groups=3,
        source="Intel Gaudi 3 AI accelerator white paper (24 x 200GbE RoCE per card, 21 "
        "inside the server, 3 per card for scale-out; HLB-325 baseboard: 6 OSFP 800GbE "
        "scale-out ports = 24 x 200G per 8-card server); price and power inside the "
        "accelerator's",
        price_is_estimate=False,
    ),
)

SWITCHES: tuple[Switch, ...] = (
    Switch(
        sku="mgmt-1g-48",
        part_number="MSN2201-CB2FC",
        description="48x1GbE + 4x100GbE management switch (NVIDIA SN2201 class)",
        fabrics=(ETHERNET,),
        radix_by_gbps=((1, 48), (100, 4)),
        cages_by_gbps=((1, "rj45", 1), (100, "qsfp28", 1)),
        switching_tbps=0.5,
        power_w=100.0,
        unit_price_usd=5000.0,
        role="management",
        source=f"{_NV} SN2201 datasheet (48x1G RJ45 + 4x100G; ordering part MSN2201-CB2FC, the "
        f"Cumulus Linux build); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="tor-100g-32",
        part_number="MSN2700-CS2F",
        description="32x100GbE top-of-rack switch (Spectrum SN2700 / Tomahawk class)",
        fabrics=ETHERNET_FABRIC_IDS,
        radix_by_gbps=((100, 32), (50, 64), (25, 128)),
        cages_by_gbps=((100, "qsfp28", 1), (50, "qsfp28", 2), (25, "qsfp28", 4)),
        switching_tbps=6.4,
        power_w=250.0,
        unit_price_usd=12000.0,
        port_latency_ns=300.0,
        role="tor",
        source=f"{_NV} SN2700 datasheet (32x100GbE, 6.4 Tb/s, breakout 4x25G); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="sn3700-200g-32",
        part_number="MSN3700-VS2F",
        description="32x200GbE Ethernet leaf (NVIDIA Spectrum-2 SN3700 class)",
        fabrics=ETHERNET_FABRIC_IDS,
        radix_by_gbps=((200, 32),),
        cages_by_gbps=((200, "qsfp56", 1),),
        switching_tbps=12.8,
        power_w=400.0,
        unit_price_usd=20000.0,
        port_latency_ns=400.0,
        role="tor",
        source=f"{_NV} Spectrum-2 SN3700 datasheet (32 x 200GbE QSFP56, 12.8 Tb/s); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="spectrum4-sn5400",
        part_number="MSN5400",
        description="NVIDIA Spectrum-4 SN5400 25.6T Ethernet (64 x 400GbE QSFP-DD)",
        fabrics=ETHERNET_FABRIC_IDS,
        radix_by_gbps=((400, 64),),
        cages_by_gbps=((400, "qsfp-dd", 1),),
        switching_tbps=25.6,
        power_w=850.0,
        unit_price_usd=40000.0,
        port_latency_ns=600.0,
        rack_units=2,
        role="storage",
        source=f"{_NV} Spectrum-4 SN5000 2U hardware user manual, data interfaces (SN5400: 64 "
        "ports of 400GbE at 50 Gb/s per lane in QSFP-DD cages, 25.6 Tb/s; also 128 x 200G and "
        "256 x 100G, not listed here: only its 400G storage-leaf use is modelled); price: the "
        "SN5600's estimate per Tb/s ($80,000 / 51.2 x 25.6); power: half the SN5600's, "
        f"estimate; {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="spectrum4-sn5600",
        part_number="MSN5600",
        description="NVIDIA Spectrum-4 SN5600 51.2T Ethernet (64x800G / 128x400G)",
        fabrics=ETHERNET_FABRIC_IDS,
        radix_by_gbps=((800, 64), (400, 128), (200, 256), (100, 256)),
        cages_by_gbps=((800, "osfp", 1), (400, "osfp", 2), (200, "osfp", 4), (100, "osfp", 4)),
        switching_tbps=51.2,
        power_w=1700.0,
        unit_price_usd=80000.0,
        adaptive_routing=True,
        port_latency_ns=600.0,
        rack_units=2,
        source=f"{_NV} Spectrum-4 SN5600 datasheet (64 OSFP 800G, 51.2 Tb/s, Spectrum-X "
        f"adaptive routing with SuperNICs); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="tomahawk5-64x800",
        part_number="DCS-7060X6-64PE-F",
        description="Broadcom Tomahawk-5 class 51.2T Ethernet (64x800G / 128x400G)",
        fabrics=ETHERNET_FABRIC_IDS,
        radix_by_gbps=((800, 64), (400, 128), (200, 256), (100, 256)),
        cages_by_gbps=((800, "osfp", 1), (400, "osfp", 2), (200, "osfp", 4), (100, "osfp", 4)),
        switching_tbps=51.2,
        power_w=1500.0,
        unit_price_usd=65000.0,
        adaptive_routing=False,
        port_latency_ns=700.0,
        vendor="Broadcom",
        rack_units=2,
        source="Broadcom BCM78900 Tomahawk 5 (51.2 Tb/s, 64x800G); Arista 7060X6-64PE "
        f"datasheet; {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="tomahawk6-128x800",
        description="Broadcom Tomahawk 6 class 102.4T Ethernet (128 x 800G / 256 x 400G / "
        "512 x 200G)",
        fabrics=ETHERNET_FABRIC_IDS,
        radix_by_gbps=((800, 128), (400, 256), (200, 512)),
        cages_by_gbps=((800, "osfp", 1), (400, "osfp", 2), (200, "osfp", 4)),
        switching_tbps=102.4,
        power_w=2800.0,
        unit_price_usd=130000.0,
        adaptive_routing=False,
        port_latency_ns=700.0,
        vendor="Broadcom",
        rack_units=3,
        source="Broadcom Tomahawk 6 (BCM78910/BCM78914) launch, June 2025: 102.4 Tb/s, 64 x "
        "1.6T, 128 x 800G or 512 x 200G, 100G or 200G SerDes; two-tier fabrics of 128k+ XPUs "
        f"at 200G; price: the Tomahawk-5 class estimate per Tb/s (2 x $65,000); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="quantum-qm8700",
        part_number="MQM8700-HS2F",
        description="NVIDIA Quantum QM8700 HDR InfiniBand (40x200G / 80x100G)",
        fabrics=(INFINIBAND,),
        radix_by_gbps=((200, 40), (100, 80)),
        cages_by_gbps=((200, "qsfp56", 1), (100, "qsfp56", 2)),
        switching_tbps=16.0,
        power_w=250.0,
        unit_price_usd=22000.0,
        adaptive_routing=True,
        in_network_reduction=True,
        port_latency_ns=130.0,
        source=f"{_NV} Quantum QM8700 datasheet (40 QSFP56 HDR, SHARPv2, 130 ns); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="quantum2-qm9700",
        part_number="MQM9700-NS2F",
        description="NVIDIA Quantum-2 QM9700 NDR InfiniBand (64x400G / 128x200G)",
        fabrics=(INFINIBAND,),
        radix_by_gbps=((400, 64), (200, 128)),
        cages_by_gbps=((400, "osfp", 2), (200, "osfp", 4)),
        switching_tbps=51.2,
        power_w=750.0,
        unit_price_usd=40000.0,
        adaptive_routing=True,
        in_network_reduction=True,
        port_latency_ns=130.0,
        source=f"{_NV} Quantum-2 QM9700 datasheet (32 OSFP = 64 NDR ports, SHARPv3); {_PRICE}",
        price_is_estimate=True,
    ),
    Switch(
        sku="quantum-x800-q3400",
        part_number="920-9B36F-00RX-8S0",
        description="NVIDIA Quantum-X800 Q3400 XDR InfiniBand (144x800G)",
        fabrics=(INFINIBAND,),
        radix_by_gbps=((800, 144),),
        cages_by_gbps=((800, "osfp", 2),),
        switching_tbps=115.2,
        power_w=5000.0,
        unit_price_usd=180000.0,
        adaptive_routing=True,
        in_network_reduction=True,
        port_latency_ns=130.0,
        rack_units=4,
        source=f"{_NV} Quantum-X800 Q3400-RA datasheet (144 ports of 800Gb/s XDR in 72 twin-port "
        f"OSFP cages, 115.2 Tb/s, SHARPv4, 4U); price: the QM9700's estimate per port Gb/s "
        "($40,000 / 25.6 Tb/s x 115.2 Tb/s); part number: public listings (a transcription of "
        "the major-components table of NVIDIA's DGX SuperPOD Rubin NVL8 reference architecture, "
        "SP-12834-001: 64 + 36 x 920-9B36F-00RX-8S0 Q3400 leaves and spines; a parts list: "
        "'920-9B36F-00RX-8S0 "
        "NVIDIA air cooled system 72 ports OSFP XDR mng switch w/ 8 PS standard depth C2P "
        f"airflow'), {_PRICE}",
        price_is_estimate=True,
    ),
)

TRANSCEIVERS: tuple[Transceiver, ...] = (
    Transceiver(
        sku="sfp28-25g-sr",
        part_number="MMA2P00-AS",
        description="25G SFP28 SR multimode transceiver",
        fabrics=ETHERNET_FABRIC_IDS,
        gbps=25,
        form_factor="sfp28",
        reach_m=100.0,
        power_w=1.0,
        unit_price_usd=40.0,
        source=f"IEEE 802.3by 25GBASE-SR (100 m OM4); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="qsfp28-100g-sr4",
        part_number="MMA1B00-C100D",
        description="100G QSFP28 SR4 multimode transceiver",
        fabrics=FABRIC_IDS,
        gbps=100,
        form_factor="qsfp28",
        reach_m=100.0,
        power_w=3.5,
        unit_price_usd=150.0,
        source=f"IEEE 802.3bm 100GBASE-SR4 (100 m OM4); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="qsfp56-200g-sr4",
        part_number="MMA1T00-HS",
        lane_gbps=50,
        description="200G QSFP56 SR4 multimode transceiver (HDR / 200GbE)",
        fabrics=FABRIC_IDS,
        gbps=200,
        form_factor="qsfp56",
        reach_m=100.0,
        power_w=5.0,
        unit_price_usd=450.0,
        source=f"{_NV} MMA1T00-HS HDR transceiver (200G SR4, 100 m); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-400g-sr4",
        part_number="MMA4Z00-NS400",
        description="400G OSFP SR4 multimode transceiver, single port (NIC end)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="osfp",
        reach_m=50.0,
        power_w=8.0,
        unit_price_usd=900.0,
        end="nic",
        source=f"{_NV} MMA4Z00-NS400 NDR/400GbE transceiver (SR4, 50 m OM4); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-2x400g-sr8",
        part_number="MMA4Z00-NS",
        description="800G twin-port OSFP 2xSR4 multimode transceiver (switch end, 2x400G)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="osfp",
        reach_m=50.0,
        power_w=17.0,
        unit_price_usd=1600.0,
        ports_per_module=2,
        fibers_per_module=2,
        end="switch",
        source=f"{_NV} MMA4Z00-NS twin-port 2x400G SR8 transceiver (50 m); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-2x400g-dr8",
        part_number="MMS4X00-NM",
        description="800G twin-port OSFP 2xDR4 single-mode transceiver (switch end, 2x400G)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="osfp",
        reach_m=500.0,
        media="smf",
        power_w=17.0,
        unit_price_usd=2000.0,
        ports_per_module=2,
        fibers_per_module=2,
        end="switch",
        source=f"{_NV} MMS4X00-NM twin-port 2x400G DR8 transceiver (500 m SMF); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-2x400g-sr8-nic",
        description="800G twin-port OSFP 2 x SR4 multimode transceiver, flat top (NIC end, "
        "2 x 400G)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="osfp",
        reach_m=50.0,
        power_w=16.0,
        unit_price_usd=1600.0,
        ports_per_module=2,
        fibers_per_module=2,
        end="nic",
        source=f"{_NV} LinkX 800G twin-port 2 x 400G SR8 flat-top OSFP for ConnectX-8 / "
        f"BlueField OSFP adapters (50 m OM4); {_PRICE}",
        price_is_estimate=True,
        part_number="MMA4Z00-NS-FLT",
    ),
    Transceiver(
        sku="osfp-400g-dr4",
        part_number="MMS4X00-NS400",
        description="400G OSFP DR4 single-mode transceiver, flat top (100 m)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="osfp",
        reach_m=100.0,
        media="smf",
        power_w=9.0,
        unit_price_usd=1100.0,
        source=f"{_NV} MMS4X00-NS400 product specification (single-port OSFP DR4, 100 m over "
        f"MFP7E30 crossover fiber; pairs with the twin-port switch module) and QM97xx user "
        f"manual (980-9I31N-00NM00, 100 m); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="qsfpdd-400g-dr4",
        part_number="MMS1V00-WM",
        description="400GbE QSFP-DD DR4 single-mode transceiver (500 m, switch end)",
        fabrics=ETHERNET_FABRIC_IDS,
        gbps=400,
        form_factor="qsfp-dd",
        reach_m=500.0,
        media="smf",
        lane_gbps=100,
        power_w=10.0,
        unit_price_usd=1100.0,
        end="switch",
        source=f"{_NV} MMS1V00-WM 400GbE QSFP-DD DR4 (400GAUI-8 electrical, 4 x 100G optical "
        "lanes, 500 m SMF, MPO-12/APC); IEEE 802.3bs 400GBASE-DR4; a QSFP-DD DR4 leaf port meets "
        "a QSFP112 DR4 server port (Juniper AI data-centre JVD, validated optics: "
        "QSFP56-DD-400GBASE-DR4 at the leaf, QSFP-400G-DR4 at the ConnectX-7); price: the OSFP "
        f"400G DR4 estimate; {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="qsfp112-400g-dr4",
        part_number="MMS1X00-NS400",
        description="400G QSFP112 DR4 single-mode transceiver (NIC end)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="qsfp112",
        reach_m=100.0,
        media="smf",
        lane_gbps=100,
        power_w=9.0,
        unit_price_usd=1100.0,
        end="nic",
        source=f"{_NV} MMS1X00-NS400 400G QSFP112 DR4 (4 x 100G lanes, SMF, MPO-12/APC, 100 m "
        "in its ordering description), for BlueField-3 / ConnectX-7 QSFP112 adapters; price: the "
        f"OSFP 400G DR4 estimate; {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-800g-2xdr4",
        description="800G OSFP single-port DR4 single-mode transceiver (4 x 200G lanes, XDR / "
        "800GbE; NIC end)",
        fabrics=FABRIC_IDS,
        gbps=800,
        form_factor="osfp",
        reach_m=500.0,
        media="smf",
        power_w=16.0,
        unit_price_usd=2200.0,
        source=f"{_NV} LinkX 800G single-port OSFP DR4 class (4 x 200G PAM4 lanes, one MPO-12/APC "
        "cord, 500 m SMF: the far end of one port of the switch's twin-port 2 x DR4 module; it "
        "was described as DR8, 8 x 100G lanes, which does not mate with a DR4 port, and billed "
        f"two cords a link until 2026-12-08); no part number: the XDR InfiniBand module is listed "
        f"as MMS4A20 (flat top) and the Ethernet one depends on the switch; {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-800g-sr8",
        description="800G OSFP SR8 multimode transceiver",
        fabrics=FABRIC_IDS,
        gbps=800,
        form_factor="osfp",
        reach_m=50.0,
        power_w=15.0,
        unit_price_usd=1800.0,
        fibers_per_module=2,
        source=f"800G SR8 MSA (50 m OM4); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="qsfp112-400g-sr4",
        part_number="MMA1Z00-NS400",
        description="400G QSFP112 SR4 multimode transceiver (NIC end)",
        fabrics=FABRIC_IDS,
        gbps=400,
        form_factor="qsfp112",
        reach_m=50.0,
        power_w=8.0,
        unit_price_usd=800.0,
        end="nic",
        source=f"{_NV} MMA1Z00-NS400 400G QSFP112 SR4 (50 m OM4, for BlueField-3 / ConnectX-7 "
        f"QSFP112 adapters); {_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-2x800g-dr8",
        part_number="980-9IAH1-00XM00",
        description="1.6T twin-port OSFP 2 x DR4 single-mode transceiver (switch end, 2 x 800G)",
        fabrics=FABRIC_IDS,
        gbps=800,
        form_factor="osfp",
        reach_m=500.0,
        media="smf",
        power_w=25.0,
        unit_price_usd=3600.0,
        ports_per_module=2,
        fibers_per_module=2,
        end="switch",
        source=f"{_NV} LinkX 1.6T twin-port OSFP 2 x 800G DR4 for Quantum-X800 (XDR); part "
        "number: MMS4A00 '1600Gbps 2xDR4 Twin-port OSFP 1310nm SMF up to 500m', ordering part "
        "980-9IAH1-00XM00 for the finned-top (IHS) switch end (980-9IAH0 is the flat-top one), "
        "per public LinkX catalogue snapshots citing networking-docs.nvidia.com/"
        "9iahx00xmosfptcvr1600; NVIDIA's XDR LinkX list (docs.nvidia.com/networking/display/"
        "800g200gpam4list) puts IHS modules in the air-cooled Q3400 / Q3200 only; "
        f"{_PRICE}",
        price_is_estimate=True,
    ),
    Transceiver(
        sku="osfp-800g-sr8-4x200g",
        lane_gbps=100,
        description="800G OSFP SR8 multimode transceiver run as 4 x 200G",
        fabrics=ETHERNET_FABRIC_IDS,
        gbps=200,
        form_factor="osfp",
        reach_m=50.0,
        power_w=15.0,
        unit_price_usd=1800.0,
        ports_per_module=4,
        fibers_per_module=2,
        source=f"800G SR8 MSA module in 4 x 200GbE mode (Spectrum-4 / Gaudi 3 OSFP); {_PRICE}",
        price_is_estimate=True,
    ),
)

CABLES: tuple[Cable, ...] = (
    Cable(
        sku="dac-osfp-2x400g-split",
        part_number="MCP7Y00-N002",
        description="800G twin-port OSFP to 2 x 400G OSFP splitter DAC, 2 m",
        fabrics=FABRIC_IDS,
        kind="dac",
        gbps=400,
        reach_m=2.0,
        form_factor="osfp",
        links=2,
        legs=2,
        power_w=0.0,
        unit_price_usd=500.0,
        source=f"{_NV} LinkX MCP7Y00-N00x twin-port OSFP to 2 x 400G OSFP splitter; {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-osfp-2xqsfp112-split",
        part_number="MCP7Y10-N002",
        description="800G twin-port OSFP to 2 x 400G QSFP112 splitter DAC, 2 m",
        fabrics=FABRIC_IDS,
        kind="dac",
        gbps=400,
        reach_m=2.0,
        form_factor="osfp",
        form_factor_b="qsfp112",
        links=2,
        legs=2,
        power_w=0.0,
        unit_price_usd=550.0,
        source=f"{_NV} LinkX MCP7Y10-Nxxx 800Gb/s twin-port OSFP to 2 x 400G QSFP112 DAC "
        "splitter, 1-3 m (docs.nvidia.com/networking/display/MCP7Y10NXXX800Gpub: Spectrum-4 / "
        "Quantum-2 to BlueField-3 / ConnectX-7 QSFP112; was cited as MCP7Y60, which NVIDIA "
        "lists as the 400Gb/s 2 x 200G OSFP-to-QSFP56 splitter); the 2 m code MCP7Y10-N002 as a "
        f"public LinkX parts list prints it (NVIDIA's -N002 = 2 m in MCP7Y00-Nxxx); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-qsfp28-4xsfp28-3m",
        part_number="MCP7F00-A003",
        description="100G QSFP28 to 4 x 25G SFP28 breakout DAC, 3 m",
        fabrics=ETHERNET_FABRIC_IDS,
        kind="dac",
        gbps=25,
        reach_m=3.0,
        form_factor="qsfp28",
        form_factor_b="sfp28",
        links=4,
        legs=4,
        power_w=0.0,
        unit_price_usd=90.0,
        source=f"{_NV} MCP7F00-A00x QSFP28 to 4 x SFP28 breakout; {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="aoc-qsfp28-4xsfp28-30m",
        part_number="MFA7A50-C030",
        description="100G QSFP28 to 4 x 25G SFP28 breakout AOC, 30 m",
        fabrics=ETHERNET_FABRIC_IDS,
        kind="aoc",
        media="mmf",
        gbps=25,
        reach_m=30.0,
        form_factor="qsfp28",
        form_factor_b="sfp28",
        links=4,
        legs=4,
        power_w=2.0,
        unit_price_usd=300.0,
        source=f"{_NV} MFA7A50-C0xx QSFP28 to 4 x SFP28 breakout AOC family (MFA7A50-C003 seen in "
        f"public module dumps; the -C030 length code is unconfirmed); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-25g-3m",
        part_number="MCP2M00-A003",
        form_factor="sfp28",
        description="25G SFP28 passive copper DAC, 3 m",
        fabrics=ETHERNET_FABRIC_IDS,
        kind="dac",
        gbps=25,
        reach_m=3.0,
        power_w=0.0,
        unit_price_usd=30.0,
        source=f"IEEE 802.3by 25GBASE-CR (up to 5 m); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-100g-3m",
        part_number="MCP1600-C003",
        form_factor="qsfp28",
        description="100G QSFP28 passive copper DAC, 3 m",
        fabrics=FABRIC_IDS,
        kind="dac",
        gbps=100,
        reach_m=3.0,
        power_w=0.0,
        unit_price_usd=90.0,
        source=f"IEEE 802.3bj 100GBASE-CR4 (up to 5 m); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-200g-2m",
        part_number="MCP1650-H002E26",
        form_factor="qsfp56",
        description="200G QSFP56 passive copper DAC, 2 m (HDR / 200GbE)",
        fabrics=FABRIC_IDS,
        kind="dac",
        gbps=200,
        reach_m=2.0,
        power_w=0.0,
        unit_price_usd=160.0,
        source=f"{_NV} MCP1650-H00xE HDR DAC (up to 2 m at 200G); part number: public "
        "mlxcables module dumps of this 2 m HDR / 200GbE DAC print 'Part number: "
        "MCP1650-H002E26' and 'Length: 2 m', and public parts lists give MCP1650-H002E26 as "
        "the 2 m 26AWG member of NVIDIA's MCP1650-H0xxEyy family (product specification "
        f"docs.nvidia.com/networking/display/mcp1650h0xxeyyspec); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-400g-2m",
        form_factor="osfp",
        description="400G OSFP passive copper DAC, 2 m (NDR / 400GbE)",
        fabrics=FABRIC_IDS,
        kind="dac",
        gbps=400,
        reach_m=2.0,
        power_w=0.0,
        unit_price_usd=250.0,
        source=f"{_NV} MCP4Y10 NDR DAC (up to 1.5-2 m at 400G); no part number: MCP4Y10-Nxxx is "
        "the twin-port 2 x 400G OSFP-to-OSFP switch-to-switch DAC, 0.5-2 m (docs.nvidia.com/"
        "networking/display/mcp4y10nxxx2x400pub), not one 400G link, and no single-port 400G "
        f"OSFP passive DAC was found; {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="dac-800g-2m",
        form_factor="osfp",
        description="800G OSFP passive copper DAC, 2 m (XDR / 800GbE)",
        fabrics=FABRIC_IDS,
        kind="dac",
        gbps=800,
        reach_m=2.0,
        power_w=0.0,
        unit_price_usd=450.0,
        source=f"{_NV} LinkX 800G DAC (up to 2 m); no part number: NVIDIA's XDR LinkX list "
        "offers no passive DAC at 200G-PAM4, 'too short' (docs.nvidia.com/networking/display/"
        f"800g200gpam4list), and no single-link 800GbE OSFP DAC part was found; {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="aoc-100g-30m",
        part_number="MFA1A00-C030",
        form_factor="qsfp28",
        description="100G QSFP28 active optical cable, 30 m",
        fabrics=FABRIC_IDS,
        kind="aoc",
        media="mmf",
        gbps=100,
        reach_m=30.0,
        power_w=4.0,
        unit_price_usd=350.0,
        source=f"{_NV} MFA1A00-C0xx 100G AOC family (up to 100 m; MFA1A00-C010 seen in public "
        f"parts lists; the -C030 length code is unconfirmed); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="aoc-200g-30m",
        part_number="MFS1S00-H030V",
        form_factor="qsfp56",
        description="200G QSFP56 active optical cable, 30 m (HDR / 200GbE)",
        fabrics=FABRIC_IDS,
        kind="aoc",
        media="mmf",
        gbps=200,
        reach_m=30.0,
        power_w=5.0,
        unit_price_usd=750.0,
        source=f"{_NV} MFS1S00-H030V HDR AOC (up to 100 m); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="aoc-25g-30m",
        part_number="MFA2P10-A030",
        form_factor="sfp28",
        description="25G SFP28 active optical cable, 30 m",
        fabrics=ETHERNET_FABRIC_IDS,
        kind="aoc",
        media="mmf",
        gbps=25,
        reach_m=30.0,
        power_w=1.0,
        unit_price_usd=90.0,
        source=f"{_NV} MFA2P10-A0xx 25G AOC family (MFA2P10-A005 seen in public configs; the -A030 "
        f"length code is unconfirmed); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="fiber-mpo-mmf",
        part_number="MFP7E10-N050",
        description="MPO-12 multimode (OM4) fiber patch cord, up to 50 m",
        fabrics=FABRIC_IDS,
        kind="fiber",
        gbps=0,
        reach_m=50.0,
        media="mmf",
        power_w=0.0,
        unit_price_usd=70.0,
        source=f"{_NV} MFP7E10 MPO-12 OM4 fiber cord; {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="fiber-mpo-smf",
        part_number="MFP7E30-N150",
        description="MPO-12/APC single-mode fiber patch cord, up to 150 m",
        fabrics=FABRIC_IDS,
        kind="fiber",
        gbps=0,
        reach_m=150.0,
        media="smf",
        power_w=0.0,
        unit_price_usd=90.0,
        source=f"{_NV} MFP7E30 MPO-12/APC single-mode crossover fiber family (named by the "
        f"MMS4X00-NS400 product specification; the -N150 length code is unconfirmed); {_PRICE}",
        price_is_estimate=True,
    ),
    Cable(
        sku="cat6-3m",
        form_factor="rj45",
        description="Cat6 copper patch cable (1GbE management)",
        fabrics=(ETHERNET,),
        kind="dac",
        gbps=1,
        reach_m=100.0,
        power_w=0.0,
        unit_price_usd=8.0,
        source=f"TIA-568 Cat6 (1000BASE-T, 100 m); {_PRICE}",
        price_is_estimate=True,
    ),
)
