"""Agent frameworks on the harness loop contract (placeholder; fwcore's version replaces it)."""
