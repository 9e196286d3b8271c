"""Example programs built on the generated package (not part of the generator)."""
