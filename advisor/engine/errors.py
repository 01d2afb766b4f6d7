"""The one error the engine raises for bad input."""

from __future__ import annotations


class ScenarioError(ValueError):
    """Bad scenario input.

    ``field_errors`` maps dotted field paths (``"gpus"``, ``"model.hidden"``,
    ``"parallelism.tp"``) to messages that name the broken rule.
    """

    def __init__(self, field_errors: dict[str, list[str]]) -> None:
        self.field_errors: dict[str, list[str]] = {k: list(v) for k, v in field_errors.items()}
        super().__init__(
            "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in self.field_errors.items())
        )

    @classmethod
    def single(cls, field: str, message: str) -> ScenarioError:
        """An error about one field."""
        return cls({field: [message]})
