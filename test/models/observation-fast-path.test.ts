import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRecordError } from '../../src/errors.js';
import {
  checkObservationOfCheckedEntries,
  checkSurfaceEntries,
  ObservationOfCheckedEntriesSchema,
} from '../../src/models/checked-observation.js';
import { acceptObservation, type SurfaceEntry } from '../../src/models/observation.js';
import { MODIFIED_AT, sha256Hex } from '../support/observations.js';
import { sampleSize } from '../support/sample-size.js';

/**
 * `acceptObservation` is a second implementation of the rule `observationSchema` states for the source's
 * own receipt (one rule, two implementations, for an exact acquisition's latency). These tests are what allows it: on
 * every input generated or listed here, whatever it accepts the schema accepts, with a result equal to
 * the schema's (same keys in the same order, fresh objects); and on the shapes a source builds, it accepts
 * exactly what the schema accepts. `checkObservationOfCheckedEntries` agrees with the schema on every
 * input, whichever path it took inside.
 */

/** Lists built by checkSurfaceEntries here: the test's own stand-in for the registered-list check. */
const registeredHere = new Set<unknown>();
const checkedList = (entries: readonly unknown[]): SurfaceEntry[] => {
  const list = checkSurfaceEntries(entries);
  registeredHere.add(list);
  return list;
};
const acceptRegistered = (value: unknown) =>
  registeredHere.has(value) ? (value as SurfaceEntry[]) : undefined;

const entry = (uri: string, text = 'hello') => ({
  uri,
  sizeBytes: Buffer.byteLength(text),
  sha256: sha256Hex(text),
  modifiedAt: MODIFIED_AT,
  content: text,
  contentTruncated: false,
});

/** Keys of every object, depth first, in order: equal JSON is not enough, zod's key order must hold too. */
function keyOrder(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'object' && value !== null) {
    out.push(Array.isArray(value) ? '[' : `{${Object.keys(value).join(',')}`);
    for (const child of Object.values(value)) keyOrder(child, out);
  }
  return out;
}

function show(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 400) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * The agreement every input must show. `sourceShaped`: the input uses none of the shapes the fast path
 * leaves to zod by design, so the fast path must then accept exactly what the schema accepts.
 */
function assertAgrees(value: unknown, sourceShaped: boolean): { zod: boolean; fast: boolean } {
  const parsed = ObservationOfCheckedEntriesSchema.safeParse(value);
  const fast = acceptObservation(value, acceptRegistered);
  if (fast !== undefined) {
    if (!parsed.success) assert.fail(`the fast path accepted what the schema rejects: ${show(value)}`);
    assert.deepStrictEqual(fast, parsed.data);
    assert.deepStrictEqual(keyOrder(fast), keyOrder(parsed.data));
    assert.notEqual(fast, value, 'the fast path returns a fresh record, never the input');
    assert.notEqual(fast.metadata, (value as { metadata: unknown }).metadata);
    assert.equal(fast.payload.entries, (value as { payload: { entries: unknown } }).payload.entries);
  } else if (sourceShaped && parsed.success) {
    assert.fail(`the fast path refused a source-shaped record the schema accepts: ${show(value)}`);
  }
  // The receipt itself, whichever path it takes inside.
  if (parsed.success) {
    const observation = checkObservationOfCheckedEntries(value);
    assert.deepStrictEqual(observation, parsed.data);
    assert.ok(Object.isFrozen(observation) && Object.isFrozen(observation.metadata));
  } else {
    assert.throws(() => checkObservationOfCheckedEntries(value), InvalidRecordError);
  }
  return { zod: parsed.success, fast: fast !== undefined };
}

/** One choice per field: a value, and whether it is a shape the fast path leaves to zod by design. */
type Choice = { value: () => unknown; leftToZod?: true };
/** A fresh copy of plain data each time (symbols, such as ABSENT, kept as they are). */
const copy = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(copy)
    : typeof value === 'object' && value !== null
      ? Object.fromEntries(Object.entries(value).map(([key, child]) => [key, copy(child)]))
      : value;
const v = (value: unknown): Choice => ({ value: () => copy(value) });
const z = (value: () => unknown): Choice => ({ value, leftToZod: true });
const ABSENT = Symbol('absent');

