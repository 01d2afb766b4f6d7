"""What the customer asks: the scenario parsed, checked and completed with defaults."""
