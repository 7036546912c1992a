"""carecall paper package (see README.md)."""
