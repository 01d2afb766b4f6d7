"""The performance model: collectives, compute efficiency, placement, topology, memory, the
workload planner, the stage and step times, serving, and the design metrics they give."""
