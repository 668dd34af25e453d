"""Example loops written against the loop contract (see README, "The loop contract")."""
