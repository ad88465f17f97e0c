import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError } from '../errors.js';
import { readBoundedBody } from '../net/read-bounded-body.js';
import type { MockMode } from '../targets/mock-planner.js';
import {
  parseMessagesRequest,
  renderAnthropicError,
  renderMessage,
  renderMessageEvents,
  renderTokenCount,
} from './anthropic-messages.js';
import {
  parseGenerateRequest,
  renderCountTokens,
  renderGeminiError,
  renderGenerateResponse,
} from './gemini-generate.js';
import {
  estimateTokens,
  parseChatRequest,
  renderChatCompletion,
  renderChatCompletionChunks,
  renderModelList,
  renderOpenAiError,
  WireFormatError,
} from './openai-chat.js';
import { parseResponsesRequest, renderResponse, renderResponseEvents } from './openai-responses.js';
import { nextTurn } from './scripted-model.js';

/**
 * `witness model serve`: the scripted model (scripted-model.ts) on loopback HTTP, speaking the OpenAI
 * Chat Completions API (`/v1/chat/completions`, `/v1/models`), the Anthropic Messages API
 * (`/v1/messages`, `/v1/messages/count_tokens`), the OpenAI Responses API (`/v1/responses`, for Codex)
 * and the Gemini API (`/v1beta/models/<m>:generateContent|streamGenerateContent|countTokens`, for
 * Gemini CLI), JSON or SSE. A path prefix before `/v1` is accepted, so
 * `baseUrl` may be `http://127.0.0.1:PORT` or `http://127.0.0.1:PORT/v1`.
 *
 * ```ts
 * const server = await startModelServer({ port: 0 });
 * // point an agent at `${server.url}/v1` with any API key and the model name `witness-scripted`
 * await server.close();
 * ```
 *
 * Guarantees: it binds loopback only (a model that writes whatever it is told must not be reachable from
 * the network), refuses a peer that is not loopback, and reads at most `maxBodyBytes` of a request body
 * (a client cannot make it buffer without bound). It never reads the API key it is sent.
 */

export const LOOPBACK_HOSTS = ['127.0.0.1', '::1', 'localhost'] as const;
export const SCRIPTED_MODEL_NAME = 'witness-scripted';

export interface ModelServerOptions {
  /** 0 (default) picks a free port. */
  port?: number | undefined;
  /** One of {@link LOOPBACK_HOSTS}; default 127.0.0.1. */
  host?: string | undefined;
  mode?: MockMode | undefined;
  /** Default 16 MiB: coding agents send long system prompts and tool lists. */
  maxBodyBytes?: number | undefined;
  /** Seconds since the epoch for `created` fields; default the wall clock. */
  nowSeconds?: (() => number) | undefined;
}

