"""Sensitivity sweeps: axes (what a person may ask for), services (writes, the chunks' work)
and selectors (reads). The grid itself is the engine's (advisor.engine.tools.sweep)."""