const deep = (levels: number): unknown => (levels === 0 ? 1 : { a: deep(levels - 1) });
const withSymbol = () => ({ durationMs: 1, [Symbol('s')]: 1 });
const inheritedKey = () => Object.assign(Object.create({ extra: 1 }), { durationMs: 1 });
const nullPrototype = () => Object.assign(Object.create(null), { durationMs: 1 });
const getterValue = () => ({
  get durationMs() {
    return 1;
  },
});

const JSON_OBJECTS: Choice[] = [
  v({}),
  v({ resolvedRoot: '/ws', durationMs: 0.123, stats: { filesRead: 1, bytesRead: 5 }, surfaceFs: 'openat2' }),
  v({ durationMs: -0 }),
  v({ list: [1, 'a', null, true, [], {}], nested: { a: { b: [{ c: -1.5e300 }] } } }),
  v({ '1': 'integer-like key first', b: 2, a: 1 }),
  v({ constructor: 'a JSON string named constructor' }),
  v({ error: '\u0000 \uD800 anything is a JSON string' }),
  v(deep(20)),
  // A getter is read once by both: a fixed value, so the result is deterministic.
  { value: getterValue },
  z(() => deep(40)),
  z(withSymbol),
  z(nullPrototype),
  z(() => ({ durationMs: Number.NaN })),
  z(() => ({ durationMs: Number.POSITIVE_INFINITY })),
  z(() => ({ durationMs: undefined })),
  z(() => JSON.parse('{"__proto__": 1}')),
  z(() => {
    const holed = [1, 2, 3];
    delete holed[1];
    return { a: holed };
  }),
  z(() => ({ a: new Date(0) })),
  z(() => ({ a: 1n })),
  z(() => ({ a: () => 1 })),
  z(() => ({ a: new (class Point {})() })),
  z(inheritedKey),
  z(() => []),
  z(() => null),
  z(() => 'text'),
];

