"""The words for the engine's ids: one label per fabric, topology kind, network role and unit.

The engine's prose and every page of the shell (results, comparison, sweeps, the PDF, the CSV
and the API's descriptions) name things through this module, so each thing is said one way:
"RoCE v2", never "Roce V2" or "roce".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from advisor.engine.facts.numbers import finite

# ---------------------------------------------------------------------------------------------
# Fabrics: the transport of the GPU compute network

ETHERNET: Final = "ethernet"
ROCE: Final = "roce"
INFINIBAND: Final = "infiniband"
FABRIC_IDS: tuple[str, ...] = (ETHERNET, ROCE, INFINIBAND)
"""Every fabric the engine prices, in the order pages list them (plainest first)."""
ETHERNET_FABRIC_IDS: tuple[str, ...] = (ETHERNET, ROCE)
"""The fabrics that run on Ethernet switches and NICs."""

FABRIC_LABELS: dict[str, str] = {
    ETHERNET: "Ethernet (TCP)",
    ROCE: "RoCE v2",
    INFINIBAND: "InfiniBand",
}


FABRIC_CHOICES: tuple[tuple[str, str], ...] = tuple(FABRIC_LABELS.items())
"""(id, label) pairs for forms and the API's enums (the API documents each id with its label)."""


def fabric_label(fabric: str) -> str:
    """The label of a fabric id ("roce" -> "RoCE v2"); an unknown id as it is, "?" if empty."""
    return FABRIC_LABELS.get(fabric, fabric or "?")


SCALE_UP_LABELS: dict[str, str] = {
    "nvlink": "NVLink",
    "nvlink-mesh": "NVLink",
    "xgmi": "Infinity Fabric",
    "roce-mesh": "on-die RoCE links",
    "pcie": "PCIe",
}
"""What a customer calls a server's GPU-to-GPU links, by the catalog's ``scaleup_kind``
(NVIDIA NVLink and NVSwitch; AMD Infinity Fabric, xGMI; Intel Gaudi 3's integrated 200GbE RoCE
ports, 21 of 24 wired all-to-all inside the server; PCIe for cards without a bridge)."""


def scale_up_label(kind: str) -> str:
    """The label of a scale-up kind ("xgmi" -> "Infinity Fabric"); an unknown kind as
    "scale-up links"."""
    return SCALE_UP_LABELS.get(kind, "scale-up links")


def scale_up_domain(domain_gpus: int, gpus_per_server: int) -> str:
    """What a customer calls one scale-up domain: "server" where the server is the domain, or
    "72-GPU NVLink domain" for a rack whose trays share one NVLink fabric (GB200 / GB300 NVL72:
    only NVIDIA's racks join GPUs beyond a server)."""
    if domain_gpus <= gpus_per_server:
        return "server"
    return f"{domain_gpus}-GPU NVLink domain"


# ---------------------------------------------------------------------------------------------
# Topologies: the engine's `topology.kind` and its number of switch tiers

SINGLE_SWITCH: Final = "single-switch"
LEAF_SPINE: Final = "leaf-spine"
FAT_TREE: Final = "fat-tree"
SUPER_SPINE: Final = "super-spine"
TOPOLOGY_KIND_BY_TIERS: dict[int, str] = {
    1: SINGLE_SWITCH,
    2: LEAF_SPINE,
    3: FAT_TREE,
    4: SUPER_SPINE,
}
EXISTING: Final = "existing"
"""No switch of ours: the servers plug into the data centre's existing network."""
TOPOLOGY_KIND_LABELS: dict[str, str] = {
    EXISTING: "your existing network",
    SINGLE_SWITCH: "single switch",
    LEAF_SPINE: "leaf-spine",
    FAT_TREE: "fat tree",
    SUPER_SPINE: "super-spine",
}
_TIERS_IN_WORDS = {2: "leaf-spine", 3: "three-tier fat tree"}


def topology_label(topology: Mapping[str, Any]) -> str:
    """A result's topology on a page: "single switch", "2-tier leaf-spine", "3-tier fat tree"."""
    kind = str(topology.get("kind") or "").replace("_", "-")
    if kind == EXISTING:
        return TOPOLOGY_KIND_LABELS[EXISTING]
    tiers = int(finite(topology.get("tiers")))
    if kind in (SINGLE_SWITCH, "single") or (tiers == 1 and not topology.get("spine_switches")):
        return TOPOLOGY_KIND_LABELS[SINGLE_SWITCH]
    words = TOPOLOGY_KIND_LABELS.get(kind, kind)
    return f"{tiers}-tier {words}" if tiers else words


def tiers_in_words(tiers: int) -> str:
    """A fabric of `tiers` switch tiers in a sentence: "leaf-spine", "three-tier fat tree",
    "4-tier fabric" ("single switch" for one)."""
    if tiers <= 1:
        return TOPOLOGY_KIND_LABELS[SINGLE_SWITCH]
    return _TIERS_IN_WORDS.get(tiers, f"{tiers}-tier fabric")


