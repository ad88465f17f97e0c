import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError } from '../errors.js';
import { listen } from '../net/listen.js';
import { readBoundedBody } from '../net/read-bounded-body.js';
import type { MockMode } from '../targets/mock-planner.js';
import {
  type ApiFormat,
  estimateTokens,
  frameEvent,
  type GenerateRequest,
  WireFormatError,
} from './api-format.js';
import { API_FORMATS, routeRequest } from './api-formats.js';
import type { ModelTurn } from './conversation.js';
import { nextInjectionText, SCRIPTED_ATTACKER_NAME } from './scripted-attacker.js';
import { nextTurn } from './scripted-model.js';

/**
 * `witness model serve`: the scripted model (scripted-model.ts) on loopback HTTP, speaking every API
 * format of the registry (api-formats.ts: OpenAI Chat Completions and Responses, Anthropic Messages,
 * Gemini), JSON or SSE. A path prefix before `/v1` is accepted, so `baseUrl` may be
 * `http://127.0.0.1:PORT` or `http://127.0.0.1:PORT/v1`. The model name `witness-attacker` is answered by
 * the scripted attacker of adaptive attacks (scripted-attacker.ts); every other name by the scripted model.
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
  const { host, port, maxBodyBytes } = listenOptions(options);
  const nowSeconds = options.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  let served = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const format = API_FORMATS[0] as ApiFormat;
      if (!res.headersSent)
        sendJson(res, 500, format.renderError(500, (error as Error).message, 'server_error'));
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
    const route = routeRequest(path);
    const format: ApiFormat = route?.format ?? (API_FORMATS[0] as ApiFormat);
    const fail = (status: number, message: string, type: string) =>
      sendJson(res, status, format.renderError(status, message, type));
    if (route === undefined) return fail(404, `no such endpoint: ${path}`, 'not_found_error');
    const { endpoint } = route;
    if (req.method !== endpoint.method) return fail(405, `use ${endpoint.method}`, 'invalid_request_error');
    if (endpoint.kind === 'models')
      return sendJson(res, 200, endpoint.list([SCRIPTED_MODEL_NAME, SCRIPTED_ATTACKER_NAME]));

    const raw = (await readBoundedBody(req, maxBodyBytes))?.toString('utf8');
    if (raw === undefined)
      return fail(413, `the request body exceeds ${maxBodyBytes} bytes`, 'request_too_large');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return fail(400, 'the request body is not JSON', 'invalid_request_error');
    }
    served++;
    if (endpoint.kind === 'count_tokens') return sendJson(res, 200, endpoint.count(body));
    let request: GenerateRequest;
    try {
      request = endpoint.parse(body);
    } catch (error) {
      if (error instanceof WireFormatError) return fail(400, error.message, 'invalid_request_error');
      throw error;
    }
    // The model name picks who answers: the scripted attacker, or the scripted (target) model.
    const turn: ModelTurn =
      request.model === SCRIPTED_ATTACKER_NAME
        ? { kind: 'text', text: nextInjectionText(request.conversation) }
        : nextTurn(request.conversation, { mode: options.mode });
    const meta = { serial: served, createdSeconds: nowSeconds(), inputTokens: estimateTokens(raw) };
    if (!request.stream) return sendJson(res, 200, request.render(turn, meta));
    startStream(res);
    for (const event of request.renderStream(turn, meta)) res.write(frameEvent(event));
    res.end();
  }

  await listen(server, port, host);
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

/** The host (loopback only), port and body bound, checked; a bad one is the caller's mistake (exit 2). */
function listenOptions(options: ModelServerOptions): { host: string; port: number; maxBodyBytes: number } {
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
  return { host, port, maxBodyBytes };
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
