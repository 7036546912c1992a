"""lufy paper package (see README.md)."""
