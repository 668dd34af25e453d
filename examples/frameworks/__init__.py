"""Agent frameworks on the harness loop contract, and their compatibility report.

One adapter module per framework (``*_agent.py``), each defining ``FRAMEWORK`` (see
``base.py``) and loop functions for its configurations: ``defaults`` (the framework as its
quick start builds it, wired to the endpoint, step limit from the round budget),
``conforming`` (the best its public settings allow) and, where settings cannot get there,
``wrapped`` (a short wrapper that adds the loop rules' closing call).

Run one adapter like any loop::

    harness run --source scripted --loop examples.frameworks.pydantic_ai_agent:defaults \\
        --provider anthropic --stream off scenarios/one_tool_then_answer.yaml

Regenerate the report in docs/frameworks/::

    python -m examples.frameworks.report

The frameworks are the optional extra ``harness[frameworks]``.
"""
