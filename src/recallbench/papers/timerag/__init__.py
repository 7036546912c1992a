"""TimeRAG-Memory (Sun, Lu and Chen 2023): its reference numbers and paper-only code."""
