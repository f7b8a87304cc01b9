"""Configuration: the limits table, the validated settings schema, loading and secret references."""
