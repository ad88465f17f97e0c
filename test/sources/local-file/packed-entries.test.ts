import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { InvalidRecordError } from '../../../src/errors.js';
import { checkSurfaceEntries, mergeCheckedEntries } from '../../../src/models/checked-observation.js';
import { type ManifestEntry, pickCheckedManifestEntries } from '../../../src/models/manifest.js';
import type { SurfaceEntry } from '../../../src/models/observation.js';
import { surface } from '../../../src/models/scorable.js';
import { unpackManifestEntries } from '../../../src/sources/local-file/manifest-entry-unpacking.js';
import {
  ENTRY_BATCH,
  manifestTransfer,
  type PackedManifestEntries,
  type PackedSurfaceEntries,
  packManifestEntries,
  packSurfaceEntries,
  SurfaceEntryPacker,
} from '../../../src/sources/local-file/packed-entries.js';
import {
  SurfaceEntryUnpacker,
  unpackSurfaceEntries,
} from '../../../src/sources/local-file/surface-entry-unpacking.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';
import { removeDir, tempDir } from '../support/trees.js';

const sha = (n: number) => n.toString(16).padStart(64, '0');
const at = '2026-12-01T22:00:00.000Z';

function entry(uri: string, content: string | null, extra: Partial<SurfaceEntry> = {}): SurfaceEntry {
  const sizeBytes = content === null ? 7 : Buffer.byteLength(content, 'utf8');
  return {
    uri,
    sizeBytes,
    sha256: sha(sizeBytes),
    modifiedAt: at,
    content,
    contentTruncated: false,
    ...extra,
  };
}

/** Every shape an entry can take: ASCII, empty, not ASCII, binary, a truncated prefix, an unread file, large. */
const SHAPES: SurfaceEntry[] = [
  entry('/a.txt', 'plain ascii text\n'),
  entry('/empty', ''),
  entry('/short', 'ab'),
  entry('/é.md', 'naïve café ☕ and 😀\n'),
  entry('/latin1-range', 'caf\u00e9'),
  entry('/bin', null),
  entry('/cut.log', 'first bytes', { sizeBytes: 5000, contentTruncated: true }),
  entry('/unread.log', 'partial', { sizeBytes: 9000, sha256: null, contentTruncated: true }),
  entry('/big.txt', 'x'.repeat(70 * 1024)),
  entry('/ctl', 'nul \0 and del \x7f are ASCII'),
  entry('/not-text.bin', 'ELF\0head', { sizeBytes: 16_000_000, contentTruncated: true, notText: true }),
  entry('/not-text-empty.bin', '', { sizeBytes: 3, contentTruncated: true, notText: true }),
];

/** Posts a packed batch through a real MessageChannel (the text transferred) and returns what arrived. */
async function throughPort(
  batch: PackedSurfaceEntries | PackedManifestEntries,
  transfer: ArrayBuffer[] = [(batch as PackedSurfaceEntries).text],
): Promise<unknown> {
  const { port1, port2 }: { port1: MessagePort; port2: MessagePort } = new MessageChannel();
  try {
    const arrived = new Promise<unknown>((resolve) => port2.once('message', resolve));
    port1.postMessage(batch, transfer);
    return await arrived;
  } finally {
    port1.close();
    port2.close();
  }
}

