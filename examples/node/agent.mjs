#!/usr/bin/env node
// A small Node agent on the three official JS SDKs (@anthropic-ai/sdk, openai's Responses API,
// @google/genai), written against harness's language-neutral loop contract (harness.loop/1):
// one query as JSON on stdin, one result as JSON on stdout.
//
//   harness run --exec 'node examples/node/agent.mjs'                    # the cassettes
//   harness run --exec 'node examples/node/agent.mjs' --source scripted  # the emulator
//
// What it does, per user message: sends the last 20 saved messages as text plus the new
// message, streams when the query says so, runs the tools the model asks for one at a time
// through the harness's tool endpoint (POST {tools_url}{name}), and at the round budget answers
// every pending request "Not executed: …" without running it and makes one text-only closing
// call (tools still declared, tool choice "none" in each provider's spelling, the step-limit
// order added to the system instructions). OpenAI runs with store: false and encrypted
// reasoning resent within the query; Gemini with no automatic function calling, each model
// Content sent back unchanged (thought signatures), and its oldest saved exchanges dropped when
// a request would be over request_size_limit (L9). A provider error is reported in "error",
// never shown as the answer.

import { pathToFileURL } from "node:url";

// Each SDK is imported only when its provider is asked for (a query starts a fresh process).

export const NOT_EXECUTED = "Not executed: the step limit for this answer was reached.";
export const LIMIT =
  "You have reached the step limit for this answer, so no more tools can be run now. " +
  "Answer with what you already know, explain the step limit, say what was left undone, " +
  "and ask whether to continue. A tool request whose result says it was not executed did " +
  "not happen: never say that it did.";
const CONTEXT_WINDOW = 20; // saved messages resent per query (L7)

// ---------------------------------------------------------------- the query and the result

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** The text of the last 20 saved messages, starting at a user message (tool chains go back
 * as their text: a saved tool call keeps its assistant text, its results are left out). */
function historyText(history) {
  const out = history
    .slice(-CONTEXT_WINDOW)
    .filter((m) => m.role !== "tool" && m.text)
    .map((m) => ({ role: m.role, text: m.text }));
  while (out.length && out[0].role !== "user") out.shift();
  return out;
}

/** A Session holds one query: the tools, the steps taken, and how the answer is saved. */
class Session {
  constructor(query) {
    this.query = query;
    this.steps = [];
    this.toolsUrl = query.tools_url || process.env.HARNESS_TOOLS_URL;
    this.declared = new Set(query.tools.map((t) => t.name));
  }

  /** Run one tool through the harness's endpoint: [text, failed]. */
  async runTool(name, args) {
    if (!this.declared.has(name)) return [`Unknown tool: ${name}`, true];
    const response = await fetch(this.toolsUrl + encodeURIComponent(name), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(args ?? {}),
    });
    const body = await response.json();
    if (!response.ok) throw new Error(`tool endpoint answered ${response.status}`);
    if (typeof body.error === "string") return [body.error, true];
    return [String(body.result ?? ""), false];
  }

  /** Each request's result, in order, one at a time; past the budget none runs (L11). */
  async results(number, requests) {
    const out = [];
    for (const { name, args } of requests) {
      if (number === this.query.max_rounds) out.push([NOT_EXECUTED, true]);
      else out.push(await this.runTool(name, args));
    }
    return out;
  }

  /** Save the turn that asked for tools and each of its results. */
  record(text, requests, results) {
    this.steps.push({
      role: "assistant",
      text,
      tool_calls: requests.map(({ id, name, args }) => ({ id, name, arguments: args ?? {} })),
    });
    requests.forEach(({ id, name }, i) => {
      const [content, isError] = results[i];
      this.steps.push({ role: "tool", call_id: id, name, content, is_error: isError });
    });
  }

  finish(answer) {
    if (!answer.trim()) return this.fail(new Error("the model returned an empty reply"));
    const { history, message } = this.query;
    const chat = [...history, { role: "user", text: message }, ...this.steps];
    return { answer, chat: [...chat, { role: "assistant", text: answer, tool_calls: [] }], error: null };
  }

  fail(error) {
    const { history, message } = this.query;
    const name = error?.constructor?.name ?? "Error";
    const status = error?.status ? ` ${error.status}` : "";
    return {
      answer: "",
      chat: [...history, { role: "user", text: message }],
      error: `${name}${status}: ${error?.message ?? String(error)}`,
    };
  }

  system(closing) {
    const system = this.query.system ?? "";
    if (!closing) return system;
    return system.trim() ? `${system.trimEnd()}\n\n${LIMIT}` : LIMIT; // the order (L13)
  }
}