# ---------------------------------------------------------------------------------------------
# Networks: the role of a BOM line's network

COMPUTE: Final = "compute"
STORAGE: Final = "storage"
MANAGEMENT: Final = "management"
FRONTEND: Final = "frontend"
RETRIEVAL: Final = "retrieval"
NETWORK_LABELS: dict[str, str] = {
    COMPUTE: "GPU compute fabric",
    STORAGE: "Storage network",
    RETRIEVAL: "Retrieval-tier network (RAG)",
    MANAGEMENT: "Management network",
    FRONTEND: "Front-end network",
}

# ---------------------------------------------------------------------------------------------
# Retrieval pipelines (RAG): the tiers of a pipeline

EMBEDDING_TIER: Final = "embedding"
VECTOR_SEARCH_TIER: Final = "vector_search"
GENERATION_TIER: Final = "generation"
RAG_TIER_LABELS: dict[str, str] = {
    EMBEDDING_TIER: "embedding tier",
    VECTOR_SEARCH_TIER: "vector-search tier",
    GENERATION_TIER: "generation tier",
}


def network_label(network: str) -> str:
    """The label of a network role ("storage" -> "Storage network"); an unknown role in words
    ("out_of_band" -> "Out of band")."""
    return NETWORK_LABELS.get(network, network.replace("_", " ").capitalize())


# ---------------------------------------------------------------------------------------------
# BOM roles: what a bill-of-materials line is for (advisor.engine.decision.bom, ``BomLine.role``)

BOM_ROLE_LABELS: dict[str, str] = {
    "compute-nic": "GPU fabric adapter",
    "leaf": "Leaf switch",
    "spine": "Spine switch",
    "core": "Core switch",
    "superspine": "Super-spine switch",
    "server-link": "Server link",
    "switch-link": "Switch-to-switch link",
    "storage-nic": "Storage / in-band adapter",
    "storage-switch": "Storage / in-band leaf",
    "target-link": "Storage target link",
    "core-uplink": "Uplink to the data-centre core",
    "oob-switch": "Out-of-band management switch",
    "aggregation": "Management aggregation switch",
    "mgmt-link": "Management link",
    "mgmt-uplink": "Management uplink",
    "rag-nic": "Retrieval-tier adapter (embedding / vector search)",
    "rag-switch": "Retrieval-tier leaf",
}


BOM_CATEGORY_LABELS: dict[str, str] = {
    "nic": "Network adapter",
    "switch": "Switch",
    "transceiver": "Transceiver",
    "cable": "Cable",
}


def bom_category_label(category: str) -> str:
    """A BOM line's kind of part ("nic" -> "Network adapter"); an unknown one in words."""
    return BOM_CATEGORY_LABELS.get(category, category.replace("_", " ").capitalize())


def bom_role_label(role: str) -> str:
    """What a BOM line is for, in words ("leaf" -> "Leaf switch"); an unknown role in words
    ("front-end-link" -> "Front end link"), "" for none."""
    return BOM_ROLE_LABELS.get(role, role.replace("-", " ").replace("_", " ").capitalize())


# ---------------------------------------------------------------------------------------------
# Team skills (constraints.team_skills): what the customer's team already runs


@dataclass(frozen=True)
class TeamSkill:
    """The words for one team-skill id, in each form the product says it."""

    answer: str
    """The questionnaire's choice."""
    hint: str
    """The questionnaire's line under the choice."""
    knows: str
    """A table cell beside "Team": "knows Ethernet"."""
    team: str
    """In a sentence: "ramp-up and risk for an Ethernet-only team"."""


TEAM_SKILLS: dict[str, TeamSkill] = {
    "ethernet": TeamSkill(
        "Ethernet", "Routers, switches, VLANs", "knows Ethernet", "an Ethernet-only team"
    ),
    "infiniband": TeamSkill(
        "InfiniBand",
        "HPC fabrics, subnet managers",
        "knows InfiniBand",
        "an InfiniBand-only team",
    ),
    "both": TeamSkill(
        "Both", "Ethernet and InfiniBand", "knows Ethernet and InfiniBand", "a team that runs both"
    ),
    "none": TeamSkill(
        "Nobody yet",
        "We will hire or outsource",
        "new to high-speed networks",
        "a team without RDMA experience",
    ),
}
"""Every team-skill id the engine accepts, in the order the questionnaire offers them."""


# ---------------------------------------------------------------------------------------------
# Units the pages and the prose append to numbers

GBPS: Final = "Gb/s"
"""Link speed, bits (NIC and switch ports)."""
GBYTES_PER_S: Final = "GB/s"
"""Data rate, bytes (collective bus bandwidth)."""
MS_PER_TOKEN: Final = "ms/token"  # noqa: S105 (a unit, not a secret)
S_PER_STEP: Final = "s/step"
