"""theanine paper package (see README.md)."""
