import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { InvalidRecordError } from '../../src/errors.js';
import {
  checkObservationOfCheckedEntries,
  checkSurfaceEntries,
  mergeCheckedEntries,
} from '../../src/models/checked-observation.js';
import { acceptSurfaceEntry, SurfaceEntrySchema } from '../../src/models/observation.js';
import { assertAgreesOnGenerated, fastPathAgreement } from '../support/fast-path-agreement.js';
import { MODIFIED_AT, observationInput, sha256Hex, textEntry } from '../support/observations.js';

/**
 * `acceptSurfaceEntry` is a second implementation of the rule `SurfaceEntrySchema` states (one rule, two
 * implementations, for the speed of the receipt of 100,000 entries). These tests are what allows it: on
 * every input generated or listed here, it accepts exactly what the schema accepts, with a result equal
 * to the schema's (same keys in the same order, same prototype), and `checkSurfaceEntries` agrees with a
 * plain `SurfaceEntrySchema.safeParse` whichever path it took.
 */

/** The agreement every input must show; returns whether the schema accepted it. */
const assertAgrees = fastPathAgreement({
  schema: SurfaceEntrySchema,
  fast: acceptSurfaceEntry,
  check: checkSurfaceEntries,
});

const base = () => textEntry('/a/b.txt', 'hello');
const HEX = sha256Hex('x');

/** Strings that sit on the edges of the uri, digest and timestamp rules. */
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
  '/a\\b',
  '/../x',
  '//x',
  ' ',
  '\n',
];
const DIGESTS = [HEX, HEX.toUpperCase(), HEX.slice(1), `${HEX}0`, `${HEX.slice(1)}g`, `${HEX}\n`, '', null];
const TIMESTAMPS = [
  MODIFIED_AT,
  '2025-01-01T00:00:00Z',
  '2025-01-01T00:00:00.123456789Z',
  '2025-01-01T00:00:00.Z',
  '2025-01-01T00:00Z',
  '2025-01-01T00:00:00.000+00:00',
  '2025-01-01T00:00:00.000-05:00',
  '2025-01-01T00:00:00.000z',
  '2025-01-01t00:00:00.000Z',
  '2025-01-01 00:00:00.000Z',
  '2025-01-01T00:00:00.000',
  '2016-12-31T23:59:60Z',
  '2025-01-01T24:00:00Z',
  '2024-02-29T00:00:00Z',
  '2023-02-29T00:00:00Z',
  '2000-02-29T00:00:00Z',
  '1900-02-29T00:00:00Z',
  '2025-04-31T00:00:00Z',
  '+002025-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '2025-01-01T00:00:00.000Z\n',
  '２０２５-01-01T00:00:00Z',
  '',
];
const SIZES = [
  0,
  1,
  2,
  4,
  5,
  6,
  -0,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 1,
  NaN,
  Infinity,
];
const CONTENTS = ['', 'hello', 'é', '😀', 'a\0b', '\uD800', 'hel', null];

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
  sizeBytes: fc.oneof({ weight: 6, arbitrary: fc.constantFrom<unknown>(...SIZES) }, fc.nat(10), field),
  sha256: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(HEX, null) },
    { weight: 4, arbitrary: fc.constantFrom<unknown>(...DIGESTS) },
    field,
  ),
  modifiedAt: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(...TIMESTAMPS.slice(0, 3)) },
    { weight: 4, arbitrary: fc.constantFrom<unknown>(...TIMESTAMPS) },
    field,
  ),
  content: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom<unknown>(...CONTENTS) },
    fc.string({ unit: 'binary' }),
    field,
  ),
  contentTruncated: fc.oneof({ weight: 6, arbitrary: fc.boolean() }, field),
});

