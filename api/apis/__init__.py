"""API classes: one per operation, each with nested InputSerializer / OutputSerializer."""
