"""Deliberately faulty loops on the loop contract, each the reference loop with one thing done
wrong: `pairing` (results and ids), `tools` (running tools), `limit` (budget, closing call,
closing answer), `context` (selection, Gemini trimming), `state` (OpenAI statelessness,
reasoning, thinking and signatures), `turns` (resending a turn), `gemini_afc` (the SDK's
automatic function calling, several candidates). `variants` says how a fault is made;
`test_faulty_loops` runs each where it applies and names the rule that must catch it."""
