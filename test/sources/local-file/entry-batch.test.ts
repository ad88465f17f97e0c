import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SurfaceEntry } from '../../../src/models/observation.js';
import { type AcquireRequest, acquireSync } from '../../../src/sources/local-file/acquire-sync.js';
import { acquisitionPool } from '../../../src/sources/local-file/acquisition-pool.js';
import { EntryBatchBuilder, openEntryBatch } from '../../../src/sources/local-file/entry-batch.js';
import { DEFAULT_LIMITS } from '../../../src/sources/local-file/limits.js';
import { chooseSurfaceFs } from '../../../src/sources/local-file/surface-fs-choice.js';
import { releaseAcquisitionThreads } from '../../../src/sources/local-file-source.js';
import { removeDir, tempDir } from '../support/trees.js';

/**
 * Entry batches leave a pool thread with their texts as UTF-8 bytes in one transferred buffer
 * (entry-batch.ts); the receiving thread builds the strings. The evidence must be exactly what decoding on
 * the reader thread gave: the same text for every valid UTF-8 file (a byte-order mark kept, multi-byte
 * characters whole), `null` for every file that is not UTF-8 (overlong forms, surrogates, truncated
 * sequences), prefixes of large files as before.
 */

function entry(uri: string, content: string | null, sizeBytes = 0): SurfaceEntry {
  return {
    uri,
    sizeBytes,
    sha256: '0'.repeat(64),
    modifiedAt: '2026-01-01T00:00:00.000Z',
    content,
    contentTruncated: false,
  };
}

describe('EntryBatchBuilder and openEntryBatch', () => {
  it('builds each text from its bytes after a transfer, and leaves the other entries as they were', () => {
    const builder = new EntryBatchBuilder();
    const texts = ['\ufeffbom', 'é中😀', '', 'x'.repeat(100_000), 'plain'];
    const expected: SurfaceEntry[] = [];
    texts.forEach((text, i) => {
      const bytes = Buffer.from(text, 'utf8');
      builder.add(entry(`/t${i}`, null, bytes.length), bytes);
      expected.push(entry(`/t${i}`, text, bytes.length));
      // Entries that keep their own content (a prefix, a file that is not UTF-8) sit between them.
      builder.add(entry(`/own${i}`, i % 2 === 0 ? null : 'own text'));
      expected.push(entry(`/own${i}`, i % 2 === 0 ? null : 'own text'));
    });
    const posted = builder.take();
    assert.equal(builder.length, 0);
    assert.ok(posted.texts !== undefined);
    const textBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    assert.equal(posted.texts.bytes.byteLength, textBytes, 'the buffer holds exactly the text bytes');
    const received = structuredClone(posted, { transfer: [posted.texts.bytes, posted.texts.spans.buffer] });
    assert.equal(posted.texts.bytes.byteLength, 0, 'the bytes were moved, not copied');
    assert.deepEqual(openEntryBatch(received), expected);
  });

  it('copies text bytes at once, so the reader may reuse its buffer', () => {
    const builder = new EntryBatchBuilder();
    const scratch = Buffer.from('first');
    builder.add(entry('/a', null, 5), scratch);
    scratch.write('XXXXX');
    assert.deepEqual(openEntryBatch(builder.take()), [entry('/a', 'first', 5)]);
  });

  it('posts no buffer for a batch without text bytes, and starts each batch empty', () => {
    const builder = new EntryBatchBuilder();
    builder.add(entry('/a', null, 1), Buffer.from('a'));
    builder.take();
    builder.add(entry('/b', 'b', 1));
    const posted = builder.take();
    assert.equal(posted.texts, undefined);
    assert.deepEqual(openEntryBatch(posted), [entry('/b', 'b', 1)]);
  });

  it('refuses a span outside the bytes, or a span on an entry that already has text (a sender bug)', () => {
    const builder = new EntryBatchBuilder();
    builder.add(entry('/a', null, 3), Buffer.from('abc'));
    const outside = builder.take();
    assert.ok(outside.texts !== undefined);
    outside.texts.spans[1] = 4;
    assert.throws(() => openEntryBatch(outside), /bad text span for "\/a"/);
    builder.add(entry('/b', null, 3), Buffer.from('abc'));
    const twice = builder.take();
    (twice.entries[0] as SurfaceEntry).content = 'forged';
    assert.throws(() => openEntryBatch(twice), /bad text span for "\/b"/);
    builder.add(entry('/c', null, 3), Buffer.from('abc'));
    const short = builder.take();
    short.entries.push(entry('/d', null));
    assert.throws(() => openEntryBatch(short), /one text span per entry/);
  });
});

