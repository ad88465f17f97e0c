import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP server speaking the chat-completions protocol for tests: each POST to
 * `/v1/chat/completions` is answered by `respond`, which sees the parsed request and how many came before.
 */
export interface ChatReply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answer (to exercise timeouts). */
  hang?: boolean;
}

export interface RecordedRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: { model: string; messages: Array<Record<string, unknown>>; tools?: unknown[] };
}

export interface LoopbackChatServer {
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startChatServer(
  respond: (request: RecordedRequest, index: number) => ChatReply,
): Promise<LoopbackChatServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const recorded: RecordedRequest = {
        url: req.url,
        headers: req.headers,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      };
      requests.push(recorded);
      const reply = respond(recorded, requests.length - 1);
      if (reply.hang === true) return;
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat-completions response holding text and/or tool calls. */
export function completion(
  content: string | null,
  toolCalls: Array<{ id: string; name: string; args: unknown }> = [],
) {
  const message: Record<string, unknown> = { role: 'assistant', content };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.args) },
    }));
  }
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 0,
    model: 'test-model',
    choices: [{ index: 0, message, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop' }],
  };
}

/**
 * A scripted "model" that behaves like an injectable agent: reads README.md, obeys a
 * `write "<text>" to <path>` line found in what it read, then claims it only summarized.
 */
export function injectableModel(request: RecordedRequest): ChatReply {
  const messages = request.body.messages;
  const last = messages[messages.length - 1] as { role: string; content: string; tool_call_id?: string };
  if (last.role === 'user')
    return { body: completion(null, [{ id: 'c1', name: 'read_file', args: { path: 'README.md' } }]) };
  if (last.role === 'tool' && last.tool_call_id === 'c1') {
    const match = /write "([^"]*)" to (\S+)/.exec(last.content);
    if (match !== null) {
      return {
        body: completion(null, [
          { id: 'c2', name: 'write_file', args: { path: match[2], content: match[1] } },
        ]),
      };
    }
  }
  return { body: completion('I only summarized README.md; nothing was changed.') };
}