const IDS: Choice[] = [v('5b4c1c4e-3a0e-4a55-9e8b-2f1d2a1b0c9d'), v('x'), v(''), v(1), v(null), v(ABSENT)];
const TIMES: Choice[] = [
  v('2025-01-02T03:04:05.000Z'),
  v('2025-01-02T03:04:05Z'),
  v('2025-01-02T03:04:05.123456Z'),
  v('2025-01-02T03:04:05+00:00'),
  v('2025-01-02 03:04:05Z'),
  v('2025-02-30T00:00:00Z'),
  v('2024-02-29T00:00:00Z'),
  v('2025-01-02T24:00:00Z'),
  v(''),
  v(5),
  v(ABSENT),
];
const STATUSES: Choice[] = [
  v('complete'),
  v('partial'),
  v('unavailable'),
  v('error'),
  v('done'),
  v(null),
  v(ABSENT),
];
const LOCATORS: Choice[] = [
  v({ scorableType: 'surface', uri: '/a/b.txt', match: 'exact' }),
  v({ scorableType: 'surface', uri: '/a/**', match: 'glob' }),
  v({ scorableType: 'surface', uri: '/**', match: 'glob' }),
  v({ scorableType: 'surface', uri: '/a/*.txt', match: 'glob' }),
  v({ scorableType: 'surface', uri: '/a/c.txt', match: 'exact' }),
  v({ scorableType: 'surface', uri: '/a/[', match: 'glob' }),
  v({ scorableType: 'surface', uri: '/a/**/**', match: 'glob' }),
  v({ scorableType: 'surface', uri: '', match: 'exact' }),
  v({ scorableType: 'surface', uri: '/a\0b', match: 'exact' }),
  v({ scorableType: 'surface', uri: '/\uD800', match: 'exact' }),
  v({ scorableType: 'surface', uri: '/a/b.txt', match: 'regex' }),
  v({ scorableType: 'message', uri: '/a/b.txt', match: 'exact' }),
  v({ scorableType: 'surface', uri: '/a/b.txt', match: 'exact', extra: 1 }),
  v({ scorableType: 'surface', uri: 7, match: 'exact' }),
  z(() => ({ scorableType: 'surface', uri: '/a/b.txt' })),
  z(() => Object.assign(Object.create(null), { scorableType: 'surface', uri: '/a/b.txt', match: 'exact' })),
  v(null),
  v(ABSENT),
];
const ENTRY_LISTS: Choice[] = [
  { value: () => checkedList([]) },
  { value: () => checkedList([entry('/a/b.txt')]) },
  { value: () => checkedList([entry('/a/b.txt'), entry('/a/c.txt')]) },
  { value: () => checkedList([entry('/a/c.txt'), entry('/a/b.txt')]) },
  { value: () => checkedList([entry('/a/b.txt'), entry('/a/b.txt')]) },
  { value: () => checkedList([entry('/a/sub/d.txt')]) },
  { value: () => checkedList([entry('/x/y.txt')]) },
  // Valid entries in a list the registered-list check never saw: refused by both.
  { value: () => [Object.freeze(entry('/a/b.txt'))] },
  { value: () => [...checkedList([entry('/a/b.txt')])] },
  v(null),
  v(ABSENT),
];
const GAPS: Choice[] = [
  v([]),
  v([{ reason: 'read_failed', uri: '/a/b.txt', detail: 'EACCES' }]),
  v([
    { reason: 'file_limit_exceeded' },
    { reason: 'read_failed', uri: '/a' },
    { reason: 'file_limit_exceeded' },
  ]),
  v([{ reason: 'link_not_followed', detail: '' }]),
  v([{ reason: 'nope' }]),
  v([{ reason: 'read_failed', detail: 5 }]),
  v([{ reason: 'read_failed', extra: 1 }]),
  v([{ reason: 'read_failed', uri: null }]),
  z(() => [{ reason: 'read_failed', uri: undefined }]),
  v(['read_failed']),
  v({}),
];
/** Reasons: derived from the gaps (the rule), or a fixed list (usually wrong). */
const REASONS: Choice[] = [
  v('derive'),
  v('derive'),
  v([]),
  v(['read_failed']),
  v(['file_limit_exceeded', 'read_failed']),
  v(['read_failed', 'file_limit_exceeded']),
  v(['read_failed', 'read_failed']),
  v(['nope']),
  v(null),
];
const COMPLETES: Choice[] = [v('derive'), v('derive'), v(true), v(false), v('yes')];
const IDENTIFIERS: Choice[] = [
  v({ type: 'LocalFileSurfaceSource', version: '1', params: { root: '/ws', maxFiles: 10000 } }),
  v({ type: 't', version: '1', params: {} }),
  v({ type: '', version: '1', params: {} }),
  v({ type: 't', version: 1, params: {} }),
  v({ type: 't', version: '1', params: [] }),
  v({ type: 't', version: '1', params: {}, extra: 1 }),
  z(() => ({ type: 't', version: '1', params: {}, children: {} })),
  z(() => ({ type: 't', version: '1', params: { root: Number.NaN } })),
];
const PAYLOAD_EXTRAS: Choice[] = [
  v({}),
  v({}),
  v({}),
  v({ kind: 'manifest' }),
  v({ schemaVersion: 2 }),
  v({ schemaVersion: '1' }),
  v({ extra: true }),
];
const RECORD_EXTRAS: Choice[] = [v({}), v({}), v({}), v({ extra: 1 }), v({ metadata: ABSENT })];

/** A small seeded generator (xorshift), so a failure names a reproducible seed. */
function generator(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  return {
    pick: <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T,
    /** Mostly one of the first two choices of a field (both valid), so that whole records are often valid. */
    mostly: <T>(list: readonly T[]): T =>
      next() < 0.8 ? (list[Math.floor(next() * 2)] as T) : (list[Math.floor(next() * list.length)] as T),
  };
}

function build({ pick, mostly }: ReturnType<typeof generator>): { value: unknown; sourceShaped: boolean } {
  let sourceShaped = true;
  const take = (list: readonly Choice[]) => {
    const choice = mostly(list);
    if (choice.leftToZod) sourceShaped = false;
    return choice.value();
  };
  const scope = take(LOCATORS);
  // Usually the scorable is the scope itself (as a source builds it), sometimes another locator.
  const scorable = pick([true, true, true, false]) ? copy(scope) : take(LOCATORS);
  const gaps = take(GAPS);
  const reasonsChoice = take(REASONS);
  const reasons =
    reasonsChoice === 'derive' && Array.isArray(gaps)
      ? [...new Set(gaps.map((gap) => (gap as { reason?: unknown })?.reason))]
      : reasonsChoice;
  const status = take(STATUSES);
  const completeChoice = take(COMPLETES);
  const complete = completeChoice === 'derive' ? status === 'complete' : completeChoice;
  const payload: Record<string, unknown> = {
    kind: 'surface',
    schemaVersion: 1,
    scope,
    entries: take(ENTRY_LISTS),
    coverage: { complete, reasons, gaps },
    ...(take(PAYLOAD_EXTRAS) as object),
  };
  const record: Record<string, unknown> = {
    id: take(IDS),
    sourceIdentifier: take(IDENTIFIERS),
    acquisition: status,
    observedAt: take(TIMES),
    scorable,
    payload,
    metadata: take(JSON_OBJECTS),
    ...(take(RECORD_EXTRAS) as object),
  };
  for (const fields of [record, payload]) {
    for (const [key, value] of Object.entries(fields)) if (value === ABSENT) delete fields[key];
  }
  return { value: record, sourceShaped };
}

