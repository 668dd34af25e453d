"""What `harness init` writes into a project (`harness.commands.init`): a `[tool.harness]`
block, two starter scenarios, a loop stub on the contract (`agent.py`, importable here as
`harness.scaffold.agent`, so the harness's own tests run it) and a GitHub Actions workflow.
"""

from pathlib import Path

FOLDER = Path(__file__).parent
