import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { type RunningModelServer, startModelServer } from '../../src/model-server/model-server.js';
import { toolCallsFromExchanges } from '../../src/targets/recorded-tool-calls.js';
import { startRecordingProxy } from '../../src/targets/recording-proxy.js';
import { SecretRedactor } from '../../src/text/secret-redactor.js';

const KEY = 'sk-canary-proxy-5521';
const tools = [
  {
    name: 'Write',
    input_schema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
    },
  },
];

describe('recording proxy', () => {
  let model: RunningModelServer;
  before(async () => {
    model = await startModelServer({ port: 0 });
  });
  after(() => model.close());

  it("refuses what is not its attempt's (no path prefix) and never forwards to another origin", async () => {
    let reached = 0;
    const elsewhere = createServer((_req, res) => {
      reached++;
      res.end('forwarded');
    });
    elsewhere.listen(0, '127.0.0.1');
    await new Promise((resolve) => elsewhere.once('listening', resolve));
    const elsewherePort = (elsewhere.address() as AddressInfo).port;
    const proxy = await startRecordingProxy({ upstream: `${model.url}/v1` });
    try {
      const port = new URL(proxy.baseUrl).port;
      // Another attempt that found the port pushes a forged exchange (a tool call this attempt never
      // made) without this attempt's prefix: refused, and not in this attempt's transcript.
      const forged = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'FORGED-write-/etc' }] }),
      });
      assert.equal(forged.status, 403);
      // An absolute-form request naming another host, through the prefix's own port.
      const answer = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
        });
        socket.on('close', () => resolve(text));
        socket.write(
          `GET http://127.0.0.1:${elsewherePort}${new URL(proxy.baseUrl).pathname}/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
        );
      });
      assert.match(answer, /^HTTP\/1\.1 403/);
      // Through the prefix, a path that a URL parser reads as another authority (`//host:port/…`, or
      // `/\\host` which WHATWG reads the same for http): still the upstream's origin, never elsewhere.
      const prefix = new URL(proxy.baseUrl).pathname.split('/')[1];
      for (const path of [`//127.0.0.1:${elsewherePort}/x`, `/\\127.0.0.1:${elsewherePort}/x`]) {
        const answered = await new Promise<string>((resolve) => {
          const socket = connect(Number(port), '127.0.0.1');
          let text = '';
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString('latin1');
          });
          socket.on('close', () => resolve(text));
          socket.write(`GET /${prefix}${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        });
        assert.doesNotMatch(answered, /forwarded/, path);
      }
      assert.equal(reached, 0);
      assert.doesNotMatch(JSON.stringify(proxy.exchanges()), /FORGED/);
      assert.ok(
        proxy.exchanges().every((exchange) => new URL(exchange.request.url).origin === model.url),
        JSON.stringify(proxy.exchanges().map((exchange) => exchange.request.url)),
      );
    } finally {
      await proxy.close();
      elsewhere.close();
    }
  });

  it('passes a streamed exchange through unchanged and records it redacted, with the tool call it carried', async () => {
    const proxy = await startRecordingProxy({
      upstream: `${model.url}/v1`,
      redactor: new SecretRedactor([{ name: 'MODEL_KEY', value: KEY }]),
    });
    try {
      assert.match(proxy.baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f]{24}\/v1$/);
      const body = JSON.stringify({
        model: 'm',
        stream: true,
        messages: [{ role: 'user', content: `write "token ${KEY}" to a.txt` }],
        tools,
      });
      const init = {
        method: 'POST',
        headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
        body,
      };
      const direct = await (await fetch(`${model.url}/v1/messages`, init)).text();
      const proxied = await fetch(`${proxy.baseUrl}/messages?beta=true`, init);
      assert.equal(proxied.headers.get('content-type'), 'text/event-stream');
      assert.equal(
        (await proxied.text()).replace(/msg_witness_\d+/, 'ID'),
        direct.replace(/msg_witness_\d+/, 'ID'),
        'the client sees exactly what the model sent',
      );
      const [exchange] = proxy.exchanges();
      assert.ok(exchange !== undefined);
      assert.equal(exchange.request.url, `${model.url}/v1/messages?beta=true`);
      assert.equal(exchange.request.headers['x-api-key'], '[redacted]');
      assert.deepEqual((exchange.request.body as { messages: unknown }).messages, [
        { role: 'user', content: 'write "token [redacted:MODEL_KEY]" to a.txt' },
      ]);
      assert.equal(exchange.response?.status, 200);
      assert.equal(JSON.stringify(proxy.exchanges()).includes(KEY), false, 'the key is in no stored byte');
      // The model echoed the key inside a tool call streamed in 24-character deltas: the key is split
      // across events, so the stream is withheld and only its joined, redacted text is kept.
      assert.ok(
        direct.includes(KEY.slice(0, 10)) && !direct.includes(KEY),
        'the attack: the key is split across events',
      );
      assert.deepEqual(exchange.response?.body, {
        withheld: 'the stream spelled out a secret across its events',
        bytes: Buffer.byteLength(direct),
        text: JSON.stringify({ file_path: 'a.txt', content: 'token [redacted:MODEL_KEY]' }),
      });
      assert.equal(JSON.stringify(exchange).includes(KEY.slice(-8)), false, 'no fragment of the key is kept');
    } finally {
      await proxy.close();
    }
  });

  it('records what the official openai client sends and receives, streamed and not', async () => {
    const proxy = await startRecordingProxy({
      upstream: `${model.url}/v1`,
      redactor: new SecretRedactor([{ name: 'MODEL_KEY', value: KEY }]),
    });
    try {
      const client = new OpenAI({ baseURL: proxy.baseUrl, apiKey: KEY, maxRetries: 0 });
      const shell = [
        {
          type: 'function' as const,
          function: {
            name: 'run_shell_command',
            parameters: { type: 'object', properties: { command: { type: 'string' } } },
          },
        },
      ];
      await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'write "x" to one.txt' }],
        tools: shell,
      });
      await client.chat.completions
        .stream({ model: 'm', messages: [{ role: 'user', content: 'write "y" to two.txt' }], tools: shell })
        .finalChatCompletion();
      const exchanges = proxy.exchanges();
      assert.equal(exchanges.length, 2);
      assert.equal(exchanges[0]?.request.headers.authorization, '[redacted]');
      assert.equal(typeof exchanges[0]?.response?.body, 'object', 'a JSON response is stored as JSON');
      assert.equal(typeof exchanges[1]?.response?.body, 'string', 'a stream is stored as its text');
      assert.deepEqual(
        toolCallsFromExchanges(exchanges).map((event) =>
          event.kind === 'tool_call' ? event.arguments : null,
        ),
        [{ command: "printf '%s' 'x' > 'one.txt'" }, { command: "printf '%s' 'y' > 'two.txt'" }],
      );
    } finally {
      await proxy.close();
    }
  });

  it('bounds what it stores: bodies cut at maxStoredBodyBytes, exchanges past maxExchanges counted, not kept', async () => {
    const proxy = await startRecordingProxy({
      upstream: `${model.url}/v1`,
      maxStoredBodyBytes: 64,
      maxExchanges: 1,
    });
    try {
      const long = 'word '.repeat(200);
      for (let n = 0; n < 3; n++) {
        const response = await fetch(`${proxy.baseUrl}/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: long }] }),
        });
        assert.equal(response.status, 200);
        await response.text();
      }
      const exchanges = proxy.exchanges();
      assert.equal(exchanges.length, 1);
      assert.equal(proxy.dropped(), 2);
      assert.match(
        String(exchanges[0]?.request.body),
        /^\{"model":"m".{40,}… \[\d+ more bytes not stored\]$/,
      );
      assert.match(String(exchanges[0]?.response?.body), /… \[\d+ more bytes not stored\]$/);
    } finally {
      await proxy.close();
    }
  });

  it('answers 502 and records the error when the model endpoint is down', async () => {
    const down = await startModelServer({ port: 0 });
    const url = `${down.url}/v1`;
    await down.close();
    const proxy = await startRecordingProxy({ upstream: url });
    try {
      const response = await fetch(`${proxy.baseUrl}/chat/completions`, { method: 'POST', body: '{}' });
      assert.equal(response.status, 502);
      const [exchange] = proxy.exchanges();
      assert.equal(exchange?.response, null);
      assert.equal(typeof exchange?.error, 'string');
    } finally {
      await proxy.close();
    }
  });
});
