"""Customer measurements (nccl-tests, rccl-tests, perftest) and the fits made from them."""
