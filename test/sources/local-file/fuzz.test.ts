import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { InvalidLocatorError, InvalidMatcherError, InvalidRecordError } from '../../../src/errors.js';
import { type ContentWritten, contentWritten } from '../../../src/models/condition.js';
import { parseLocator } from '../../../src/models/locator.js';
import { contains, equals, type Matcher, regex } from '../../../src/models/matcher.js';
import { type Observation, ObservationSchema } from '../../../src/models/observation.js';
import { parseRecord } from '../../../src/models/record.js';
import type { MatchKind } from '../../../src/models/vocabulary.js';
import type { AcquireResult } from '../../../src/sources/local-file/acquire-sync.js';
import { judgeContentWritten } from '../../../src/verdicts/content-written.js';
import { globSegmentRegex } from '../../support/glob-regex-oracle.js';
import { sampleSize } from '../../support/sample-size.js';
import { assertResultInvariants, DEFAULTS, SECRET } from '../support/acquisition-invariants.js';
import { describeRandomTreeFuzz } from '../support/random-tree-fuzz.js';
import { recordingFs } from '../support/recording-fs.js';
import { describeEachSurfaceFs } from '../support/surface-fs-variants.js';
import { acquireDirect, buildTree, removeDir, tempDir } from '../support/trees.js';

/**
 * Bad-input fuzzing (issue 3) with fast-check: locators, matcher options and observation JSON never crash
 * Witness or change a verdict silently, and acquisitions of random small trees stay within their budgets.
 * Seeds are printed by fast-check on failure; rerun one with `fc.assert(..., { seed, path })`.
 * `npm test` checks an eighth of each sample; fuzz.full-samples.heavy.test.ts the whole.
 */

describe('fuzz: glob segments', () => {
  const raw = fc.constantFrom('a', 'b', '-', '*', '?', '[', ']', '!', '^', '{', '}', ',', 'é', '😀', '.');
  const token = fc.constantFrom(
    '[a-c]',
    '[!ab]',
    '[^-]',
    '[]a]',
    '[!]b]',
    '[a-]',
    '[-b]',
    '[😀-😂]',
    '[é]',
    '{a,b}',
    '{a,{b,}}',
    '{,x}',
    '{[ab],*}',
    '**',
    'ab',
  );
  const syntax = fc.oneof(raw, token);
  const nameChars = fc.constantFrom(
    'a',
    'b',
    '-',
    ']',
    '!',
    '^',
    ',',
    '{',
    '}',
    'é',
    '😀',
    '.',
    '[',
    '*',
    '?',
  );

  it('the linear-time matcher agrees with a RegExp translation on validity and on every name', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: syntax, minLength: 1, maxLength: 10 }),
        fc.array(fc.string({ unit: nameChars, maxLength: 8 }), { maxLength: 12 }),
        (segment, names) => {
          const oracle = globSegmentRegex(segment);
          let parsed: ReturnType<typeof parseLocator>;
          try {
            parsed = parseLocator(`/${segment}`, 'glob');
          } catch (error) {
            assert.ok(error instanceof InvalidLocatorError, String(error));
            // Refusals of the segment's glob syntax (not of a "." segment or a leading "!" negation).
            if (/unterminated|extended glob|invalid segment/.test(error.message)) {
              assert.equal(
                oracle,
                null,
                `${segment} is refused by the parser, not by the RegExp translation`,
              );
            }
            return;
          }
          const compiled = parsed.glob?.[0];
          if (compiled?.kind !== 'pattern') return;
          assert.notEqual(
            oracle,
            null,
            `${segment} is accepted by the parser, not by the RegExp translation`,
          );
          for (const name of names) {
            assert.equal(
              compiled.matcher.matches(name),
              oracle?.test(name),
              `${segment} vs ${JSON.stringify(name)}`,
            );
          }
        },
      ),
      { numRuns: sampleSize(3_000) },
    );
  });
});

