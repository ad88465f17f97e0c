import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction, connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import type { NetworkEvidence, NetworkRequest } from '../models/network-evidence.js';
import type { CertificateAuthority } from './certificate-authority.js';
import { looksLikeTls, MAX_CLIENT_HELLO_BYTES, readClientHello } from './client-hello.js';
import { type Destination, DestinationPolicy } from './destination-policy.js';
import type { OriginalDestination } from './original-destination.js';
import { RequestLog } from './request-log.js';

/**
 * The per-attempt egress proxy (SPEC §14): the only way out of an attempt's network namespace, and the
 * recorder of everything the agent sent. It speaks HTTP proxy (absolute-form requests and CONNECT) through
 * Node's own HTTP server (llhttp, the parser proxy-chain and http-mitm-proxy stand on: no HTTP is parsed
 * here by hand), and takes connections from wherever they were accepted (`accept`), so the same proxy
 * serves listeners inside a sandbox's namespace and a test's loopback client.
 *
 * Every request is recorded *before* it is decided: a request to a destination the allowlist does not name
 * is read (headers, and the body up to the budget) and then answered 403 — the agent sent it, and that is
 * the evidence. A CONNECT is recorded as host, port and byte counts; with a certificate authority
 * (`intercept: true`) its TLS is terminated and the requests inside are recorded and decided like any other.
 *
 * Bad input is bounded: a body past `maxReadBytes` is cut (413, the connection closed; its prefix and size
 * so far recorded, `body_truncated`); a header flood past Node's header limits and a slow client past
 * `headersTimeoutMs` / `requestTimeoutMs` end the connection (recorded as a gap: the request could not be
 * read); a CONNECT to the proxy itself or to any local address is refused by the destination policy; a TLS
 * handshake the client aborts leaves `tls_intercept_failed`; the proxy never follows a redirect (each hop
 * is the agent's own request, recorded and bounded by `maxRequests`). Nothing here throws into the attempt.
 *
 * A connection that ignored the proxy and was redirected to Witness inside the sandbox (`acceptRedirected`)
 * is recorded by what its first bytes show — HTTP through the same parser (method, Host, path, body), TLS by
 * the server name of its ClientHello (nothing of a TLS connection's data can have been sent before its
 * handshake, which is never completed; with `intercept: true` it is terminated instead, like a CONNECT, and
 * the requests inside recorded), anything else as raw bytes read to a bound — with the address it
 * was sent to, and never forwarded: the way out is the proxy, and a program that does not use it is
 * evidence, not a client.
 */

export interface EgressProxyOptions {
  /** `network.allow`: destinations forwarded (`api.example.com`, `*.example.org:443`). */
  allow?: readonly string[] | undefined;
  /** Forwarded whatever they are (the model endpoint). */
  alwaysAllow?: readonly Destination[] | undefined;
  /** Terminates TLS of CONNECT tunnels (and of redirected connections) with this CA (`intercept: true`). */
  ca?: CertificateAuthority | undefined;
  /** Requests recorded per attempt; later ones are refused and counted. Default 1,000. */
  maxRequests?: number | undefined;
  /** Bytes of each body kept as text. Default 65,536. */
  maxBodyBytes?: number | undefined;
  /** Bytes of body text kept over the whole attempt. Default 4 MiB. */
  maxStoredBodyBytes?: number | undefined;
  /** Bytes of each body read (and hashed, and forwarded); past it the request is cut. Default 16 MiB. */
  maxReadBytes?: number | undefined;
  /** Header lines kept per request. Default 200. */
  maxHeaders?: number | undefined;
  /** Bound on receiving a request's headers. Default 10,000 ms. */
  headersTimeoutMs?: number | undefined;
  /** Bound on receiving a whole request. Default 30,000 ms. */
  requestTimeoutMs?: number | undefined;
  /** Bound on an idle connection or tunnel. Default 60,000 ms. */
  idleTimeoutMs?: number | undefined;
  /** Name resolution (tests give their own). */
  lookup?: LookupFunction | undefined;
  /** Forwards https requests inside intercepted tunnels with these options (tests trust their server). */
  upstreamTls?: { rejectUnauthorized?: boolean; ca?: string | undefined } | undefined;
}

