"""Scenario files: format (schema.json), typed values (model), loading (loader)."""

from harness.scenario.loader import load_scenario
from harness.scenario.model import Scenario

__all__ = ["Scenario", "load_scenario"]
