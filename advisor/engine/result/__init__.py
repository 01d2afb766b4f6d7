"""The engine's answer as typed records (:class:`records.EngineResult`)."""