export interface EgressProxy {
  /** Serves a connection accepted elsewhere (a listener inside the sandbox, a test's server). */
  accept(socket: Duplex): void;
  /**
   * Records a connection that ignored the proxy, redirected to Witness on its way to `original` (undefined
   * when the kernel did not say), then ends it.
   */
  acceptRedirected(socket: Socket, original: OriginalDestination | undefined): void;
  /** The evidence so far (a snapshot; values as sent, not yet redacted). */
  evidence(): NetworkEvidence;
  /** Ends every connection and tunnel. */
  close(): Promise<void>;
}

const HOP_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

export function startEgressProxy(options: EgressProxyOptions = {}): EgressProxy {
  return new EgressProxyServer(options);
}

/**
 * The proxy's state and its steps: three HTTP servers that never listen (proxy requests and CONNECT, the
 * requests inside intercepted tunnels, redirected HTTP), fed the connections it accepts, and the request log
 * they all record into.
 */
class EgressProxyServer implements EgressProxy {
  readonly #options: EgressProxyOptions;
  readonly #policy: DestinationPolicy;
  readonly #log: RequestLog;
  readonly #maxReadBytes: number;
  readonly #idleTimeoutMs: number;
  readonly #lookup: LookupFunction;
  readonly #sockets = new Set<Duplex>();
  /** The destination of each intercepted tunnel's decrypted socket. */
  readonly #tunnels = new WeakMap<object, Destination>();
  /** The destination each redirected HTTP connection was sent to. */
  readonly #redirects = new WeakMap<object, OriginalDestination>();
  /** Redirected connections whose TLS Witness terminated (`intercept: true`): their requests are https. */
  readonly #redirectedTls = new WeakSet<object>();
  readonly #plain: Server;
  readonly #inner: Server;
  readonly #redirected: Server;
  #closed = false;

