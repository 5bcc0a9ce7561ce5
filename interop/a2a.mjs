// a2a.mjs drives a brain A2A agent with the official A2A JavaScript SDK and
// prints one JSON line per thing it saw, for interop/a2a_test.go to check.
//
//	node a2a.mjs <base URL of the agent, ending in /> <token or ""> <command> [args]
//
// commands: converse (card, stream a new task to its first stop, answer it,
// cancel another task), subscribe <task id> (stream a task to its next stop).
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

async function stream(events) {
  let task;
  for await (const ev of events) {
    const p = ev.payload;
    if (p.$case === "task") { task = p.value.id; out({ event: "task", id: p.value.id, state: p.value.status?.state, contextId: p.value.contextId }); }
    else if (p.$case === "statusUpdate") out({ event: "status", id: p.value.taskId, state: p.value.status?.state, message: text(p.value.status?.message) });
    else if (p.$case === "artifactUpdate") out({ event: "artifact", id: p.value.taskId, name: p.value.artifact?.name });
  }
  return task;
}

if (command === "converse") {
  const card = await client.getAgentCard();
  out({ event: "card", name: card.name, skills: card.skills.map((s) => s.id), streaming: card.capabilities?.streaming });
  const id = await stream(client.sendMessageStream({ message: message(args[0] ?? "hello") }));
  await stream(client.sendMessageStream({ message: message(args[1] ?? "again", id) }));
  const got = await client.getTask({ id, historyLength: 10 });
  out({ event: "get", id: got.id, state: got.status?.state, history: got.history.length });
  const other = await client.sendMessage({ message: message("another"), configuration: { returnImmediately: true } });
  const canceled = await client.cancelTask({ id: other.id });
  out({ event: "canceled", id: canceled.id, state: canceled.status?.state });
  try { await client.getTask({ id: "p_missing" }); } catch (e) { out({ event: "error", name: e.name }); }
} else if (command === "subscribe") {
  await stream(client.resubscribeTask({ id: args[0] }));
} else {
  throw new Error(`unknown command ${command}`);
}