describeEachSurfaceFs('fuzz: locators', (variant) => {
  let base: string;
  let root: string;
  before(() => {
    base = tempDir();
    root = path.join(base, 'ws');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(base, 'secret.txt'), SECRET);
    buildTree(root, {
      a: { dir: { 'b.txt': 'b', 'c.md': 'c', d: { dir: { 'e.txt': 'e' } } } },
      'f.txt': 'f',
      up: { symlink: '../secret.txt' },
      '[x]': 'bracket name',
      '{y}': 'brace name',
    });
  });
  after(() => removeDir(base));

  const uriChars = fc.constantFrom(
    '/',
    '/',
    'a',
    'b',
    '.',
    '..',
    '*',
    '**',
    '?',
    '[',
    ']',
    '{',
    '}',
    ',',
    '!',
    '\\',
    '\0',
    'f.txt',
    'up',
    'x',
    'y',
    '(',
    '@',
  );

  it('a locator is rejected with a typed error before any I/O, or acquired within its budgets', () => {
    fc.assert(
      fc.property(
        fc.array(uriChars, { maxLength: 10 }).map((parts) => parts.join('')),
        fc.constantFrom<MatchKind>('exact', 'glob'),
        (uri, match) => {
          const { fs: seam, recording } = recordingFs({}, variant.fs);
          let result: AcquireResult;
          try {
            result = acquireDirect(root, uri, match, {}, seam);
          } catch (error) {
            assert.ok(error instanceof InvalidLocatorError, `${JSON.stringify(uri)}: ${String(error)}`);
            assert.deepEqual(recording.calls, []);
            return;
          }
          assertResultInvariants(result, uri, match, DEFAULTS);
          for (const name of recording.listedNames) assert.ok(name.startsWith(`${root}/`), name);
        },
      ),
      { numRuns: sampleSize(400) },
    );
  });
});

describe('fuzz: matcher options', () => {
  const junk = fc.oneof(
    fc.boolean(),
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ maxLength: 3 }),
    fc.integer(),
  );
  it('a matcher is built or refused with InvalidMatcherError, and judging with it never throws', () => {
    const observation = parseRecord(ObservationSchema, sampleObservation(), 'observation');
    fc.assert(
      fc.property(
        fc.constantFrom(contains, equals, regex),
        fc.oneof(
          fc.string({ maxLength: 12 }),
          fc.constantFrom('(', '[a-', '\\', '(?<n>x)', 'a{2,1}', '\\p{L}', '*', ''),
        ),
        fc.record({ caseSensitive: junk, ignoreWhitespace: junk }, { requiredKeys: [] }),
        (build, value, options) => {
          let matcher: Matcher;
          try {
            matcher = build(value, options as { caseSensitive?: boolean; ignoreWhitespace?: boolean });
          } catch (error) {
            assert.ok(error instanceof InvalidMatcherError, String(error));
            return;
          }
          const condition = contentWritten(
            { scorableType: 'surface', uri: '/notes/*.txt', match: 'glob' },
            matcher,
          );
          const judgement = judgeContentWritten(observation, condition, { regexTimeoutMs: 200 });
          assert.ok(['complete', 'undetermined'].includes(judgement.status));
          assert.equal(judgement.value === null, judgement.status === 'undetermined');
        },
      ),
      { numRuns: sampleSize(300) },
    );
  });
});

/** A partial glob observation with a text entry, a truncated one, a binary one and a gap. */
function sampleObservation(): Observation {
  return {
    id: '00000000-0000-4000-8000-000000000000',
    sourceIdentifier: { type: 'LocalFileSurfaceSource', version: '1', params: { root: '/ws', maxFiles: 3 } },
    acquisition: 'partial',
    observedAt: '2025-01-02T03:04:05.000Z',
    scorable: { scorableType: 'surface', uri: '/notes/*.txt', match: 'glob' },
    payload: {
      kind: 'surface',
      schemaVersion: 1,
      scope: { scorableType: 'surface', uri: '/notes/*.txt', match: 'glob' },
      entries: [
        {
          uri: '/notes/a.txt',
          sizeBytes: 5,
          sha256: 'a'.repeat(64),
          modifiedAt: '2025-01-01T00:00:00.000Z',
          content: 'hello',
          contentTruncated: false,
        },
        {
          uri: '/notes/b.txt',
          sizeBytes: 50,
          sha256: null,
          modifiedAt: '2025-01-01T00:00:00.000Z',
          content: 'pwned by',
          contentTruncated: true,
        },
        {
          uri: '/notes/c.txt',
          sizeBytes: 3,
          sha256: 'b'.repeat(64),
          modifiedAt: '2025-01-01T00:00:00.000Z',
          content: null,
          contentTruncated: false,
        },
      ],
      coverage: {
        complete: false,
        reasons: ['read_limit_exceeded'],
        gaps: [{ reason: 'read_limit_exceeded', uri: '/notes/b.txt', detail: 'read 8 of 50 bytes' }],
      },
    },
    metadata: { durationMs: 1.5, stats: { filesRead: 3 } },
  };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every path (list of keys) into a JSON value, the root included. */
function pathsOf(value: Json, prefix: (string | number)[] = []): (string | number)[][] {
  const out = [prefix];
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) out.push(...pathsOf(item, [...prefix, i]));
  } else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value)) out.push(...pathsOf(item, [...prefix, key]));
  return out;
}

