// The OpenAI Node SDK against brain's OpenAI-compatible face
// (go test ./interop/ runs it): node openai.mjs <baseURL> <token>.
// It prints one JSON line per step; the Go test asserts them.
import OpenAI from 'openai';

const [baseURL, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: baseURL + '/v1', apiKey, maxRetries: 0 });
const print = (step, v) => console.log(JSON.stringify({ step, ...v }));

const models = await client.models.list();
print('models', { ids: models.data.map((m) => m.id) });

const first = await client.responses.create({ model: 'brain:default', input: 'Hello' });
print('create', { id: first.id, status: first.status, text: first.output_text, process: first.conversation?.id, total: first.usage?.total_tokens });

const next = await client.responses.create({ previous_response_id: first.id, input: 'Again' });
print('continue', { id: next.id, status: next.status, text: next.output_text, process: next.conversation?.id, previous: next.previous_response_id });

const stream = client.responses.stream({ model: 'default', input: 'Stream it' });
const types = [];
let deltas = '';
for await (const event of stream) {
  if (types.at(-1) !== event.type) types.push(event.type);
  if (event.type === 'response.output_text.delta') deltas += event.delta;
}
const final = await stream.finalResponse();
print('stream', { types, deltas, text: final.output_text, status: final.status });

const chat = await client.chat.completions.create({ model: 'default', messages: [{ role: 'user', content: 'Chat' }] });
print('chat', { text: chat.choices[0].message.content, total: chat.usage?.total_tokens });

try {
  await client.responses.create({ model: 'no-such-recipe', input: 'Hi' });
  print('unknown model', { error: null });
} catch (err) {
  print('unknown model', { error: err.constructor.name, status: err.status, param: err.param ?? null });
}
