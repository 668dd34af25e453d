"""The neutral trace: what each call of a run said, whatever the provider's wire format."""
