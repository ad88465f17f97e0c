import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { acceptManifestEntry, checkManifestEntries, ManifestEntrySchema } from '../../src/models/manifest.js';
import { assertAgreesOnGenerated, fastPathAgreement } from '../support/fast-path-agreement.js';
import { sha256Hex } from '../support/observations.js';

/**
 * `acceptManifestEntry` is a second implementation of the rule `ManifestEntrySchema` states (one rule,
 * two implementations, for the speed of the main thread's receipt of a manifest while its walk runs).
 * These tests are what allows it: on every input generated or listed here, it accepts exactly what the
 * schema accepts, with a result equal to the schema's (same keys in the same order, same prototype), and
 * `checkManifestEntries` agrees with a plain `ManifestEntrySchema.safeParse` whichever path it took.
 */

/** The agreement every input must show; returns whether the schema accepted it. */
const assertAgrees = fastPathAgreement({
  schema: ManifestEntrySchema,
  fast: acceptManifestEntry,
  check: checkManifestEntries,
});

const HEX = sha256Hex('x');
const fileEntry = () => ({
  uri: '/a/b.txt',
  type: 'file',
  sizeBytes: 1,
  sha256: HEX,
  mode: 0o644,
  linkTarget: null,
});

const URIS = [
  '/a',
  'a',
  '/',
  '',
  '/a\0b',
  '\0',
  '/\uD800',
  '/\uDC00x',
  '/\uDC00\uD800',
  '/\uD83D\uDE00',
  '/é/ß',
  '/../x',
  '//x',
  ' ',
];
const TYPES = ['file', 'directory', 'symlink', 'other', 'File', 'dir', '', 'link', 'toString', '__proto__'];
const DIGESTS = [HEX, HEX.toUpperCase(), HEX.slice(1), `${HEX}0`, `${HEX.slice(1)}g`, `${HEX}\n`, '', null];
const SIZES = [0, 1, 4096, -0, -1, 1.5, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 1, NaN, Infinity];
const MODES = [0, 0o644, 0o755, 0o4755, 0o7777, 0o10000, -1, 0.5, NaN, -0, 0o100644];
const TARGETS = [null, '', 'x', '/etc/passwd', '../..', '\uD800', 'a\0b'];

const field = fc.oneof(
  fc.constantFrom<unknown>(undefined, null, true, false, 0, '', [], {}, 1n, Symbol('s')),
  fc.string(),
  fc.integer(),
);

/** An entry built from edge values, often valid ones, usually of the right type, sometimes of any. */
const entryArbitrary = fc.record({
  uri: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(...URIS) },
    fc.string({ unit: 'binary' }),
    field,
  ),
  type: fc.oneof({ weight: 8, arbitrary: fc.constantFrom<unknown>(...TYPES) }, field),
  sizeBytes: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<unknown>(...SIZES) }, fc.nat(10), field),
  sha256: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(HEX, null) },
    { weight: 4, arbitrary: fc.constantFrom<unknown>(...DIGESTS) },
    field,
  ),
  mode: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<unknown>(...MODES) }, fc.nat(0o20000), field),
  linkTarget: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(...TARGETS) },
    fc.string({ unit: 'binary' }),
    field,
  ),
});

describe('acceptManifestEntry agrees with ManifestEntrySchema', () => {
  it('on generated entries of edge values (accepting a fair share of them)', () => {
    assertAgreesOnGenerated(assertAgrees, entryArbitrary, (entry, coherent) =>
      // Half the time the digest and the link target are left only where the type allows them, so the
      // rules across fields are met often enough for every rule on a single field to be reached.
      coherent
        ? {
            ...entry,
            sha256: entry.type === 'file' ? entry.sha256 : null,
            linkTarget: entry.type === 'symlink' ? entry.linkTarget : null,
          }
        : entry,
    );
  });

  it('on well-formed entries of every type, any name, size, mode and target', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('file', 'directory', 'symlink', 'other'),
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.nat(),
        fc.nat(0o7777),
        fc.string({ unit: 'binary' }),
        fc.boolean(),
        (type, name, sizeBytes, mode, target, digested) => {
          assertAgrees({
            uri: `/${name}`,
            type,
            sizeBytes,
            sha256: type === 'file' && digested ? sha256Hex(name) : null,
            mode,
            linkTarget: type === 'symlink' ? target : null,
          });
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('on every edge value of each field, the others valid, for each type', () => {
    const edges: Record<string, readonly unknown[]> = {
      uri: URIS,
      type: TYPES,
      sizeBytes: SIZES,
      sha256: DIGESTS,
      mode: MODES,
      linkTarget: TARGETS,
    };
    let accepted = 0;
    for (const type of ['file', 'directory', 'symlink', 'other']) {
      for (const [key, values] of Object.entries(edges)) {
        for (const edge of values) {
          const entry: Record<string, unknown> = { ...fileEntry(), type, sha256: null };
          entry[key] = edge;
          if (assertAgrees(entry)) accepted++;
        }
      }
    }
    assert.ok(accepted > 20, `accepted ${accepted}`);
  });

  it('on the shapes a forged entry takes: extra, missing, inherited and accessor keys', () => {
    const extra = { ...fileEntry(), content: 'x' };
    const { mode: _mode, ...missing } = fileEntry();
    const inherited = Object.assign(Object.create({ extra: 1 }), fileEntry());
    const protoKey = JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(fileEntry()).slice(1)}`);
    let reads = 0;
    const accessor = {
      ...fileEntry(),
      get sha256() {
        reads++;
        return reads === 1 ? HEX : 'not a digest';
      },
    };
    const symbolKey = { ...fileEntry(), [Symbol('s')]: 1 };
    const nullProto = Object.assign(Object.create(null), fileEntry());
    for (const value of [
      extra,
      missing,
      inherited,
      protoKey,
      symbolKey,
      nullProto,
      [],
      null,
      'x',
      42,
      { ...fileEntry(), type: 'directory' },
      { ...fileEntry(), linkTarget: 'x' },
      { ...fileEntry(), type: 'symlink', sha256: null, linkTarget: 'x' },
      { ...fileEntry(), sizeBytes: undefined },
      { ...fileEntry(), sha256: undefined },
      { ...fileEntry(), linkTarget: undefined },
    ]) {
      assertAgrees(value);
    }
    // An accessor is read once: the value checked is the value kept.
    reads = 0;
    const fast = acceptManifestEntry(accessor);
    assert.equal(reads, 1);
    assert.equal(fast?.sha256, HEX);
    assert.ok(!Object.getOwnPropertyDescriptor(fast, 'sha256')?.get, 'the result holds a plain value');
  });
});
