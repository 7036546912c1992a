"""Memory methods: ``base.MemoryMethod`` and one module per method (``conf/memory/`` lists them)."""
