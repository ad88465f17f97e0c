import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionError } from '../errors.js';
import type { JsonValue } from '../models/record.js';
import { listen } from '../net/listen.js';
import { describeNetworkError } from '../net/network-error.js';
import { readBoundedBody } from '../net/read-bounded-body.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import type { HttpExchangeEvent } from './transcript.js';

/**
 * A transcript for any agent: a loopback HTTP proxy put in front of the model endpoint for one attempt.
 * The agent is pointed at it; every request and response passes through unchanged (streams included) and
 * is recorded as an `http_exchange` event — bounded (`maxStoredBodyBytes` per body, `maxExchanges` per
 * attempt) and redacted: credential headers are replaced whatever they hold, and the `redactor` (the campaign's
 * secrets, the model's key among them) runs over URLs, headers and bodies before anything is stored, so the key reaches the upstream and nowhere
 * else. Exchanges still in flight when the attempt stops are kept with what had arrived (a timed-out
 * attempt's partial transcript).
 *
 * It serves its one attempt and its one upstream: its `baseUrl` carries a random path prefix that every
 * request must start with (another attempt on the host's network that finds the port cannot push a forged
 * exchange into this attempt's transcript), and a request is only ever sent to the upstream's origin — an
 * absolute-form target naming another host (`GET http://elsewhere/…`) is refused, never forwarded, and a
 * path that reads as another authority (`/<prefix>//elsewhere/…`) stays a path on the upstream.
 *
 * ```ts
 * const proxy = await startRecordingProxy({ upstream: 'http://127.0.0.1:8719/v1', redactor });
 * // run the agent against proxy.baseUrl, then:
 * const events = proxy.exchanges();
 * await proxy.close();
 * ```
 */

export interface RecordingProxyOptions {
  /** The real endpoint (`baseUrl` as configured, path included). */
  upstream: string;
  /** The campaign's secret redaction (SPEC §11), applied to everything stored. */
  redactor?: SecretRedactor | undefined;
  /** Bytes of each request and response body stored; default 262,144. */
  maxStoredBodyBytes?: number | undefined;
  /** Exchanges stored per attempt; later ones are forwarded but not stored. Default 200. */
  maxExchanges?: number | undefined;
  /** Largest request body forwarded; default 32 MiB. */
  maxRequestBytes?: number | undefined;
  now?: (() => number) | undefined;
}

export interface RecordingProxy {
  /** Give this to the agent in place of `upstream`. */
  baseUrl: string;
  /** The exchanges so far, in the order requests arrived; redacted and bounded. */
  exchanges(): HttpExchangeEvent[];
  /** Number of exchanges forwarded but not stored (over `maxExchanges`). */
  dropped(): number;
  close(): Promise<void>;
}

const REDACTED = '[redacted]';
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'proxy-authorization',
]);
const HOP_HEADERS = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'accept-encoding',
  'upgrade',
]);

