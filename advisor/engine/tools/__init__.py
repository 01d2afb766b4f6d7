"""Tools around the engine: validation against published measurements, the audit, the sweep and
the command line."""