describe('packed surface entries (packed-entries.ts)', () => {
  it('carry every shape of entry unchanged through a real port, its text transferred, not copied', async () => {
    const packed = packSurfaceEntries(SHAPES);
    const textBytes = packed.text.byteLength;
    assert.ok(textBytes > 0, 'the ASCII texts travel as bytes');
    const arrived = await throughPort(packed);
    assert.equal(packed.text.byteLength, 0, 'the sender no longer holds the text: it was transferred');
    const receipt = new SurfaceEntryUnpacker();
    const lists = [...receipt.receive(arrived), ...receipt.finish()];
    assert.equal(lists.length, 1);
    const unpacked = lists[0] as SurfaceEntry[];
    assert.deepEqual(unpacked, checkSurfaceEntries(SHAPES));
    for (const one of unpacked) assert.ok(Object.isFrozen(one));
    assert.ok(Object.isFrozen(unpacked));
    // Only lists the checker built are trusted downstream: this one is accepted.
    assert.equal(mergeCheckedEntries(lists).length, SHAPES.length);
  });

  it('send only ASCII text of at most 8 KiB as bytes; other text as strings, null as null', () => {
    const packed = packSurfaceEntries(SHAPES);
    const asBytes = SHAPES.filter((_, i) => (packed.textEnds[i] as number) >= 0).map((one) => one.uri);
    assert.deepEqual(asBytes, [
      '/a.txt',
      '/empty',
      '/short',
      '/cut.log',
      '/unread.log',
      '/ctl',
      '/not-text.bin',
      '/not-text-empty.bin',
    ]);
    assert.equal(packed.contents[SHAPES.findIndex((one) => one.uri === '/é.md')], SHAPES[3]?.content);
    assert.equal(packed.contents[SHAPES.findIndex((one) => one.uri === '/bin')], null);
  });

  it('gather many batches into arenas: lists come out while batches still arrive, in full at the end', () => {
    const receipt = new SurfaceEntryUnpacker();
    const all: SurfaceEntry[] = [];
    const out: SurfaceEntry[][] = [];
    let earlyLists = 0;
    for (let b = 0; b < 40; b++) {
      const batch = Array.from({ length: 100 }, (_, i) =>
        entry(`/d${b}/f${String(i).padStart(3, '0')}`, `${b}:${i}:`.padEnd(200 + ((b * 100 + i) % 900), 'y')),
      );
      all.push(...batch);
      const lists = receipt.receive(packSurfaceEntries(batch));
      earlyLists += lists.length;
      out.push(...lists);
    }
    out.push(...receipt.finish());
    assert.ok(earlyLists > 0, 'arenas were completed before the last batch');
    assert.deepEqual(out.flat(), checkSurfaceEntries(all));
    assert.deepEqual(receipt.finish(), [], 'nothing is left after finish');
  });

  it('pack a whole ASCII file given as bytes exactly as the same entry given with its text', async () => {
    const packer = new SurfaceEntryPacker();
    const asText = [entry('/a.txt', 'first file\n'), entry('/b.md', '# two\n'), entry('/c', '')];
    packer.add(SHAPES[3] as SurfaceEntry); // not ASCII: travels as a string between the byte texts
    for (const one of asText) {
      packer.addAscii(
        one.uri,
        one.sizeBytes,
        one.sha256 as string,
        one.modifiedAt,
        Buffer.from(one.content as string),
      );
    }
    packer.add(SHAPES[5] as SurfaceEntry); // no text
    const expected = [SHAPES[3] as SurfaceEntry, ...asText, SHAPES[5] as SurfaceEntry];
    const packed = packer.take();
    const first = new Uint8Array(packed.text);
    assert.deepEqual(packed, packSurfaceEntries(expected));
    // The packer starts afresh, its buffer reused: the next batch holds only its own text, and the bytes
    // of the batch already taken are its own (a longer next batch does not write over them).
    packer.addAscii('/d', 9, sha(9), at, Buffer.from('overwrite'));
    packer.addAscii('/e', 9, sha(9), at, Buffer.from('every bit'));
    const next = packer.take();
    assert.equal(Buffer.from(next.text).toString('latin1'), 'overwriteevery bit');
    assert.deepEqual(next.uris, ['/d', '/e']);
    assert.equal(Buffer.from(first).toString('latin1'), 'first file\n# two\n');
    assert.deepEqual(unpackSurfaceEntries(await throughPort(packed)), checkSurfaceEntries(expected));
  });

  it('post each batch as it fills and the rest at flush; a failed post keeps its batch for the next', () => {
    const posted: string[][] = [];
    let fail = true;
    const packer = new SurfaceEntryPacker((batch) => {
      if (fail) {
        fail = false;
        throw new RangeError('the first post fails');
      }
      posted.push(unpackSurfaceEntries(batch).map((one) => one.uri));
    });
    const uris = Array.from({ length: ENTRY_BATCH + 30 }, (_, i) => `/f${String(i).padStart(3, '0')}`);
    const failures: string[] = [];
    for (const [i, uri] of uris.entries()) {
      try {
        if (i % 2 === 0) packer.add(entry(uri, `text ${i}`));
        else packer.addAscii(uri, 5, sha(5), at, Buffer.from(`t${String(i).padStart(3, '0')}x`.slice(0, 5)));
      } catch {
        failures.push(uri);
      }
    }
    assert.deepEqual(failures, [uris[ENTRY_BATCH - 1]], 'the entry that filled the batch saw the failure');
    assert.deepEqual(
      posted.map((batch) => batch.length),
      [ENTRY_BATCH + 1],
      'the batch that failed went whole with the next entry',
    );
    packer.flush();
    assert.deepEqual(posted.flat(), uris, 'every entry posted once, in order');
    assert.equal(packer.count, 0);
  });

  it('share a released text buffer with the next packer, never with one alive at the same time', () => {
    const released = new SurfaceEntryPacker();
    released.addAscii('/r', 8, sha(8), at, Buffer.from('released'));
    released.take();
    released.release();
    // Two packers alive at once on this thread (one takes the spare buffer, the other its own), filled
    // in turns: neither batch may hold the other's bytes.
    const a = new SurfaceEntryPacker();
    const b = new SurfaceEntryPacker();
    for (let i = 0; i < 50; i++) {
      a.addAscii(`/a${i}`, 3, sha(3), at, Buffer.from(`a${String(i).padStart(2, '0')}`));
      b.addAscii(`/b${i}`, 400, sha(400), at, Buffer.alloc(400, 0x62));
    }
    const expectedA = Array.from({ length: 50 }, (_, i) => `a${String(i).padStart(2, '0')}`).join('');
    assert.equal(Buffer.from(a.take().text).toString('latin1'), expectedA);
    assert.equal(Buffer.from(b.take().text).toString('latin1'), 'b'.repeat(400 * 50));
    a.release();
    b.release();
  });

  it('refuse bytes past the packed-text bound, and bytes above 0x7f given as ASCII (caught on arrival)', () => {
    const packer = new SurfaceEntryPacker();
    assert.throws(
      () => packer.addAscii('/big', 9000, sha(9000), at, Buffer.alloc(8 * 1024 + 1, 0x61)),
      /an ASCII text of 8193 bytes: a bug/,
    );
    assert.equal(packer.count, 0, 'nothing of the refused entry was kept');
    packer.addAscii('/lie', 4, sha(4), at, Buffer.from([0x61, 0xe9, 0x62, 0x63]));
    assert.throws(() => unpackSurfaceEntries(packer.take()), /observation entry/);
  });

  it('refuse a glob batch that arrives unpacked (every pool thread packs), never guessing at its shape', () => {
    assert.throws(() => new SurfaceEntryUnpacker().receive(SHAPES.slice(0, 3)), /arrived unpacked/);
  });

  it('refuse a batch whose text disagrees with its size (forged or corrupted evidence), naming the entry', () => {
    const packed = packSurfaceEntries([entry('/a.txt', 'abcdef')]);
    packed.sizes[0] = 5;
    assert.throws(() => unpackSurfaceEntries(packed), /observation entry/);
  });

  it('refuse a batch with a byte above 0x7f in its ASCII text (it would decode as another character)', () => {
    const packed = packSurfaceEntries([entry('/a.txt', 'abcdef')]);
    new Uint8Array(packed.text)[2] = 0xe9;
    assert.throws(() => unpackSurfaceEntries(packed), /observation entry/);
  });

  it('refuse a batch whose text offsets go backwards or do not end at its end (a neighbour text)', () => {
    const backwards = packSurfaceEntries([entry('/a', 'first text'), entry('/b', 'second one')]);
    backwards.textEnds[1] = 3;
    assert.throws(() => unpackSurfaceEntries(backwards), /text offsets out of order/);
    const short = packSurfaceEntries([entry('/a', 'first text'), entry('/b', 'second one')]);
    short.textEnds[1] = 15;
    assert.throws(() => unpackSurfaceEntries(short), /texts end at 15 of 20 bytes/);
  });

  it('start a new arena rather than let one grow past about 1 MB (a kept slice pins its arena)', () => {
    const batchOf = (bytes: number, tag: string) =>
      packSurfaceEntries(
        Array.from({ length: Math.ceil(bytes / 8000) }, (_, i) =>
          entry(`/${tag}${i}`, `${tag}${i}`.padEnd(8000, '.')),
        ),
      );
    const receipt = new SurfaceEntryUnpacker();
    assert.deepEqual(receipt.receive(batchOf(400_000, 'a')), [], 'under 512 KiB: the arena waits');
    // 400 KB + 704 KB would pass 1,000,000 bytes: the first arena is completed alone, then the second.
    const lists = receipt.receive(batchOf(700_000, 'b'));
    assert.deepEqual(
      lists.map((list) => list.length),
      [50, 88],
    );
    assert.deepEqual(receipt.finish(), []);
  });

  it('refuse a batch whose columns differ in length (a bug, never guessed around)', () => {
    const packed = packSurfaceEntries(SHAPES);
    assert.throws(
      () => unpackSurfaceEntries({ ...packed, modifiedAts: packed.modifiedAts.slice(1) }),
      /columns of different lengths/,
    );
  });

  it('refuse a digest that is not lowercase hex, though the batch checks its digests in one pass', () => {
    for (const forged of ['AB'.repeat(32), `${'a'.repeat(63)}g`, `${'a'.repeat(63)} `, 'é'.repeat(64)]) {
      const packed = packSurfaceEntries([entry('/a', 'first'), entry('/b', 'second'), entry('/c', 'third')]);
      // The middle entry's digest, in place: the other two stay valid.
      const sha256s = `${packed.sha256s.slice(0, 64)}${forged}${packed.sha256s.slice(128)}`;
      assert.throws(
        () => unpackSurfaceEntries({ ...packed, sha256s }),
        (error: unknown) => {
          assert.ok(error instanceof InvalidRecordError);
          assert.match(String(error.message), /sha256/);
          return true;
        },
      );
    }
  });

  it('give each entry its own digest and time, null digests skipped in the joined column', () => {
    const entries = [
      entry('/a', 'one', { modifiedAt: '2026-01-01T00:00:00.001Z' }),
      entry('/b', 'cut', { sizeBytes: 9000, sha256: null, contentTruncated: true }),
      entry('/c', 'three', { sha256: 'f'.repeat(64), modifiedAt: '0000-01-01T00:00:00.000Z' }),
    ];
    const packed = packSurfaceEntries(entries);
    assert.deepEqual([...packed.digested], [1, 0, 1]);
    assert.equal(packed.sha256s.length, 128);
    assert.deepEqual(unpackSurfaceEntries(packed), checkSurfaceEntries(entries));
    // A digest column one digest short (or long) is a bug of the sender, never realigned.
    assert.throws(
      () => unpackSurfaceEntries({ ...packed, sha256s: packed.sha256s.slice(64) }),
      /columns of different lengths/,
    );
    assert.throws(
      () => unpackSurfaceEntries({ ...packed, digested: Uint8Array.of(1, 1, 1) }),
      /columns of different lengths/,
    );
  });

  it('refuse a batch whose time or digest-flag column has the wrong length or type (a bug)', () => {
    const packed = packSurfaceEntries(SHAPES);
    for (const forged of [
      { ...packed, modifiedAts: `${packed.modifiedAts}2026-12-01T22:00:00.000Z` },
      { ...packed, modifiedAts: packed.modifiedAts.slice(0, -1) },
      { ...packed, modifiedAts: packed.modifiedAts.match(/.{24}/g) },
      { ...packed, digested: [...packed.digested] },
      { ...packed, digested: Uint8ClampedArray.from(packed.digested) },
      { ...packed, sha256s: [packed.sha256s] },
    ]) {
      assert.throws(() => unpackSurfaceEntries(forged), /columns of different lengths/);
    }
  });

  it('give the public source the same evidence over a tree of several batches, text of every kind', async () => {
    const root = tempDir('packed-');
    try {
      const expected = new Map<string, string | null>();
      for (let i = 0; i < 450; i++) {
        const name = `f${String(i).padStart(3, '0')}.txt`;
        const text = i % 50 === 7 ? `ünïcode ${i}\n` : `line ${i}\n`.repeat(1 + (i % 40));
        fs.writeFileSync(path.join(root, name), text);
        expected.set(`/${name}`, text);
      }
      fs.writeFileSync(path.join(root, 'z.bin'), Buffer.from([0xff, 0xfe, 0x00, 0x80]));
      // Not text: only its start before the first byte that is not UTF-8 (here none) is kept.
      expected.set('/z.bin', '');
      const source = new LocalFileSurfaceSource({ root });
      try {
        const observation = await source.acquire(surface('/**', 'glob'));
        assert.equal(observation.acquisition, 'complete');
        const got = new Map(observation.payload.entries.map((one) => [one.uri, one.content]));
        assert.deepEqual(got, expected);
      } finally {
        await source.close();
      }
    } finally {
      removeDir(root);
    }
  });
});

