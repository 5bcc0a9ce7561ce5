// a2a.mjs drives a brain A2A agent with the official A2A JavaScript SDK and
// prints one JSON line per thing it saw, for interop/a2a_test.go to check.
//
//	node a2a.mjs <base URL of the agent, ending in /> <token or ""> <command> [args]
//
// commands:
//   - converse <text> <answer>: the card, a new task streamed to its first
//     stop, the answer streamed to the next, GetTask, another task canceled.
//   - failover <text> <base URL of the agent on another node>: a new task
//     streamed; when that stream breaks before the task stops, the task is
//     streamed again from the other node (SubscribeToTask).
//   - subscribe <task id>: a task streamed to its next stop.
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import { randomUUID } from "node:crypto";

const [base, token, command, ...args] = process.argv.slice(2);
const fetchImpl = (url, init = {}) => {
  const headers = new Headers(init.headers);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  return fetch(url, { ...init, headers });
};
const out = (v) => console.log(JSON.stringify(v));
const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl })],
}));
const client = await factory.createFromUrl(base);
const text = (m) => (m?.parts ?? []).map((p) => p.content?.value ?? "").join("");
const message = (t, taskId) => ({ messageId: randomUUID(), role: 1, parts: [{ content: { $case: "text", value: t } }], taskId: taskId ?? "" });
// A2A's task states by number, as the SDK gives them, and those a stream ends at.
const states = ["unspecified", "submitted", "working", "completed", "failed", "canceled", "input-required", "rejected", "auth-required"];
const stops = new Set(["completed", "failed", "canceled", "input-required"]);
const state = (s) => states[s] ?? String(s);

// stream prints the events of a stream and keeps the task's id and last
// state in seen (also when the stream breaks).
async function stream(events, seen = {}) {
  for await (const ev of events) {
    const p = ev.payload;
    if (p.$case === "task") {
      seen.id = p.value.id; seen.state = state(p.value.status?.state);
      out({ event: "task", id: seen.id, state: seen.state, message: text(p.value.status?.message), contextId: p.value.contextId });
    } else if (p.$case === "statusUpdate") {
      seen.state = state(p.value.status?.state);
      out({ event: "status", id: p.value.taskId, state: seen.state, message: text(p.value.status?.message) });
    } else if (p.$case === "artifactUpdate") out({ event: "artifact", id: p.value.taskId, name: p.value.artifact?.name });
  }
  return seen;
}

if (command === "converse") {
  const card = await client.getAgentCard();
  out({ event: "card", name: card.name, skills: card.skills.map((s) => s.id), streaming: card.capabilities?.streaming });
  const { id } = await stream(client.sendMessageStream({ message: message(args[0] ?? "hello") }));
  await stream(client.sendMessageStream({ message: message(args[1] ?? "again", id) }));
  const got = await client.getTask({ id, historyLength: 10 });
  out({ event: "get", id: got.id, state: state(got.status?.state), history: got.history.length });
  const other = await client.sendMessage({ message: message("another"), configuration: { returnImmediately: true } });
  const canceled = await client.cancelTask({ id: other.id });
  out({ event: "canceled", id: canceled.id, state: state(canceled.status?.state) });
  const after = await client.getTask({ id: other.id });
  out({ event: "get", id: after.id, state: state(after.status?.state) });
  try { await client.getTask({ id: "p_missing" }); } catch (e) { out({ event: "error", name: e.name }); }
} else if (command === "failover") {
  const seen = {};
  try {
    await stream(client.sendMessageStream({ message: message(args[0] ?? "hello") }), seen);
  } catch (e) {
    out({ event: "broken", id: seen.id, error: e.message });
  }
  if (!stops.has(seen.state)) {
    const other = await factory.createFromUrl(args[1]);
    out({ event: "resubscribe", id: seen.id });
    await stream(other.resubscribeTask({ id: seen.id }));
  }
} else if (command === "subscribe") {
  await stream(client.resubscribeTask({ id: args[0] }));
} else {
  throw new Error(`unknown command ${command}`);
}
