"""Engine drivers: one module per provider, each an admission record plus two pure functions."""
