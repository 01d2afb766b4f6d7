"""Serving: the pool plans, the decode and prefill compute, the load model, the choice of the
serving deployment and the published-results predictions."""
