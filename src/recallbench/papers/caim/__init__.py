"""caim paper package (see README.md)."""