type Mutation =
  | { kind: 'replace'; value: Json }
  | { kind: 'delete' }
  | { kind: 'add'; key: string; value: Json }
  | { kind: 'stringify' }
  | { kind: 'duplicate' };

function mutate(original: Json, at: (string | number)[], mutation: Mutation): Json {
  const copy = structuredClone(original);
  if (at.length === 0) return mutation.kind === 'replace' ? mutation.value : copy;
  const parent = at
    .slice(0, -1)
    .reduce<Json>((node, key) => (node as Record<string, Json>)[key as string] as Json, copy) as
    | Record<string, Json>
    | Json[];
  const key = at[at.length - 1] as string & number;
  const current = (parent as Record<string, Json>)[key] as Json;
  switch (mutation.kind) {
    case 'replace':
      (parent as Record<string, Json>)[key] = mutation.value;
      break;
    case 'delete':
      if (Array.isArray(parent)) parent.splice(key, 1);
      else delete parent[key];
      break;
    case 'add':
      if (current !== null && typeof current === 'object' && !Array.isArray(current))
        current[mutation.key] = mutation.value;
      break;
    case 'stringify':
      (parent as Record<string, Json>)[key] = JSON.stringify(current) ?? 'undefined';
      break;
    case 'duplicate':
      if (Array.isArray(current) && current.length > 0) current.push(structuredClone(current[0]) as Json);
      break;
  }
  return copy;
}

describe('fuzz: observation JSON', () => {
  it('a mutated observation is accepted unchanged or rejected with InvalidRecordError, never judged differently in silence', () => {
    const original = sampleObservation() as unknown as Json;
    const paths = pathsOf(original);
    const conditions: ContentWritten[] = [
      contentWritten({ scorableType: 'surface', uri: '/notes/*.txt', match: 'glob' }),
      contentWritten({ scorableType: 'surface', uri: '/notes/*.txt', match: 'glob' }, contains('pwned')),
      contentWritten({ scorableType: 'surface', uri: '/notes/*.txt', match: 'glob' }, equals('hello')),
    ];
    const verdicts = (observation: Observation) =>
      conditions.map((condition) => {
        const judgement = judgeContentWritten(observation, condition);
        return `${judgement.status}:${judgement.value}`;
      });
    const originalVerdicts = verdicts(parseRecord(ObservationSchema, original, 'observation'));
    const mutation: fc.Arbitrary<Mutation> = fc.oneof(
      fc.record({
        kind: fc.constant('replace' as const),
        value: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
      }),
      fc.record({
        kind: fc.constant('replace' as const),
        value: fc.constantFrom<Json>(
          '1',
          1,
          0,
          -1,
          1.5,
          '',
          null,
          true,
          'complete',
          'glob',
          'exact',
          '/notes/a.txt',
          [],
          {},
        ),
      }),
      fc.constant({ kind: 'delete' as const }),
      fc.record({
        kind: fc.constant('add' as const),
        key: fc.constantFrom('extra', '__proto__', 'constructor', 'uri'),
        value: fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json>,
      }),
      fc.constant({ kind: 'stringify' as const }),
      fc.constant({ kind: 'duplicate' as const }),
    );
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(fc.constantFrom(...paths), mutation, (at, change) => {
        const mutated = mutate(original, at, change);
        let parsed: Observation;
        try {
          parsed = parseRecord(ObservationSchema, JSON.parse(JSON.stringify(mutated)), 'observation');
        } catch (error) {
          assert.ok(error instanceof InvalidRecordError, String(error));
          rejected++;
          return;
        }
        accepted++;
        const wire = JSON.stringify(mutated);
        assert.equal(JSON.stringify(parsed), wire, 'accepted, but not unchanged');
        // A verdict may only change when the evidence the verdict rests on changed, visibly.
        const now = verdicts(parsed);
        if (JSON.stringify(now) !== JSON.stringify(originalVerdicts)) {
          const before = original as { payload: Json; acquisition: Json };
          assert.ok(
            JSON.stringify(parsed.payload) !== JSON.stringify(before.payload) ||
              parsed.acquisition !== before.acquisition,
            `verdict changed from ${originalVerdicts} to ${now} with the same evidence`,
          );
        }
      }),
      { numRuns: sampleSize(2_000) },
    );
    assert.ok(accepted > 0 && rejected > 0, `accepted ${accepted}, rejected ${rejected}`);
  });
});

// Random small trees, a sample here; the full 150 runs per seam: fuzz-trees.heavy.test.ts.
describeRandomTreeFuzz({ numRuns: 15 });