export async function startRecordingProxy(options: RecordingProxyOptions): Promise<RecordingProxy> {
  const upstream = upstreamUrl(options.upstream);
  const limits = proxyLimits(options);
  const now = options.now ?? (() => performance.now());
  const { redactor } = options;
  const redact = (text: string) => redactor?.redactText(text) ?? text;
  const records: HttpExchangeEvent[] = [];
  let dropped = 0;
  const inflight = new Set<AbortController>();
  const prefix = `/${randomBytes(12).toString('hex')}`;

  const server = createServer((req, res) => {
    forward(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = now();
    const path = ownPath(req.url ?? '/', prefix);
    if (path === undefined) {
      req.resume();
      res
        .writeHead(403, { 'content-type': 'text/plain', connection: 'close' })
        .end("not this attempt's endpoint\n");
      return;
    }
    const body = await readBoundedBody(req, limits.maxRequestBytes);
    if (body === undefined) {
      res.writeHead(413, { connection: 'close' }).end();
      return;
    }
    // Appended to the origin, never resolved against it: `new URL('//elsewhere/x', origin)` is a
    // network-path reference (and so is `/\\elsewhere` for http), which would send the request, and the
    // agent's model key with it, to any host the agent names.
    const target = new URL(`${upstream.origin}${path}`);
    const headers = forwardedHeaders(req);
    let record: HttpExchangeEvent | undefined;
    if (records.length < limits.maxExchanges) {
      record = requestRecord(req.method ?? 'GET', target, headers, body, limits.maxStored, redact);
      records.push(record);
    } else {
      dropped++;
    }
    const controller = new AbortController();
    inflight.add(controller);
    try {
      await relay(req.method ?? 'GET', target, headers, body, controller.signal, res, {
        record,
        started,
        now,
        maxStored: limits.maxStored,
        redact,
      });
    } finally {
      inflight.delete(controller);
    }
  }

  await listen(server, 0, '127.0.0.1');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}${upstream.pathname.replace(/\/+$/, '')}${upstream.search}`,
    exchanges: () => records.map((record) => structuredClone(record)),
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        for (const controller of inflight) controller.abort();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function upstreamUrl(upstream: string): URL {
  try {
    return new URL(upstream);
  } catch {
    throw new InvalidOptionError(`the model baseUrl is not a URL: ${upstream}`);
  }
}

function proxyLimits(options: RecordingProxyOptions) {
  return {
    maxStored: options.maxStoredBodyBytes ?? 262_144,
    maxExchanges: options.maxExchanges ?? 200,
    maxRequestBytes: options.maxRequestBytes ?? 32 * 1024 * 1024,
  };
}

/** The request's path without the attempt's prefix, or undefined when it is not this attempt's. */
function ownPath(url: string, prefix: string): string | undefined {
  if (!url.startsWith('/')) return undefined;
  if (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`)) return undefined;
  const rest = url.slice(prefix.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** The agent's request headers as sent upstream: hop-by-hop ones dropped, repeated ones joined. */
function forwardedHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_HEADERS.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** The stored exchange of a request, redacted and bounded; its response comes as it arrives. */
function requestRecord(
  method: string,
  target: URL,
  headers: Record<string, string>,
  body: Buffer,
  maxStored: number,
  redact: (text: string) => string,
): HttpExchangeEvent {
  return {
    kind: 'http_exchange',
    try: 1,
    request: {
      method,
      url: redact(target.href),
      headers: storedHeaders(headers, redact),
      body: storedBody(body, maxStored, redact),
    },
    response: null,
    durationMs: 0,
  };
}

/** Where a relayed response is recorded (nothing when the exchange is over `maxExchanges`). */
interface ResponseRecording {
  record: HttpExchangeEvent | undefined;
  started: number;
  now: () => number;
  maxStored: number;
  redact: (text: string) => string;
}

/**
 * Sends the request upstream and streams the response back to the agent as it comes, storing what has
 * arrived after every chunk (a timed-out attempt keeps its partial response). A failure is recorded on
 * the exchange, then thrown.
 */
async function relay(
  method: string,
  target: URL,
  headers: Record<string, string>,
  body: Buffer,
  signal: AbortSignal,
  res: ServerResponse,
  recording: ResponseRecording,
): Promise<void> {
  const { record, started, now, maxStored, redact } = recording;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let totalBytes = 0;
  const store = (status: number, type: string) => {
    if (record === undefined) return;
    record.response = { status, body: storedResponse(Buffer.concat(kept), totalBytes, type, redact) };
    record.durationMs = Math.max(0, now() - started);
  };
  let status = 0;
  let type = '';
  try {
    const response = await fetch(target, {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : body,
      signal,
    });
    status = response.status;
    type = response.headers.get('content-type') ?? '';
    const outgoing: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      if (!HOP_HEADERS.has(name) && name !== 'content-encoding') outgoing[name] = value;
    });
    res.writeHead(response.status, outgoing);
    if (response.body !== null) {
      for await (const chunk of response.body) {
        const buffer = Buffer.from(chunk);
        totalBytes += buffer.length;
        if (keptBytes < maxStored) {
          kept.push(buffer.subarray(0, maxStored - keptBytes));
          keptBytes += Math.min(buffer.length, maxStored - keptBytes);
        }
        store(status, type);
        res.write(buffer);
      }
    }
    store(status, type);
    res.end();
  } catch (error) {
    if (record !== undefined) {
      if (status !== 0) store(status, type);
      record.error = redact(describeNetworkError(error));
      record.durationMs = Math.max(0, now() - started);
    }
    throw error;
  }
}

function storedHeaders(
  headers: Record<string, string>,
  redact: (text: string) => string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers).sort()) {
    out[name] = CREDENTIAL_HEADERS.has(name) ? REDACTED : redact(headers[name] as string);
  }
  return out;
}

/** A JSON body as JSON when whole and small enough; otherwise its text, cut, with the size noted. */
function storedBody(bytes: Buffer, max: number, redact: (text: string) => string): JsonValue {
  if (bytes.length === 0) return null;
  if (bytes.length <= max) {
    const text = redact(bytes.toString('utf8'));
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
  }
  return `${redact(bytes.subarray(0, max).toString('utf8'))}… [${bytes.length - max} more bytes not stored]`;
}

function storedResponse(
  kept: Buffer,
  total: number,
  type: string,
  redact: (text: string) => string,
): JsonValue {
  const raw = kept.toString('utf8');
  // A stream can spell a secret out across events (one delta ends with `sk-ab`, the next starts `cd…`),
  // which no search of the raw text finds. The deltas are joined and searched; a stream that spells a
  // secret is withheld and only its joined, redacted text kept.
  if (/event-stream/i.test(type)) {
    const joined = joinedDeltas(raw);
    if (redact(joined) !== joined) {
      return {
        withheld: 'the stream spelled out a secret across its events',
        bytes: total,
        text: redact(joined),
      };
    }
  }
  const text = redact(raw);
  const cut = total > kept.length ? `… [${total - kept.length} more bytes not stored]` : '';
  if (cut === '' && /json/i.test(type)) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      // A JSON content type with a body that is not JSON: stored as text.
    }
  }
  return `${text}${cut}`;
}

/** The text and argument fragments of an SSE body's `data:` payloads, in order, joined. */
function joinedDeltas(sse: string): string {
  const pieces: string[] = [];
  const collect = (value: unknown, key: string | undefined): void => {
    if (typeof value === 'string') {
      if (key !== undefined && DELTA_KEYS.has(key)) pieces.push(value);
      return;
    }
    if (Array.isArray(value)) for (const inner of value) collect(inner, key);
    else if (typeof value === 'object' && value !== null) {
      for (const [name, inner] of Object.entries(value)) collect(inner, name);
    }
  };
  for (const line of sse.split('\n')) {
    if (!line.startsWith('data:')) continue;
    try {
      collect(JSON.parse(line.slice(5)), undefined);
    } catch {
      pieces.push(line.slice(5));
    }
  }
  return pieces.join('');
}
const DELTA_KEYS = new Set(['content', 'arguments', 'text', 'partial_json', 'delta', 'thinking']);
