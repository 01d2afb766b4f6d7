"""The engine's result for people: words and tables (presenters), Plotly figures (charts) and
the quote-ready PDF (pdf).

Pure Python over the typed result (advisor.engine.result.records): no Django, so the web pages, the
API and the workers all present a result the same way (import-linter keeps it so)."""