/** Drop null and undefined fields (the SDKs' objects carry some the APIs do not take back). */
function clean(value) {
  if (Array.isArray(value)) return value.map(clean);
  if (value && typeof value === "object") {
    const out = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = clean(v);
    return out;
  }
  return value;
}

// ---------------------------------------------------------------- Anthropic (Messages API)

async function anthropic(session, options) {
  const q = session.query;
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const client = new Anthropic({
    baseURL: q.base_url || process.env.ANTHROPIC_BASE_URL,
    apiKey: q.api_key || process.env.ANTHROPIC_API_KEY,
  });
  const tools = q.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: t.parameters,
  }));
  const messages = historyText(q.history).map((m) => ({ role: m.role, content: m.text }));
  messages.push({ role: "user", content: q.message });
  let lastText = "";
  for (let number = 0; number <= q.max_rounds + 1; number++) {
    const closing = number === q.max_rounds + 1;
    const request = {
      model: q.model,
      max_tokens: 4096,
      tools,
      messages,
      ...(session.system(closing) ? { system: session.system(closing) } : {}),
      ...(closing ? { tool_choice: { type: "none" } } : {}), // else the default, auto
    };
    const reply = q.stream
      ? await client.messages.stream(request).finalMessage()
      : await client.messages.create(request);
    const text = reply.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    const requests = reply.content
      .filter((b) => b.type === "tool_use")
      .map((b) => ({ id: b.id, name: b.name, args: b.input }));
    if (closing || !requests.length) return session.finish(text);
    if (options.skipClosing && number === q.max_rounds) return session.finish(lastText || text);
    lastText = text;
    const results = await session.results(number, requests);
    session.record(text, requests, results);
    messages.push(
      { role: "assistant", content: clean(reply.content) }, // as it came (thinking signatures)
      {
        role: "user",
        content: requests.map(({ id }, i) => ({
          type: "tool_result",
          tool_use_id: id,
          content: results[i][0],
          ...(results[i][1] ? { is_error: true } : {}),
        })),
      },
    );
  }
  throw new Error("unreachable");
}

// ---------------------------------------------------------------- OpenAI (Responses API)

function outputText(response) {
  return response.output
    .filter((o) => o.type === "message")
    .flatMap((o) => o.content ?? [])
    .filter((c) => c.type === "output_text")
    .map((c) => c.text)
    .join("");
}

async function openai(session, options) {
  const q = session.query;
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({
    baseURL: q.base_url || process.env.OPENAI_BASE_URL,
    apiKey: q.api_key || process.env.OPENAI_API_KEY,
  });
  const tools = q.tools.map((t) => ({
    type: "function",
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    strict: false,
  }));
  const input = historyText(q.history).map((m) => ({ role: m.role, content: m.text }));
  input.push({ role: "user", content: q.message });
  let lastText = "";
  for (let number = 0; number <= q.max_rounds + 1; number++) {
    const closing = number === q.max_rounds + 1;
    const request = {
      model: q.model,
      input,
      tools,
      store: false, // L10: no state at OpenAI; reasoning comes back encrypted
      include: ["reasoning.encrypted_content"],
      ...(session.system(closing) ? { instructions: session.system(closing) } : {}),
      ...(closing ? { tool_choice: "none" } : {}), // else the default, auto
    };
    const reply = q.stream
      ? await client.responses.stream(request).finalResponse()
      : await client.responses.create(request);
    const text = outputText(reply);
    const found = reply.output.filter((o) => o.type === "function_call");
    if (closing || !found.length) return session.finish(text);
    if (options.skipClosing && number === q.max_rounds) return session.finish(lastText || text);
    lastText = text;
    const requests = found.map((c) => ({ id: c.call_id, name: c.name, args: JSON.parse(c.arguments || "{}") }));
    const results = await session.results(number, requests);
    session.record(text, requests, results);
    input.push(...clean(reply.output)); // reasoning items resent verbatim, in place
    requests.forEach(({ id }, i) =>
      input.push({ type: "function_call_output", call_id: id, output: results[i][0] }),
    );
  }
  throw new Error("unreachable");
}

// ---------------------------------------------------------------- Gemini