export interface RunningModelServer {
  /** `http://host:port`, without `/v1`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startModelServer(options: ModelServerOptions = {}): Promise<RunningModelServer> {
  const host = options.host ?? '127.0.0.1';
  if (!(LOOPBACK_HOSTS as readonly string[]).includes(host)) {
    throw new InvalidOptionError(
      `the scripted model listens on loopback only (${LOOPBACK_HOSTS.join(', ')}), not ${JSON.stringify(host)}`,
    );
  }
  const port = options.port ?? 0;
  if (!Number.isSafeInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidOptionError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new InvalidOptionError(`maxBodyBytes must be a positive integer, got ${String(maxBodyBytes)}`);
  }
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  let served = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, renderOpenAiError((error as Error).message, 'server_error'));
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isLoopbackPeer(req.socket.remoteAddress)) {
      res.writeHead(403).end();
      req.destroy();
      return;
    }
    const path = new URL(req.url ?? '/', 'http://loopback').pathname.replace(/\/+$/, '');
    const route = routeOf(path);
    const anthropic = route === 'messages' || route === 'count_tokens';
    const gemini = route === 'gemini_generate' || route === 'gemini_stream' || route === 'gemini_count';
    const fail = (status: number, message: string, type: string) =>
      sendJson(
        res,
        status,
        anthropic
          ? renderAnthropicError(message, type)
          : gemini
            ? renderGeminiError(status, message)
            : renderOpenAiError(message, type),
      );

    if (route === 'models' || route === 'model') {
      if (req.method !== 'GET') return fail(405, 'use GET', 'invalid_request_error');
      const list = renderModelList([SCRIPTED_MODEL_NAME]);
      return sendJson(res, 200, route === 'models' ? list : (list.data as unknown[])[0]);
    }
    if (route === undefined) return fail(404, `no such endpoint: ${path}`, 'not_found_error');
    if (req.method !== 'POST') return fail(405, 'use POST', 'invalid_request_error');

    const raw = (await readBoundedBody(req, maxBodyBytes))?.toString('utf8');
    if (raw === undefined)
      return fail(413, `the request body exceeds ${maxBodyBytes} bytes`, 'request_too_large');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return fail(400, 'the request body is not JSON', 'invalid_request_error');
    }
    try {
      served++;
      if (route === 'count_tokens') return sendJson(res, 200, renderTokenCount(body));
      if (route === 'chat') {
        const request = parseChatRequest(body);
        const turn = nextTurn(request.conversation, { mode: options.mode });
        const meta = {
          id: `chatcmpl-witness-${served}`,
          model: request.model,
          createdSeconds: nowSeconds(),
          promptTokens: estimateTokens(raw),
        };
        if (!request.stream) return sendJson(res, 200, renderChatCompletion(turn, meta));
        startStream(res);
        for (const data of renderChatCompletionChunks(turn, meta, request.includeUsage))
          res.write(`data: ${data}\n\n`);
        res.end();
        return;
      }
      if (route === 'gemini_count') return sendJson(res, 200, renderCountTokens(body));
      if (route === 'gemini_generate' || route === 'gemini_stream') {
        const model = /models\/([^/:]+):/.exec(path)?.[1] ?? SCRIPTED_MODEL_NAME;
        const turn = nextTurn(parseGenerateRequest(body).conversation, { mode: options.mode });
        const response = renderGenerateResponse(turn, decodeURIComponent(model), estimateTokens(raw));
        if (route === 'gemini_generate') return sendJson(res, 200, response);
        startStream(res);
        res.write(`data: ${JSON.stringify(response)}\r\n\r\n`);
        res.end();
        return;
      }
      if (route === 'responses') {
        const request = parseResponsesRequest(body);
        const turn = nextTurn(request.conversation, { mode: options.mode });
        const meta = {
          id: `resp_witness_${served}`,
          model: request.model,
          createdSeconds: nowSeconds(),
          inputTokens: estimateTokens(raw),
        };
        if (!request.stream) return sendJson(res, 200, renderResponse(turn, meta));
        startStream(res);
        for (const { event, data } of renderResponseEvents(turn, meta))
          res.write(`event: ${event}\ndata: ${data}\n\n`);
        res.end();
        return;
      }
      const request = parseMessagesRequest(body);
      const turn = nextTurn(request.conversation, { mode: options.mode });
      const meta = { id: `msg_witness_${served}`, model: request.model, inputTokens: estimateTokens(raw) };
      if (!request.stream) return sendJson(res, 200, renderMessage(turn, meta));
      startStream(res);
      for (const { event, data } of renderMessageEvents(turn, meta))
        res.write(`event: ${event}\ndata: ${data}\n\n`);
      res.end();
    } catch (error) {
      if (error instanceof WireFormatError) return fail(400, error.message, 'invalid_request_error');
      throw error;
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Route =
  | 'chat'
  | 'messages'
  | 'count_tokens'
  | 'responses'
  | 'models'
  | 'model'
  | 'gemini_generate'
  | 'gemini_stream'
  | 'gemini_count';

function routeOf(path: string): Route | undefined {
  if (/\/models\/[^/]+:generateContent$/.test(path)) return 'gemini_generate';
  if (/\/models\/[^/]+:streamGenerateContent$/.test(path)) return 'gemini_stream';
  if (/\/models\/[^/]+:countTokens$/.test(path)) return 'gemini_count';
  if (/(^|\/)responses$/.test(path)) return 'responses';
  if (/(^|\/)chat\/completions$/.test(path)) return 'chat';
  if (/(^|\/)messages\/count_tokens$/.test(path)) return 'count_tokens';
  if (/(^|\/)messages$/.test(path)) return 'messages';
  if (/(^|\/)models$/.test(path)) return 'models';
  if (/(^|\/)models\/[^/]+$/.test(path)) return 'model';
  return undefined;
}

function isLoopbackPeer(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function startStream(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}