describe('acceptSurfaceEntry agrees with SurfaceEntrySchema', () => {
  it('on generated entries of edge values (accepting a fair share of them)', () => {
    assertAgreesOnGenerated(assertAgrees, entryArbitrary, (entry, sizeFromContent) =>
      // Half the time the size is the text's own UTF-8 length, so the size rule is met often enough for
      // every other rule to be reached.
      sizeFromContent && typeof entry.content === 'string'
        ? { ...entry, sizeBytes: Buffer.byteLength(entry.content) }
        : entry,
    );
  });

  it('on well-formed entries of any text, size and truncation', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ unit: 'binary' }),
        fc.boolean(),
        fc.nat(8),
        (name, content, truncated, extra) => {
          const sizeBytes = Buffer.byteLength(content) + (truncated ? extra : 0);
          assertAgrees({
            uri: `/${name}`,
            sizeBytes,
            sha256: truncated ? null : sha256Hex(content),
            modifiedAt: MODIFIED_AT,
            content,
            contentTruncated: truncated,
          });
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('on every edge value of each field, the others valid', () => {
    const edges: Record<string, readonly unknown[]> = {
      uri: URIS,
      sizeBytes: SIZES,
      sha256: DIGESTS,
      modifiedAt: TIMESTAMPS,
      content: CONTENTS,
      contentTruncated: [true, false, 0, 1, 'true', null],
    };
    let accepted = 0;
    for (const [key, values] of Object.entries(edges)) {
      for (const value of values) if (assertAgrees({ ...base(), [key]: value })) accepted++;
    }
    assert.ok(accepted >= 20, `accepted ${accepted}`);
  });

  it('on truncation and size rules: multi-byte text, a prefix longer than the file, digestless whole text', () => {
    const cases = [
      { ...base(), content: 'é', sizeBytes: 1 },
      { ...base(), content: 'é', sizeBytes: 2 },
      { ...base(), content: '😀', sizeBytes: 2 },
      { ...base(), content: '\uD800', sizeBytes: 3 },
      { ...base(), content: '\uD800', sizeBytes: 1 },
      { ...base(), sha256: null, content: 'hel', sizeBytes: 5, contentTruncated: true },
      { ...base(), sha256: null, content: 'hello!', sizeBytes: 5, contentTruncated: true },
      { ...base(), sha256: null, content: 'hello', sizeBytes: 5, contentTruncated: false },
      { ...base(), sha256: HEX, content: 'hel', sizeBytes: 5, contentTruncated: true },
      { ...base(), sha256: null, content: null, sizeBytes: 5, contentTruncated: true },
      { ...base(), sha256: null, content: null, sizeBytes: 5, contentTruncated: false },
      { ...base(), content: null, sizeBytes: 7 },
    ];
    assert.deepEqual(
      cases.map((value) => assertAgrees(value)),
      [false, true, false, true, false, true, false, false, true, false, true, true],
    );
  });

  it('on object shapes: extra, missing and __proto__ keys, prototypes, getters, symbols, arrays', () => {
    const withProto = JSON.parse(`{"__proto__":{"x":1},${JSON.stringify(base()).slice(1)}`);
    const inherited = Object.assign(Object.create(base()), {});
    const nullProto = Object.assign(Object.create(null), base());
    const enumerableInherited = Object.assign(Object.create({ extra: 1 }), base());
    let reads = 0;
    const getters = Object.defineProperty({ ...base() }, 'uri', {
      enumerable: true,
      get: () => {
        reads++;
        return '/a/b.txt';
      },
    });
    const hidden = Object.defineProperty({ ...base() }, 'content', { enumerable: false, value: 'hello' });
    const symbol = { ...base(), [Symbol('extra')]: 1 };
    class Entry {
      constructor(readonly uri: string) {}
    }
    const instance = Object.assign(new Entry('/a/b.txt'), base());
    const { content: _content, ...missing } = base();
    const answers = [
      withProto,
      inherited,
      nullProto,
      enumerableInherited,
      getters,
      hidden,
      symbol,
      instance,
      missing,
      { ...base(), extra: undefined },
      { ...base(), contentTruncated: undefined },
      Object.assign([], base()),
      structuredClone(base()),
      new Map(Object.entries(base())),
      'entry',
      null,
    ].map((value) => assertAgrees(value));
    assert.deepEqual(answers, [
      false, // a "__proto__" key is a key the schema does not know
      true, // every key inherited, none enumerable-extra: zod reads them, and so does the fast path
      true,
      false, // an enumerable inherited key is an unknown key to zod's for…in
      true,
      true,
      true, // symbols are not keys zod looks at; the result does not carry them
      true,
      false,
      false,
      false,
      false,
      true,
      false,
      false,
      false,
    ]);
    assert.ok(reads > 0);
    // The result is a plain object of data properties: no getter or symbol of the input survives.
    const fromGetters = acceptSurfaceEntry(getters) as object;
    assert.equal(typeof Object.getOwnPropertyDescriptor(fromGetters, 'uri')?.get, 'undefined');
    assert.deepEqual(Object.getOwnPropertySymbols(acceptSurfaceEntry(symbol) as object), []);
  });
});

describe('checked entry lists', () => {
  const entries = (uris: readonly string[]) => uris.map((uri) => textEntry(uri, uri));

  it('are frozen, and so are their entries: nothing can be added, swapped or edited after the check', () => {
    const list = checkSurfaceEntries(entries(['/a', '/b']));
    assert.ok(Object.isFrozen(list) && list.every((entry) => Object.isFrozen(entry)));
    assert.throws(() => list.push(textEntry('/c', 'c') as never), TypeError);
    assert.throws(() => {
      (list as unknown[])[0] = textEntry('/z', 'z');
    }, TypeError);
    assert.throws(() => {
      (list[0] as { content: string }).content = 'forged';
    }, TypeError);
  });

  it('merge sorted by uri, and the merged list is trusted as a whole', () => {
    const merged = mergeCheckedEntries([
      checkSurfaceEntries(entries(['/c', '/a'])),
      checkSurfaceEntries(entries(['/b'])),
      checkSurfaceEntries([]),
    ]);
    assert.deepEqual(
      merged.map((entry) => entry.uri),
      ['/a', '/b', '/c'],
    );
    const value = observationInput({ uri: '/**', match: 'glob', entries: [] });
    value.payload.entries = merged;
    const observation = checkObservationOfCheckedEntries(value);
    assert.equal(observation.payload.entries, merged, 'the checked list itself, not a copy checked again');
  });

  it('refuse to merge a list that checkSurfaceEntries did not build', () => {
    const checked = checkSurfaceEntries(entries(['/a']));
    for (const list of [[...checked], entries(['/b']), Object.freeze([...checked])]) {
      assert.throws(() => mergeCheckedEntries([checked, list as never]), TypeError);
    }
  });

  it('are the only lists an observation of checked entries takes: a copy or an edited list is refused', () => {
    const checked = checkSurfaceEntries(entries(['/a', '/b']));
    for (const list of [[...checked], Object.freeze([...checked]), [checked[0], textEntry('/b', 'forged')]]) {
      const value = observationInput({ uri: '/**', match: 'glob', entries: [] });
      value.payload.entries = list as never;
      assert.throws(
        () => checkObservationOfCheckedEntries(value),
        (error: unknown) => error instanceof InvalidRecordError && /payload\.entries/.test(error.message),
      );
    }
  });
});