  constructor(options: EgressProxyOptions) {
    this.#options = options;
    this.#policy = new DestinationPolicy(options.allow ?? [], options.alwaysAllow ?? []);
    this.#log = new RequestLog({
      maxRequests: options.maxRequests ?? 1_000,
      maxHeaders: options.maxHeaders ?? 200,
      maxBodyBytes: options.maxBodyBytes ?? 65_536,
      maxStoredBodyBytes: options.maxStoredBodyBytes ?? 4 * 1024 * 1024,
    });
    this.#maxReadBytes = options.maxReadBytes ?? 16 * 1024 * 1024;
    this.#idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
    this.#lookup = options.lookup ?? (dnsLookup as unknown as LookupFunction);

    // Node checks the headers and request bounds every `connectionsCheckingInterval` (30 s by default).
    const serverOptions = {
      maxHeaderSize: 16_384,
      connectionsCheckingInterval: Math.min(1_000, options.headersTimeoutMs ?? 1_000),
    };
    this.#plain = createServer(serverOptions, (req, res) => {
      void this.#handleRequest(req, res, undefined);
    });
    this.#configure(this.#plain);
    this.#plain.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.#handleConnect(req, socket, head);
    });
    this.#inner = createServer(serverOptions, (req, res) => {
      void this.#handleRequest(req, res, this.#tunnels.get(req.socket));
    });
    this.#configure(this.#inner);
    this.#redirected = createServer(serverOptions, (req, res) => {
      void this.#handleRequest(req, res, undefined, this.#redirects.get(req.socket) ?? UNKNOWN_DESTINATION);
    });
    this.#configure(this.#redirected);
    // These servers never listen (connections come from `accept`), but Node arms its headers and request
    // bounds only for a server that did: its 'listening' handler starts the periodic check (unref'd).
    this.#plain.emit('listening');
    this.#inner.emit('listening');
    this.#redirected.emit('listening');
  }

  accept(socket: Duplex): void {
    if (!this.#track(socket)) return;
    this.#plain.emit('connection', socket);
  }

  evidence(): NetworkEvidence {
    return this.#log.evidence();
  }

  close(): Promise<void> {
    this.#closed = true;
    this.#plain.close();
    this.#inner.close();
    this.#redirected.close();
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    return Promise.resolve();
  }

  #track(socket: Duplex): boolean {
    if (this.#closed) {
      socket.destroy();
      return false;
    }
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined);
    return true;
  }

  #configure(server: Server): void {
    server.headersTimeout = this.#options.headersTimeoutMs ?? 10_000;
    server.requestTimeout = this.#options.requestTimeoutMs ?? 30_000;
    server.keepAliveTimeout = 5_000;
    server.timeout = this.#idleTimeoutMs;
    server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
      // A request Node's parser refused (a header flood, a malformed line) or a client too slow to send
      // its headers: what it held is unknown, so a matching request could hide in it.
      if (error.code !== 'ECONNRESET') {
        this.#log.addGap({
          reason: 'record_limit_exceeded',
          detail: `a request could not be read: ${error.code ?? error.message}`,
        });
      }
      if (socket.writable && error.code === 'HPE_HEADER_OVERFLOW') {
        socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
      } else {
        socket.destroy();
      }
    });
  }

  /** A request (proxied, inside a tunnel, or redirected): recorded, its body read, then forwarded or refused. */
  async #handleRequest(
    req: IncomingMessage,
    res: ServerResponse,
    tunnel: Destination | undefined,
    redirectedFrom?: OriginalDestination,
  ): Promise<void> {
    const at = new Date().toISOString();
    const method = (req.method ?? 'GET').toUpperCase();
    const { destination, target, direct } = requestDestination(req, tunnel, redirectedFrom);
    const decrypted = tunnel !== undefined || this.#redirectedTls.has(req.socket);
    const entry = this.#log.add(
      {
        at,
        method: method.slice(0, 64),
        scheme: decrypted ? 'https' : 'http',
        host: destination.host,
        port: destination.port,
        target: target.slice(0, 65_536),
        bodyBytes: 0,
        bodySha256: null,
        bodyText: null,
        bodyTruncated: false,
        disposition: 'refused',
        status: null,
        intercepted: decrypted,
        ...(redirectedFrom === undefined ? {} : { redirectedFrom: { ...redirectedFrom } }),
      },
      req.headers,
    );
    if (entry === undefined) {
      answer(res, 429, 'the attempt sent more requests than are recorded; refused');
      req.resume();
      return;
    }
    const refusal =
      redirectedFrom !== undefined
        ? redirectedRefusal(redirectedFrom)
        : direct
          ? 'not a proxy request (an absolute-form http:// URL was expected)'
          : this.#policy.refusal(destination);
    const body = await this.#readBody(req, entry, refusal === undefined);
    if (!body.complete) {
      entry.disposition = 'refused';
      entry.status = 413;
      entry.note = `the body exceeded maxReadBytes (${this.#maxReadBytes}); the connection was closed`;
      answer(res, 413, 'request body too large', true);
      return;
    }
    if (refusal !== undefined) {
      entry.status = 403;
      entry.note = refusal;
      answer(res, 403, `Witness egress proxy: ${destination.host}:${destination.port} refused (${refusal})`);
      return;
    }
    this.#forward(req, res, entry, destination, tunnel !== undefined, body.bytes);
  }

  /** Reads the body: every byte recorded; kept in full for forwarding only when it will be forwarded. */
  #readBody(
    req: IncomingMessage,
    entry: NetworkRequest,
    keep: boolean,
  ): Promise<{ complete: boolean; bytes: Buffer }> {
    const recorder = this.#log.bodyOf(entry);
    const maxReadBytes = this.#maxReadBytes;
    const chunks: Buffer[] = [];
    return new Promise((resolve) => {
      let done = false;
      const finish = (complete: boolean) => {
        if (done) return;
        done = true;
        if (complete) recorder.finish();
        resolve({ complete, bytes: complete && keep ? Buffer.concat(chunks) : Buffer.alloc(0) });
      };
      req.on('data', (chunk: Buffer) => {
        if (done) return;
        if (recorder.bytes + chunk.length > maxReadBytes) {
          recorder.write(chunk.subarray(0, maxReadBytes - recorder.bytes));
          req.pause();
          finish(false);
          return;
        }
        recorder.write(chunk);
        if (keep) chunks.push(chunk);
      });
      req.once('end', () => finish(true));
      req.once('error', () => finish(false));
      req.once('close', () => finish(req.complete));
    });
  }

  #forward(
    req: IncomingMessage,
    res: ServerResponse,
    entry: NetworkRequest,
    destination: Destination,
    tls: boolean,
    body: Buffer,
  ): void {
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name)) headers[name] = value;
    }
    headers.host = hostHeader(destination, tls ? 443 : 80);
    if (body.length > 0 || !['GET', 'HEAD'].includes(entry.method)) headers['content-length'] = body.length;
    const send = tls ? httpsRequest : httpRequest;
    const upstreamTls = this.#options.upstreamTls;
    const upstream = send({
      host: destination.host,
      port: destination.port,
      method: entry.method,
      path: entry.target || '/',
      headers,
      lookup: this.#guardedLookup(destination),
      timeout: this.#idleTimeoutMs,
      ...(tls
        ? {
            servername: isIP(destination.host) === 0 ? destination.host : undefined,
            rejectUnauthorized: upstreamTls?.rejectUnauthorized ?? true,
            ...(upstreamTls?.ca === undefined ? {} : { ca: upstreamTls.ca }),
          }
        : {}),
    });
    upstream.on('response', (response) => {
      entry.disposition = 'forwarded';
      entry.status = response.statusCode ?? 502;
      const outgoing: OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined && !HOP_HEADERS.has(name)) outgoing[name] = value;
      }
      if (response.headers['content-length'] !== undefined) {
        outgoing['content-length'] = response.headers['content-length'];
      }
      res.writeHead(entry.status, outgoing);
      response.pipe(res);
      response.on('error', () => res.destroy());
    });
    upstream.on('timeout', () => upstream.destroy(new Error('the destination did not answer in time')));
    upstream.on('error', (error: Error) => {
      if (entry.disposition !== 'forwarded') {
        entry.disposition = 'failed';
        entry.status = res.headersSent ? entry.status : 502;
        entry.note = error.message.slice(0, 1000);
      }
      if (!res.headersSent) answer(res, 502, `Witness egress proxy: ${error.message}`);
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  }

  /** A CONNECT: recorded, then intercepted (with a CA), refused, or tunnelled to its destination. */
  #handleConnect(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (!this.#track(socket)) return;
    const destination = parseAuthority(req.url ?? '', 443);
    if (destination === undefined) {
      this.#log.addGap({ reason: 'record_limit_exceeded', detail: 'a CONNECT named no valid host and port' });
      socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
      return;
    }
    const entry = this.#log.add(
      {
        at: new Date().toISOString(),
        method: 'CONNECT',
        scheme: 'https',
        host: destination.host,
        port: destination.port,
        target: '',
        bodyBytes: 0,
        bodySha256: null,
        bodyText: null,
        bodyTruncated: false,
        disposition: 'refused',
        status: null,
        tunnel: { bytesFromAgent: 0, bytesToAgent: 0 },
        intercepted: false,
      },
      req.headers,
    );
    if (entry === undefined) {
      socket.end('HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\n\r\n');
      return;
    }
    const refusal = this.#policy.refusal(destination);
    if (this.#options.ca !== undefined) {
      // Intercepted: the requests inside are recorded, then forwarded or refused one by one.
      entry.disposition = refusal === undefined ? 'forwarded' : 'refused';
      if (refusal !== undefined) entry.note = `${refusal}; the requests inside were read and refused`;
      this.#intercept(socket, head, destination, entry, this.#options.ca);
      return;
    }
    if (refusal !== undefined) {
      entry.status = 403;
      entry.note = refusal;
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.#tunnel(socket, head, destination, entry);
  }

  /** An allowed CONNECT without interception: bytes piped both ways and counted. */
  #tunnel(socket: Duplex, head: Buffer, destination: Destination, entry: NetworkRequest): void {
    const tunnel = entry.tunnel as { bytesFromAgent: number; bytesToAgent: number };
    const upstream = netConnect({
      host: destination.host,
      port: destination.port,
      lookup: this.#guardedLookup(destination),
    });
    this.#track(upstream);
    upstream.setTimeout(this.#idleTimeoutMs, () => upstream.destroy());
    upstream.once('connect', () => {
      entry.disposition = 'forwarded';
      entry.status = 200;
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) {
        tunnel.bytesFromAgent += head.length;
        entry.bodyBytes = tunnel.bytesFromAgent;
        upstream.write(head);
      }
      socket.on('data', (chunk: Buffer) => {
        tunnel.bytesFromAgent += chunk.length;
        entry.bodyBytes = tunnel.bytesFromAgent;
      });
      upstream.on('data', (chunk: Buffer) => {
        tunnel.bytesToAgent += chunk.length;
      });
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    upstream.once('error', (error: Error) => {
      if (entry.disposition !== 'forwarded') {
        entry.disposition = 'failed';
        entry.status = 502;
        entry.note = error.message.slice(0, 1000);
        socket.end('HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      } else {
        socket.destroy();
      }
    });
    socket.once('close', () => upstream.destroy());
    upstream.once('close', () => socket.destroy());
  }

  #intercept(
    socket: Duplex,
    head: Buffer,
    destination: Destination,
    entry: NetworkRequest,
    ca: CertificateAuthority,
  ): void {
    let credentials: { key: string; cert: string };
    try {
      credentials = ca.credentialsFor(destination.host);
    } catch (error) {
      this.#log.addGap({
        reason: 'tls_intercept_failed',
        uri: `https://${hostHeader(destination, 443)}`,
        detail: (error as Error).message,
      });
      socket.destroy();
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    const secure = new TLSSocket(socket as Socket, {
      isServer: true,
      key: credentials.key,
      cert: credentials.cert,
    });
    this.#track(secure);
    secure.setTimeout?.(this.#idleTimeoutMs, () => secure.destroy());
    secure.once('secure', () => {
      entry.intercepted = true;
      entry.status = 200;
    });
    let failure = 'the client ended the tunnel before completing the TLS handshake';
    secure.once('error', (error: Error) => {
      failure = error.message.slice(0, 300);
      secure.destroy();
    });
    secure.once('close', () => {
      // A client that refused the run's CA (or gave up) sent nothing readable through the tunnel.
      if (!entry.intercepted) {
        this.#log.addGap({
          reason: 'tls_intercept_failed',
          uri: `https://${hostHeader(destination, 443)}`,
          detail: failure,
        });
      }
    });
    this.#tunnels.set(secure, destination);
    this.#inner.emit('connection', secure);
  }

  /**
   * Reads a redirected connection's first bytes (until they tell HTTP, TLS or neither, at most
   * {@link MAX_CLIENT_HELLO_BYTES}, or `sniffMs`) and records it by them. A client that sends nothing (a
   * protocol whose server speaks first) is recorded as an empty `tcp` connection when it gives up or the
   * wait ends.
   */
  acceptRedirected(socket: Socket, original: OriginalDestination | undefined): void {
    if (!this.#track(socket)) return;
    const from = original ?? UNKNOWN_DESTINATION;
    let buffered = Buffer.alloc(0);
    let decided = false;
    const sniffMs = Math.min(this.#options.headersTimeoutMs ?? 10_000, 5_000);
    const decide = (final: boolean): void => {
      if (decided) return;
      if (!final && buffered.length < MAX_CLIENT_HELLO_BYTES) {
        if (looksLikeTls(buffered) && readClientHello(buffered).kind === 'incomplete') return;
        // A method still arriving (`PO`, `PROPFI`).
        if (buffered.length < 16 && /^[A-Z-]*$/.test(buffered.toString('latin1'))) return;
      }
      decided = true;
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.pause();
      this.#recordRedirected(socket, from, buffered, final);
    };
    const timer = setTimeout(() => decide(true), sniffMs);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      decide(false);
    };
    const onEnd = () => decide(true);
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
  }

  /** A redirected connection whose first bytes are read: HTTP, TLS or raw bytes, each recorded its way. */
  #recordRedirected(socket: Socket, from: OriginalDestination, buffered: Buffer, final: boolean): void {
    if (/^[A-Z][A-Z-]{0,15} \S/.test(buffered.toString('latin1', 0, 32))) {
      // HTTP: Node's parser reads it; each request is recorded and refused like a proxy request.
      // The server reads what arrives next straight from the socket's handle; the bytes already read
      // are handed back to the stream and reach its parser when the stream flows again.
      socket.unshift(buffered);
      this.#redirects.set(socket, from);
      this.#redirected.emit('connection', socket);
      socket.resume();
      return;
    }
    if (looksLikeTls(buffered)) {
      if (this.#options.ca !== undefined)
        this.#interceptRedirectedTls(socket, from, buffered, this.#options.ca);
      else this.#recordRedirectedTls(socket, from, buffered);
      return;
    }
    this.#recordRedirectedBytes(socket, from, buffered, final);
  }

  #redirectedEntry(
    from: OriginalDestination,
    fields: Pick<NetworkRequest, 'method' | 'scheme' | 'host'> & Partial<NetworkRequest>,
  ): NetworkRequest | undefined {
    return this.#log.add(
      {
        at: new Date().toISOString(),
        port: from.port,
        target: '',
        bodyBytes: 0,
        bodySha256: null,
        bodyText: null,
        bodyTruncated: false,
        disposition: 'refused',
        status: null,
        intercepted: false,
        note: redirectedRefusal(from),
        redirectedFrom: { ...from },
        ...fields,
      },
      {},
    );
  }

  /**
   * `intercept: true`: a redirected TLS connection is terminated like an intercepted CONNECT, with a
   * certificate minted for the server name of its ClientHello (its address without one), and each request
   * inside recorded with `redirectedFrom` and refused — never forwarded, like redirected HTTP. A client that
   * refuses the run's CA is recorded by its server name as before, with a `tls_intercept_failed` gap.
   */
  #interceptRedirectedTls(
    socket: Socket,
    from: OriginalDestination,
    hello: Buffer,
    ca: CertificateAuthority,
  ): void {
    const parsed = readClientHello(hello);
    const serverName = parsed.kind === 'client_hello' ? parsed.serverName : null;
    const host =
      serverName === null ? from.address : (parseAuthority(serverName, from.port)?.host ?? from.address);
    const uri = `https://${hostHeader({ host, port: from.port }, 443)}`;
    let credentials: { key: string; cert: string };
    try {
      credentials = ca.credentialsFor(host);
    } catch (error) {
      this.#log.addGap({ reason: 'tls_intercept_failed', uri, detail: (error as Error).message });
      this.#recordRedirectedTls(socket, from, hello);
      return;
    }
    socket.unshift(hello);
    const secure = new TLSSocket(socket, { isServer: true, key: credentials.key, cert: credentials.cert });
    this.#track(secure);
    secure.setTimeout?.(this.#idleTimeoutMs, () => secure.destroy());
    let established = false;
    secure.once('secure', () => {
      established = true;
    });
    let failure = 'the client ended the connection before completing the TLS handshake';
    secure.once('error', (error: Error) => {
      failure = error.message.slice(0, 300);
      secure.destroy();
    });
    secure.once('close', () => {
      if (established) return;
      // Nothing inside was readable: recorded by its server name, like an unintercepted one.
      this.#log.addGap({ reason: 'tls_intercept_failed', uri, detail: failure });
      this.#redirectedEntry(from, {
        method: 'TLS',
        scheme: 'https',
        host,
        bodyBytes: hello.length,
        tunnel: { bytesFromAgent: hello.length, bytesToAgent: 0 },
        note: `${redirectedRefusal(from)}; its TLS could not be intercepted (${failure})`,
      });
    });
    this.#redirects.set(secure, from);
    this.#redirectedTls.add(secure);
    this.#redirected.emit('connection', secure);
  }

  #recordRedirectedTls(socket: Duplex, from: OriginalDestination, hello: Buffer): void {
    const parsed = readClientHello(hello);
    const serverName = parsed.kind === 'client_hello' ? parsed.serverName : null;
    const host =
      serverName === null ? from.address : (parseAuthority(serverName, from.port)?.host ?? from.address);
    this.#redirectedEntry(from, {
      method: 'TLS',
      scheme: 'https',
      host,
      bodyBytes: hello.length,
      tunnel: { bytesFromAgent: hello.length, bytesToAgent: 0 },
      note: `${redirectedRefusal(from)}; TLS${serverName === null ? ' without a server name' : ''}, its handshake not answered (nothing inside it was sent)`,
    });
    socket.destroy();
  }

  #recordRedirectedBytes(socket: Socket, from: OriginalDestination, first: Buffer, ended: boolean): void {
    const entry = this.#redirectedEntry(from, { method: 'TCP', scheme: 'tcp', host: from.address });
    if (entry === undefined) {
      socket.destroy();
      return;
    }
    const maxReadBytes = this.#maxReadBytes;
    const recorder = this.#log.bodyOf(entry);
    if (first.length > maxReadBytes) {
      recorder.write(first.subarray(0, maxReadBytes));
      socket.destroy();
      return;
    }
    recorder.write(first);
    if (ended) {
      recorder.finish();
      socket.destroy();
      return;
    }
    // Raw bytes: read to the client's end, an idle pause, the request bound or maxReadBytes.
    const idleMs = Math.min(this.#options.headersTimeoutMs ?? 10_000, 5_000);
    let done = false;
    const finish = (complete: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(overall);
      if (complete) recorder.finish();
      socket.destroy();
    };
    const overall = setTimeout(() => finish(false), this.#options.requestTimeoutMs ?? 30_000);
    socket.setTimeout(idleMs, () => finish(false));
    socket.on('data', (chunk: Buffer) => {
      if (recorder.bytes + chunk.length > maxReadBytes) {
        recorder.write(chunk.subarray(0, maxReadBytes - recorder.bytes));
        finish(false);
        return;
      }
      recorder.write(chunk);
    });
    socket.once('end', () => finish(true));
    socket.once('close', () => finish(false));
    socket.resume();
  }

  #guardedLookup(destination: Destination): LookupFunction {
    const policy = this.#policy;
    const lookup = this.#lookup;
    return ((hostname: string, lookupOptions: object, callback: (...args: unknown[]) => void) => {
      lookup(
        hostname,
        { ...lookupOptions, all: true } as never,
        ((error: Error | null, addresses: LookupAddress[]) => {
          if (error !== null) {
            callback(error);
            return;
          }
          const list = Array.isArray(addresses) ? addresses : [];
          for (const address of list) {
            const refusal = policy.addressRefusal(destination, address.address);
            if (refusal !== undefined) {
              callback(Object.assign(new Error(`${hostname} ${refusal}`), { code: 'EWITNESSREFUSED' }));
              return;
            }
          }
          const wantsAll = (lookupOptions as { all?: boolean }).all === true;
          if (wantsAll) callback(null, list);
          else if (list[0] === undefined)
            callback(Object.assign(new Error(`${hostname}: no address`), { code: 'ENOTFOUND' }));
          else callback(null, list[0].address, list[0].family);
        }) as never,
      );
    }) as LookupFunction;
  }
}

