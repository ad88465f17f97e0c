import type { JsonObject } from '../models/record.js';
import type { AttemptEgress } from '../network/attempt-network.js';
import { sendThroughEgress } from '../network/egress-client.js';

/**
 * `http_request`, the web tool of Witness's own agents (the mock and chat planners with the workspace
 * toolbox). These agents run inside Witness, not in a sandbox, so their requests must not leave from
 * Witness's own network: the tool sends only through the attempt's egress proxy (`network: proxy`), on an
 * in-memory connection (egress-client.ts), so each request is recorded, allowed or refused exactly as a
 * sandboxed agent's `curl` is. Under `network: none` or `host` it sends nothing and says why: an
 * in-process tool under `host` would send unobserved from the operator's own machine.
 *
 * Bounded: a request body of at most `maxBodyBytes`, an answer cut to `maxResponseBytes`, 30 s per request.
 */

/** The tool as a toolbox lists it (a ToolSpec: name, description, the JSON Schema of its arguments). */
export const HTTP_REQUEST_TOOL: { name: string; description: string; inputSchema: JsonObject } = {
  name: 'http_request',
  description:
    'Send an HTTP request (GET, POST, PUT, ...) to a URL and return the status and the start of the answer.',
  inputSchema: {
    type: 'object',
    properties: {
      url: { type: 'string', description: 'an absolute http:// or https:// URL' },
      method: { type: 'string', description: 'GET (default), POST, PUT, PATCH or DELETE' },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      body: { type: 'string', description: 'the request body (text)' },
    },
    required: ['url'],
    additionalProperties: false,
  },
};

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

export interface HttpRequestToolOptions {
  /** The attempt's way out; absent under `network: none` and `host`. */
  egress?: AttemptEgress | undefined;
  /** Bytes of body accepted from the agent. Default 1 MiB. */
  maxBodyBytes?: number | undefined;
  /** Bytes of the answer shown to the agent. Default 16,384. */
  maxResponseBytes?: number | undefined;
  timeoutMs?: number | undefined;
}

export async function callHttpRequestTool(
  args: Record<string, unknown>,
  options: HttpRequestToolOptions,
  signal?: AbortSignal,
): Promise<{ ok: boolean; text: string }> {
  if (typeof args.url !== 'string') return { ok: false, text: 'http_request needs a string url' };
  const method = (typeof args.method === 'string' ? args.method : 'GET').toUpperCase();
  if (!METHODS.has(method)) return { ok: false, text: `http_request does not send ${method}` };
  if (args.body !== undefined && typeof args.body !== 'string') {
    return { ok: false, text: 'http_request takes the body as a string' };
  }
  const headers: Record<string, string> = {};
  if (args.headers !== undefined) {
    if (typeof args.headers !== 'object' || args.headers === null || Array.isArray(args.headers)) {
      return { ok: false, text: 'http_request takes headers as an object of strings' };
    }
    for (const [name, value] of Object.entries(args.headers).slice(0, 64)) {
      if (typeof value !== 'string') return { ok: false, text: `header ${name} is not a string` };
      headers[name] = value;
    }
  }
  const body = args.body as string | undefined;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  if (body !== undefined && Buffer.byteLength(body, 'utf8') > maxBodyBytes) {
    return { ok: false, text: `the body is larger than ${maxBodyBytes} bytes` };
  }
  if (options.egress === undefined) {
    return {
      ok: false,
      text: 'no network: this attempt has no egress proxy (network: none or host), so nothing is sent',
    };
  }
  try {
    const reply = await sendThroughEgress(
      options.egress.proxy,
      { method, url: args.url, headers, body },
      {
        signal,
        timeoutMs: options.timeoutMs,
        maxResponseBytes: options.maxResponseBytes ?? 16_384,
        ca: options.egress.trustedCa,
      },
    );
    const cut = reply.truncated ? '\n[the answer was cut]' : '';
    return { ok: reply.status < 400, text: `HTTP ${reply.status}\n${reply.text}${cut}` };
  } catch (error) {
    signal?.throwIfAborted();
    return { ok: false, text: `the request failed: ${(error as Error).message}` };
  }
}
