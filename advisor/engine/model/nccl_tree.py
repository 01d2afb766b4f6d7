"""The bytes NCCL's double binary tree puts on a domain's NICs, as sent and as NCCL's tuner
prices them (docs/MODEL.md section 3, "The tree's network bytes").

NCCL's tree all-reduce runs two binary trees over the nodes (``src/graph/trees.cc``
``ncclGetBtree`` / ``ncclGetDtree``: the root has one child; the second tree mirrors the first
for an even count of nodes and shifts it by one for an odd count), each carrying half the data.
A node sends half the message to its parent and to each child in each tree (reduce up, broadcast
down; the same received), so the busiest node sends ``f(N) x S`` per direction: ``f(2) = 1``
(each node is the root of one tree and the only child in the other), ``f(3) = 1.5`` and
``f(N) = 2`` from four nodes on (every N from 2 to 40 computed from ``trees.cc``), against the
ring's ``2 (n - 1) / n``.

NCCL's tuner (``src/graph/tuning.cc``, v2.16.2-1 ... v2.30.7-1) prices the tree on two nodes
at the search graph's ``bwIntra`` (``nNodes <= 2 || collnet ? bwIntra : bwInter``), which the
topology search raises up to twice ``bwInter`` for trees (``src/graph/search.cc``: "increase
bwIntra for trees (2 nodes or collnet)", also v2.12.12-1): ``f(2) = 1`` in effect; beyond two
nodes it prices ``bwInter``, the ring's rate, ``f = 2`` also on three nodes.  So NCCL chooses
as if a three-node tree moved 2 S per node while it moves 1.5 S: the engine chooses the tree's
protocol and the all-reduce's algorithm by the tuner's figure and pays the bytes sent.
"""

from __future__ import annotations

TREE_FULL_BYTES_FACTOR = 2.0
"""Bytes per node and direction of the double binary tree from four nodes on, in units of S:
the ring's ``2 (n - 1) / n`` bound for large n, which the engine's ring bus bandwidth prices."""


def tree_network_bytes_factor(nodes: int) -> float:
    """``f(N)``: bytes the busiest node of NCCL's double binary tree sends (and receives) per
    direction over the network, in units of the message ``S`` (``trees.cc``): 1 on two nodes,
    1.5 on three, 2 from four on (0 on one node: no network)."""
    if nodes <= 1:
        return 0.0
    if nodes == 2:
        return 1.0
    if nodes == 3:
        return 1.5
    return TREE_FULL_BYTES_FACTOR


def tuner_tree_network_bytes_factor(nodes: int) -> float:
    """The same bytes as NCCL's tuner prices them: the two-node tree at ``bwIntra`` raised up to
    twice ``bwInter`` (``f = 1``), every larger tree at ``bwInter`` (``f = 2``, three nodes
    included, where the tree sends 1.5 S)."""
    if nodes <= 1:
        return 0.0
    return 1.0 if nodes == 2 else TREE_FULL_BYTES_FACTOR


def tree_network_scale(nodes: int, *, tuner: bool = False) -> float:
    """Factor on the domain's network bus bandwidth the tree reaches: ``2 / f(N)`` (the ring's
    bound moves 2 S per node; the tree moves ``f(N) S``); 1 on one node."""
    f = tuner_tree_network_bytes_factor(nodes) if tuner else tree_network_bytes_factor(nodes)
    return TREE_FULL_BYTES_FACTOR / f if f > 0.0 else 1.0
