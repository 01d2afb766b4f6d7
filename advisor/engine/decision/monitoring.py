"""What to watch in production, per fabric class: network faults look like slow training,
not errors, so the checklist pairs link counters with NCCL collective time per job."""

from __future__ import annotations

from advisor.engine.facts.catalog.network import ETHERNET, INFINIBAND, ROCE

MONITORING_COMMON: tuple[str, ...] = (
    "NCCL collective time against step time per job: a rising communication share is the "
    "first sign of a network problem (faults look like slow training, not errors)",
    "Per-node step-time outliers: one slow node, NIC or link stalls every synchronous step",
    "Per-link throughput and utilisation on every NIC and switch port, correlated with jobs",
    "Symbol errors, CRC/FCS errors and pre-FEC bit error rate per link (rising counts "
    "precede failures)",
    "Link flaps and link-down events, with the job running at the time",
    "Optical module temperature and receive power (DDM) for every transceiver",
    "nccl-tests all_reduce_perf bus bandwidth at 2 servers, one leaf and the whole job after "
    "every change, against the expected figures",
)
MONITORING_BY_FABRIC: dict[str, tuple[str, ...]] = {
    ROCE: (
        "PFC pause frames sent and received per port and priority (pause storms spread "
        "congestion backwards); PFC watchdog events",
        "ECN-marked packets and CNPs per queue: DCQCN congestion-control activity",
        "RDMA retransmissions, out-of-sequence and NAK counters, QP timeouts on the NICs",
        "Drops on the lossless traffic class (must stay at zero) and buffer occupancy",
        "Load spread across leaf uplinks (ECMP hash collisions, or adaptive routing health)",
    ),
    INFINIBAND: (
        "IB port counters via UFM / ibdiagnet: SymbolErrorCounter, LinkErrorRecoveryCounter, "
        "LinkDownedCounter, PortRcvErrors",
        "PortXmitWait and congestion counters per port (credit starvation, hot spots)",
        "Subnet manager health, failover and routing re-sweeps (OpenSM / UFM)",
        "SHARP aggregation manager status and SHARP usage by jobs",
        "Adaptive-routing activity and counter balance across spines",
    ),
    ETHERNET: (
        "TCP retransmissions and retransmission timeouts per host",
        "Switch interface drops and buffer discards (microbursts)",
        "Host CPU time in softirq / network stack (TCP copies compete with data loading)",
        "Achieved NCCL socket bandwidth against wire speed (40-60 % is normal for TCP)",
    ),
}
MONITORING_NORTH_SOUTH: tuple[str, ...] = (
    "Storage network throughput during checkpoints and data loading; checkpoint time "
    "against step time",
    "Management network: BMC reachability, switch management-port health",
)


def monitoring(fabric: str, compute_fabric: bool) -> list[str]:
    items: list[str] = []
    if compute_fabric:
        items.extend(MONITORING_COMMON)
        items.extend(MONITORING_BY_FABRIC.get(fabric, ()))
    else:
        items.extend(
            (
                "Per-link throughput and errors on the front-end/storage ports",
                "GPU utilisation: with no compute fabric, low utilisation points at data "
                "loading or storage, not the network between GPUs",
            )
        )
    items.extend(MONITORING_NORTH_SOUTH)
    return items