async function gemini(session, options) {
  const q = session.query;
  const { GoogleGenAI } = await import("@google/genai");
  const client = new GoogleGenAI({
    apiKey: q.api_key || process.env.GEMINI_API_KEY || process.env.GOOGLE_API_KEY,
    httpOptions: {
      baseUrl: q.base_url || process.env.GOOGLE_GEMINI_BASE_URL,
      // The JS SDK retries only when asked: the same two retries as the other SDKs.
      retryOptions: { attempts: 3, initialDelay: 0.5, maxDelay: 4 },
    },
  });
  const declarations = q.tools.map((t) => ({
    name: t.name,
    description: t.description,
    parametersJsonSchema: t.parameters,
  }));
  const history = historyText(q.history).map((m) => ({
    role: m.role === "assistant" ? "model" : "user",
    parts: [{ text: m.text }],
  }));
  const active = [{ role: "user", parts: [{ text: q.message }] }];
  let lastText = "";
  for (let number = 0; number <= q.max_rounds + 1; number++) {
    const closing = number === q.max_rounds + 1;
    // No automatic function calling: plain declarations (no CallableTool), and it is off.
    const config = {
      ...(session.system(closing) ? { systemInstruction: session.system(closing) } : {}),
      tools: [{ functionDeclarations: declarations }],
      ...(closing ? { toolConfig: { functionCallingConfig: { mode: "NONE" } } } : {}),
      automaticFunctionCalling: { disable: true },
    };
    const contents = fit(history, active, config, q.request_size_limit);
    const content = await generate(client, q, contents, config);
    const parts = content.parts ?? [];
    const calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall);
    const text = parts.filter((p) => !p.thought && typeof p.text === "string").map((p) => p.text).join("");
    if (closing || !calls.length) return session.finish(text);
    if (options.skipClosing && number === q.max_rounds) return session.finish(lastText || text);
    lastText = text;
    active.push(content); // unchanged: thought signatures travel back as they came
    const requests = calls.map((fc, i) => ({
      id: fc.id || `local-${number}-${i}`,
      name: fc.name ?? "",
      args: fc.args ?? {},
    }));
    const results = await session.results(number, requests);
    session.record(text, requests, results);
    active.push({
      role: "user",
      parts: calls.map((fc, i) => ({
        functionResponse: {
          ...(fc.id ? { id: fc.id } : {}),
          name: requests[i].name,
          response: { [results[i][1] ? "error" : "output"]: results[i][0] },
        },
      })),
    });
  }
  throw new Error("unreachable");
}

/** One model Content: the whole reply, or every part of a stream in order (adjacent plain
 * text parts joined; a part with a thought signature, even on empty text, kept as it came). */
async function generate(client, q, contents, config) {
  const request = { model: q.model, contents, config };
  const replies = q.stream
    ? await collect(await client.models.generateContentStream(request))
    : [await client.models.generateContent(request)];
  const parts = [];
  let role = "model";
  for (const reply of replies) {
    const content = reply.candidates?.[0]?.content;
    if (!content) continue;
    role = content.role ?? role;
    for (const part of content.parts ?? []) {
      const last = parts.at(-1);
      if (last && plainText(last) && plainText(part) && !!last.thought === !!part.thought) {
        parts[parts.length - 1] = { ...last, text: last.text + part.text };
      } else parts.push(part);
    }
  }
  const reasons = replies.map((r) => r.candidates?.[0]?.finishReason).filter(Boolean);
  if (reasons.length && reasons.at(-1) !== "STOP") {
    throw new Error(`the reply was cut short or withheld (finishReason ${reasons.at(-1)})`);
  }
  if (!parts.length) throw new Error("the model returned no content");
  return { role, parts };
}

async function collect(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function plainText(part) {
  return typeof part.text === "string" && Object.keys(part).every((k) => k === "text" || k === "thought" || part[k] == null);
}

/** L9: drop the oldest saved exchanges while the request is over `limit` bytes; the active
 * turn always goes whole. */
function fit(history, active, config, limit) {
  const kept = [...history];
  while (limit != null && kept.length && size([...kept, ...active], config) > limit) {
    kept.shift();
    while (kept.length && kept[0].role !== "user") kept.shift(); // an exchange starts at a user message
  }
  return [...kept, ...active];
}

/** About the request body's size in bytes, as the SDK will send it (a little over it). */
function size(contents, config) {
  const body = {
    contents,
    systemInstruction: { parts: [{ text: config.systemInstruction ?? "" }], role: "user" },
    tools: config.tools,
    toolConfig: { functionCallingConfig: { mode: "NONE" } },
    generationConfig: {},
  };
  return Buffer.byteLength(JSON.stringify(body, null, 1), "utf8");
}

// ---------------------------------------------------------------- the program

const PROVIDERS = { anthropic, openai, gemini };

/** One query in, one result out. `options.skipClosing` is the broken variant's fault. */
export async function answer(query, options = {}) {
  const session = new Session(query);
  const loop = PROVIDERS[query.provider];
  if (!loop) return session.fail(new Error(`unknown provider ${query.provider}`));
  try {
    return await loop(session, options);
  } catch (error) {
    // a provider error is reported, never shown as the answer (L15)
    return session.fail(error);
  }
}

export async function main(options = {}) {
  const query = await readStdin();
  const result = await answer(query, options);
  process.stdout.write(JSON.stringify(result) + "\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main().catch((error) => {
    console.error(error?.stack ?? String(error));
    process.exit(1);
  });
}
