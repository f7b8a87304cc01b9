"""egress."""
