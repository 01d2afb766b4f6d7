"""The customer's calibration: nccl-tests parsing, the fabric fit and acceptance checks, and the
published calibration data."""
