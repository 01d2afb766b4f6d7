"""The decision: candidate fabrics priced and ranked, the bill of materials, the cost model and
the recommendation with its prose."""