/**
 * Where a request goes and the target sent there: a tunnel's destination; for a redirected connection the
 * name the program gave (its Host header) or the address it connected to; the absolute-form URL of a proxy
 * request; else the proxy itself (`direct`: not a proxy request).
 */
function requestDestination(
  req: IncomingMessage,
  tunnel: Destination | undefined,
  redirectedFrom: OriginalDestination | undefined,
): { destination: Destination; target: string; direct: boolean } {
  let destination: Destination | undefined;
  let target = req.url ?? '/';
  if (tunnel !== undefined) {
    destination = tunnel;
  } else if (redirectedFrom !== undefined) {
    // The name the program gave (its Host header) where it gave one; the address it connected to else.
    const url = parseUrl(target);
    if (url !== undefined) target = `${url.pathname}${url.search}`;
    const hostHeader = typeof req.headers.host === 'string' ? req.headers.host : '';
    destination = parseAuthority(hostHeader, redirectedFrom.port) ?? {
      host: redirectedFrom.address,
      port: redirectedFrom.port,
    };
  } else {
    const url = parseUrl(target);
    if (url !== undefined && url.protocol === 'http:') {
      destination = { host: canonicalHost(url.hostname), port: Number(url.port || 80) };
      target = `${url.pathname}${url.search}`;
    }
  }
  if (destination !== undefined) return { destination, target, direct: false };
  // Not a proxy request (origin-form, or another scheme): addressed to the proxy itself.
  const hostHeader = typeof req.headers.host === 'string' ? req.headers.host : '';
  return {
    destination: parseAuthority(hostHeader, 80) ?? { host: 'proxy.invalid', port: 0 },
    target,
    direct: true,
  };
}

