"""Facts the engine reasons from: the hardware and model catalog, the constants with their
public sources, the shared vocabulary, the input limits and number formatting."""
