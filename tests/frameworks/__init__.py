"""The agent-framework adapters (examples/frameworks) and their compatibility report."""