describe('entries through the pool are the entries decoded on the reader thread', () => {
  let root: string;
  const contents = new Map<string, Buffer>();
  before(() => {
    root = tempDir('witness-entry-batch-');
    const special: [string, Buffer][] = [
      ['bom.txt', Buffer.from('\ufeffwith a byte-order mark', 'utf8')],
      ['multi.txt', Buffer.from('é中😀 and more', 'utf8')],
      ['overlong.txt', Buffer.from([0x61, 0xc0, 0xaf, 0x62])],
      ['surrogate.txt', Buffer.from([0x61, 0xed, 0xa0, 0x80])],
      ['truncated.txt', Buffer.from([0x61, 0xe4, 0xb8])],
      ['latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9])],
      ['empty.txt', Buffer.alloc(0)],
      ['large.txt', Buffer.from(`${'é'.repeat(700)}tail`, 'utf8')],
    ];
    // Enough files for several batches and a second reader; each directory mixes the special files in.
    for (let d = 0; d < 8; d++) {
      fs.mkdirSync(path.join(root, `d${d}`));
      for (let f = 0; f < 120; f++) {
        const [name, bytes] =
          f < special.length
            ? (special[f] as [string, Buffer])
            : [`f${f}.txt`, Buffer.from(`file ${d}/${f} ${'z'.repeat(f)}`)];
        const uri = `/d${d}/${name}`;
        contents.set(uri, bytes);
        fs.writeFileSync(path.join(root, uri), bytes);
      }
    }
  });
  after(async () => {
    await releaseAcquisitionThreads();
    removeDir(root);
  });

  const request = (): AcquireRequest => ({
    root,
    uri: '/**',
    match: 'glob',
    // 1,000 bytes of text: large.txt (1,404 bytes) is kept as a prefix, cut inside a character.
    limits: { ...DEFAULT_LIMITS, maxContentBytes: 1_000 },
  });

  for (const readers of [1, 2] as const) {
    it(`gives the same entries as the sink-less walk (${readers} reader${readers === 1 ? '' : 's'})`, async () => {
      const seam = chooseSurfaceFs('auto');
      if (!seam.ok) throw new Error(seam.message);
      const direct = acquireSync(request(), seam.fs, () => false);
      assert.equal(direct.kind, 'done');
      if (direct.kind !== 'done') return;
      const streamed = await new Promise<SurfaceEntry[]>((resolve, reject) => {
        const got: SurfaceEntry[] = [];
        acquisitionPool.submit(
          { request: request(), surfaceFs: 'auto', cancel: new SharedArrayBuffer(4), readers },
          {
            onEntries: (batch) => got.push(...(batch as SurfaceEntry[])),
            onDone: (outcome) => {
              if (outcome.kind !== 'done') reject(new Error('cancelled'));
              else resolve(got.concat(outcome.result.entries));
            },
            onFailure: reject,
          },
        );
      });
      streamed.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
      assert.equal(streamed.length, contents.size);
      assert.deepEqual(streamed, direct.result.entries);
      // And the decoding itself is right (not merely the same on both paths).
      const byUri = new Map(streamed.map((e) => [e.uri, e]));
      assert.equal(byUri.get('/d3/bom.txt')?.content, '\ufeffwith a byte-order mark');
      assert.equal(byUri.get('/d3/multi.txt')?.content, 'é中😀 and more');
      for (const name of ['overlong', 'surrogate', 'truncated', 'latin1']) {
        assert.equal(byUri.get(`/d5/${name}.txt`)?.content, null, name);
      }
      assert.equal(byUri.get('/d1/empty.txt')?.content, '');
      const large = byUri.get('/d2/large.txt');
      assert.equal(large?.content, 'é'.repeat(500));
      assert.equal(large?.contentTruncated, true);
    });
  }
});