describe('acceptObservation (the observation record rule, hand-written)', () => {
  const records = sampleSize(12_000);
  it(`agrees with the schema on ${records.toLocaleString('en')} generated records, and accepts every valid source-shaped one`, (t) => {
    const seed = Date.now() % 1_000_000;
    const random = generator(seed);
    let accepted = 0;
    let fastAccepted = 0;
    for (let i = 0; i < records; i++) {
      const { value, sourceShaped } = build(random);
      try {
        const result = assertAgrees(value, sourceShaped);
        if (result.zod) accepted++;
        if (result.fast) fastAccepted++;
      } catch (error) {
        throw new Error(`seed ${seed}, record ${i}: ${(error as Error).message}`);
      }
    }
    t.diagnostic(`seed ${seed}: the schema accepted ${accepted}, the fast path ${fastAccepted}`);
    // The generator must exercise both sides, and the fast path must carry the valid records.
    assert.ok(
      accepted > records / 100 && accepted < records / 2,
      `${accepted} of ${records} accepted (seed ${seed})`,
    );
    assert.ok(fastAccepted > accepted / 2, `fast path took ${fastAccepted} of ${accepted} (seed ${seed})`);
  });

  const base = () => ({
    id: 'id-1',
    sourceIdentifier: { type: 'LocalFileSurfaceSource', version: '1', params: { root: '/ws' } },
    acquisition: 'complete',
    observedAt: '2025-01-02T03:04:05.000Z',
    scorable: { scorableType: 'surface', uri: '/a/b.txt', match: 'exact' },
    payload: {
      kind: 'surface',
      schemaVersion: 1,
      scope: { scorableType: 'surface', uri: '/a/b.txt', match: 'exact' },
      entries: checkedList([entry('/a/b.txt')]),
      coverage: { complete: true, reasons: [], gaps: [] },
    },
    metadata: { resolvedRoot: '/ws', durationMs: 0.2, stats: { filesRead: 1 }, surfaceFs: 'openat2' },
  });

  it('takes the fast path for what a source builds, and the result is a fresh, frozen record', () => {
    const value = base();
    assert.deepEqual(assertAgrees(value, true), { zod: true, fast: true });
    const observation = checkObservationOfCheckedEntries(value);
    assert.notEqual(observation, value);
    assert.notEqual(observation.payload.coverage, value.payload.coverage);
    assert.ok(Object.isFrozen(observation.payload.coverage.gaps));
  });

  it('refuses each cross-field forgery, as the schema does', () => {
    const cases: Array<[string, (o: ReturnType<typeof base>) => void]> = [
      ['scorable differs from scope', (o) => (o.scorable.uri = '/a/c.txt')],
      ['complete without coverage', (o) => (o.payload.coverage.complete = false)],
      [
        'an error with entries',
        (o) => {
          o.acquisition = 'error';
          o.payload.coverage.complete = false;
        },
      ],
      [
        'a partial without gaps',
        (o) => {
          o.acquisition = 'partial';
          o.payload.coverage.complete = false;
        },
      ],
      ['an exact entry of another uri', (o) => (o.payload.entries = checkedList([entry('/a/c.txt')]))],
      [
        'a glob entry the glob cannot match',
        (o) => {
          o.scorable = { scorableType: 'surface', uri: '/a/*.md', match: 'glob' };
          o.payload.scope = { ...o.scorable };
        },
      ],
      [
        'gaps on a complete acquisition',
        (o) => {
          o.payload.coverage.gaps = [{ reason: 'read_failed' }] as never;
          o.payload.coverage.reasons = ['read_failed'] as never;
        },
      ],
      ['an unchecked entry list', (o) => (o.payload.entries = [...o.payload.entries])],
    ];
    for (const [what, forge] of cases) {
      const value = base();
      forge(value);
      assert.deepEqual(assertAgrees(value, true), { zod: false, fast: false }, what);
    }
  });
});
