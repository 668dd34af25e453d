#!/usr/bin/env node
// A deliberately broken variant of agent.mjs, to show that harness catches it: at the round
// budget it neither answers the pending requests "Not executed: …" nor makes the closing call;
// it leaves the loop and hands back the last interim text ("Let me check …") as the answer —
// the article's OpenAI/Anthropic failure. Expected findings on the limit scenarios:
// L11, L12, L14, L15 (see tests/exec/test_node_example.py).
//
//   harness run --exec 'node examples/node/broken_agent.mjs' --source scripted   # exit 1

import { main } from "./agent.mjs";

main({ skipClosing: true }).catch((error) => {
  console.error(error?.stack ?? String(error));
  process.exit(1);
});
