"""locomo paper package: LoCoMo QA's reference entries (see README.md)."""
