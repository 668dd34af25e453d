"""vcrpy cassettes: reading any project's cassettes, writing and replaying ours."""