/** What a redirected connection is recorded as going to when the kernel did not say. */
const UNKNOWN_DESTINATION: OriginalDestination = { address: 'unknown', port: 0 };

function redirectedRefusal(from: OriginalDestination): string {
  return `ignored the proxy: a connection to ${from.address.includes(':') ? `[${from.address}]` : from.address}:${from.port}, redirected inside the sandbox and never forwarded`;
}

function answer(res: ServerResponse, status: number, text: string, close = false): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = `${text}\n`;
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(body);
  if (close) res.once('finish', () => res.socket?.destroy());
}

function parseUrl(text: string): URL | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return undefined;
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/**
 * `host:port` of a CONNECT line or a Host header, normalised by the URL parser: an IPv4 address written in
 * decimal, hex or short form (`2130706433`, `0x7f.1`, `127.1`) becomes `127.0.0.1`, so the destination
 * policy sees what the kernel would connect to.
 */
export function parseAuthority(authority: string, defaultPort: number): Destination | undefined {
  if (authority === '' || /[\s/?#@\\]/.test(authority)) return undefined;
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return undefined;
  }
  if (url.hostname === '') return undefined;
  const explicit = /:(\d+)$/.exec(authority);
  const port = explicit === null ? defaultPort : Number(explicit[1]);
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return undefined;
  return { host: canonicalHost(url.hostname), port };
}

function canonicalHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

function hostHeader(destination: Destination, standardPort: number): string {
  const host = destination.host.includes(':') ? `[${destination.host}]` : destination.host;
  return destination.port === standardPort ? host : `${host}:${destination.port}`;
}