/** Every shape a manifest entry takes: a file with and without a digest, a directory, links, an other. */
const MANIFEST_SHAPES: ManifestEntry[] = [
  { uri: '/a.txt', type: 'file', sizeBytes: 12, sha256: sha(12), mode: 0o644, linkTarget: null },
  { uri: '/cut.bin', type: 'file', sizeBytes: 9_000_000, sha256: null, mode: 0o4755, linkTarget: null },
  { uri: '/d', type: 'directory', sizeBytes: 4096, sha256: null, mode: 0o1777, linkTarget: null },
  { uri: '/d/é', type: 'symlink', sizeBytes: 7, sha256: null, mode: 0o777, linkTarget: '/etc/passwd' },
  { uri: '/d/odd', type: 'symlink', sizeBytes: 0, sha256: null, mode: 0o777, linkTarget: null },
  { uri: '/fifo', type: 'other', sizeBytes: 0, sha256: null, mode: 0o600, linkTarget: null },
];

describe('packed manifest entries (packed-entries.ts, manifest-entry-unpacking.ts)', () => {
  it('carry every shape of entry unchanged through a real port, columns transferred', async () => {
    const packed = packManifestEntries(MANIFEST_SHAPES);
    const arrived = (await throughPort(packed, manifestTransfer(packed))) as PackedManifestEntries;
    assert.equal(packed.sizes.length, 0, 'the sender no longer holds the sizes: they were transferred');
    const received = unpackManifestEntries(arrived);
    assert.deepEqual(received, MANIFEST_SHAPES);
    for (const one of received) assert.ok(Object.isFrozen(one));
    // The list is registered as checked: a manifest's list may be picked from it, the very objects.
    assert.ok(Object.isFrozen(received));
    assert.equal(pickCheckedManifestEntries([received], Int32Array.of(0, 0))[0], received[0]);
    // A list that no check built (the same entries, copied) is refused.
    assert.throws(
      () => pickCheckedManifestEntries([[...received]], Int32Array.of(0, 0)),
      /no manifest check built/,
    );
  });

  it('refuse a manifest batch that arrives unpacked, or with columns of different lengths (a bug)', () => {
    assert.throws(() => unpackManifestEntries(MANIFEST_SHAPES), /arrived unpacked/);
    const packed = packManifestEntries(MANIFEST_SHAPES);
    assert.throws(
      () => unpackManifestEntries({ ...packed, modes: packed.modes.subarray(1) }),
      /columns of different lengths/,
    );
  });

  it('refuse by the entry rule what a forged batch claims: a digest on a directory, an unknown type, a NUL', () => {
    const forge = (change: (packed: PackedManifestEntries) => void) => {
      const packed = packManifestEntries(MANIFEST_SHAPES);
      change(packed);
      return () => unpackManifestEntries(packed);
    };
    assert.throws(
      forge((p) => {
        p.sha256s[2] = sha(1);
      }),
      InvalidRecordError,
    );
    assert.throws(
      forge((p) => {
        p.types[0] = 9;
      }),
      InvalidRecordError,
    );
    assert.throws(
      forge((p) => {
        p.uris[0] = '/a\0b';
      }),
      InvalidRecordError,
    );
    assert.throws(
      forge((p) => {
        p.modes[0] = 0o10000;
      }),
      InvalidRecordError,
    );
    assert.throws(
      forge((p) => {
        p.linkTargets[0] = '/etc';
      }),
      InvalidRecordError,
    );
  });
});
