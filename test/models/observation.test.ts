import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRecordError } from '../../src/errors.js';
import {
  checkObservation,
  checkObservationOfCheckedEntries,
  checkSurfaceEntries,
} from '../../src/models/checked-observation.js';
import {
  CoverageGapSchema,
  ObservationSchema,
  SurfaceCoverageSchema,
  SurfaceEntrySchema,
  SurfacePayloadSchema,
} from '../../src/models/observation.js';
import { parseRecord } from '../../src/models/record.js';
import { issuePaths } from '../support/issues.js';
import {
  binaryEntry,
  observation,
  observationInput,
  sha256Hex,
  textEntry,
  truncatedEntry,
} from '../support/observations.js';

const HEX = sha256Hex('x');

describe('SurfaceEntrySchema', () => {
  it('accepts a text entry read in full, a truncated one and a binary one', () => {
    for (const entry of [
      textEntry('/a', 'hello'),
      truncatedEntry('/a', 'hel', 5),
      binaryEntry('/a', Uint8Array.of(0xff)),
    ]) {
      assert.deepEqual(issuePaths(SurfaceEntrySchema, entry), []);
    }
  });

  it('accepts content truncated at maxContentBytes while every byte was hashed', () => {
    assert.deepEqual(
      issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'hello'), content: 'he', contentTruncated: true }),
      [],
    );
  });

  it('rejects a truncated entry without content, naming content', () => {
    assert.deepEqual(
      issuePaths(SurfaceEntrySchema, { ...binaryEntry('/a', Uint8Array.of(1)), contentTruncated: true }),
      ['content'],
    );
  });

  it('rejects content without a digest that is not marked truncated, naming contentTruncated', () => {
    assert.deepEqual(issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'x'), sha256: null }), [
      'contentTruncated',
    ]);
  });

  it('accepts an entry with neither digest nor content (bytes neither read in full nor text)', () => {
    assert.deepEqual(
      issuePaths(SurfaceEntrySchema, { ...binaryEntry('/a', Uint8Array.of(1)), sha256: null }),
      [],
    );
  });

  it('rejects a sha256 that is not 64 lowercase hex digits', () => {
    for (const sha256 of [HEX.toUpperCase(), HEX.slice(1), `${HEX}0`, '']) {
      assert.deepEqual(issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'x'), sha256 }), ['sha256']);
    }
  });

  it('rejects a negative, fractional or unsafe sizeBytes', () => {
    for (const sizeBytes of [-1, 1.5, 2 ** 53, '1']) {
      assert.deepEqual(issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'x'), sizeBytes }), ['sizeBytes']);
    }
  });

  it('rejects a modifiedAt that is not a UTC ISO-8601 time', () => {
    for (const modifiedAt of ['2025-01-01T00:00:00+01:00', '2025-01-01', '2025-01-01T00:00Z', 'yesterday']) {
      assert.deepEqual(issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'x'), modifiedAt }), [
        'modifiedAt',
      ]);
    }
  });

  it('rejects an empty uri, a missing field and an unknown key', () => {
    assert.deepEqual(issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'x'), uri: '' }), ['uri']);
    const { contentTruncated: _, ...missing } = textEntry('/a', 'x');
    assert.deepEqual(issuePaths(SurfaceEntrySchema, missing), ['contentTruncated']);
    assert.deepEqual(issuePaths(SurfaceEntrySchema, { ...textEntry('/a', 'x'), mode: 0o644 }), ['mode']);
  });
});

describe('SurfaceCoverageSchema', () => {
  it('rejects duplicated reasons, naming reasons', () => {
    const gaps = [
      { reason: 'read_failed', uri: '/a' },
      { reason: 'read_failed', uri: '/b' },
    ];
    assert.deepEqual(issuePaths(SurfaceCoverageSchema, { complete: false, reasons: [], gaps }), ['reasons']);
    assert.deepEqual(
      issuePaths(SurfaceCoverageSchema, { complete: false, reasons: ['read_failed', 'read_failed'], gaps }),
      ['reasons'],
    );
    assert.deepEqual(
      issuePaths(SurfaceCoverageSchema, { complete: false, reasons: ['read_failed'], gaps }),
      [],
    );
  });

  it('rejects reasons out of first-seen order or naming a gap that is not there', () => {
    const gaps = [{ reason: 'not_a_file', uri: '/a' }, { reason: 'dangling_link' }];
    assert.deepEqual(
      issuePaths(SurfaceCoverageSchema, { complete: false, reasons: ['dangling_link', 'not_a_file'], gaps }),
      ['reasons'],
    );
    assert.deepEqual(
      issuePaths(SurfaceCoverageSchema, {
        complete: false,
        reasons: ['not_a_file', 'dangling_link', 'read_failed'],
        gaps,
      }),
      ['reasons'],
    );
  });

  it('rejects complete coverage that has gaps, naming complete', () => {
    assert.deepEqual(
      issuePaths(SurfaceCoverageSchema, {
        complete: true,
        reasons: ['read_failed'],
        gaps: [{ reason: 'read_failed' }],
      }),
      ['complete'],
    );
  });

  it('rejects an unknown key', () => {
    assert.deepEqual(issuePaths(SurfaceCoverageSchema, { complete: true, reasons: [], gaps: [], ratio: 1 }), [
      'ratio',
    ]);
  });

  it('rejects a reason outside the closed gap vocabulary', () => {
    assert.deepEqual(issuePaths(CoverageGapSchema, { reason: 'permission_denied' }), ['reason']);
    assert.deepEqual(issuePaths(CoverageGapSchema, { reason: 'read_failed', errno: 13 }), ['errno']);
  });
});

describe('SurfacePayloadSchema', () => {
  const payloadOf = (options: Parameters<typeof observationInput>[0]) => observationInput(options).payload;

  it('rejects schemaVersion other than the number 1', () => {
    for (const schemaVersion of ['1', 2, undefined]) {
      assert.deepEqual(issuePaths(SurfacePayloadSchema, { ...payloadOf({}), schemaVersion }), [
        'schemaVersion',
      ]);
    }
  });

  it('rejects duplicated entry uris, naming the entry', () => {
    const entries = [textEntry('/d/a', 'x'), textEntry('/d/a', 'x')];
    assert.deepEqual(issuePaths(SurfacePayloadSchema, payloadOf({ uri: '/d/*', match: 'glob', entries })), [
      'entries[1].uri',
    ]);
  });

  it('rejects entries not sorted by uri, naming the entry', () => {
    const entries = [textEntry('/d/b', 'x'), textEntry('/d/a', 'x'), textEntry('/d/c', 'x')];
    assert.deepEqual(issuePaths(SurfacePayloadSchema, payloadOf({ uri: '/d/*', match: 'glob', entries })), [
      'entries[1].uri',
    ]);
  });

  it("rejects an exact scope's entry that carries another uri", () => {
    assert.deepEqual(
      issuePaths(SurfacePayloadSchema, payloadOf({ uri: '/d/a', entries: [textEntry('/d/b', 'x')] })),
      ['entries[0].uri'],
    );
  });

  it('rejects an unknown payload kind and an unknown key', () => {
    assert.deepEqual(issuePaths(SurfacePayloadSchema, { ...payloadOf({}), kind: 'network' }), ['kind']);
    assert.deepEqual(issuePaths(SurfacePayloadSchema, { ...payloadOf({}), root: '/ws' }), ['root']);
  });
});

describe('ObservationSchema', () => {
  it('accepts each acquisition with consistent coverage', () => {
    const valid = [
      observationInput({ entries: [textEntry('/data/out.txt', 'x')] }),
      observationInput({ acquisition: 'partial', gaps: [{ reason: 'read_failed', uri: '/data/out.txt' }] }),
      observationInput({ acquisition: 'unavailable', gaps: [{ reason: 'surface_root_unavailable' }] }),
      observationInput({ acquisition: 'error' }),
    ];
    for (const input of valid) assert.deepEqual(issuePaths(ObservationSchema, input), []);
  });

  it('rejects a scorable that differs from payload.scope, naming scorable', () => {
    const input = observationInput({});
    assert.deepEqual(
      issuePaths(ObservationSchema, { ...input, scorable: { ...input.scorable, uri: '/other' } }),
      ['scorable'],
    );
    assert.deepEqual(
      issuePaths(ObservationSchema, { ...input, scorable: { ...input.scorable, match: 'glob' } }),
      ['scorable'],
    );
  });

  it('rejects a complete acquisition over incomplete coverage, naming acquisition', () => {
    const input = observationInput({ acquisition: 'partial', gaps: [{ reason: 'read_failed' }] });
    assert.deepEqual(issuePaths(ObservationSchema, { ...input, acquisition: 'complete' }), ['acquisition']);
  });

  it('rejects a partial acquisition over complete coverage, naming acquisition', () => {
    const input = observationInput({});
    assert.deepEqual(issuePaths(ObservationSchema, { ...input, acquisition: 'partial' }), [
      'acquisition',
      'payload.coverage.gaps',
    ]);
  });

  it('rejects a partial acquisition that names no gap', () => {
    const input = observationInput({ acquisition: 'partial' });
    assert.deepEqual(issuePaths(ObservationSchema, input), ['payload.coverage.gaps']);
  });

  for (const acquisition of ['unavailable', 'error'] as const) {
    it(`rejects entries in an ${acquisition} acquisition, naming payload.entries`, () => {
      const input = observationInput({ acquisition, entries: [textEntry('/data/out.txt', 'x')] });
      assert.deepEqual(issuePaths(ObservationSchema, input), ['payload.entries']);
    });
  }

  it('rejects an observedAt with an offset, an unknown acquisition and an unknown key', () => {
    const input = observationInput({});
    assert.deepEqual(issuePaths(ObservationSchema, { ...input, observedAt: '2025-01-02T04:04:05+01:00' }), [
      'observedAt',
    ]);
    assert.deepEqual(issuePaths(ObservationSchema, { ...input, acquisition: 'timeout' }), ['acquisition']);
    assert.deepEqual(issuePaths(ObservationSchema, { ...input, attempt: 3 }), ['attempt']);
  });

  it('rejects metadata that is not JSON', () => {
    const input = observationInput({});
    assert.deepEqual(issuePaths(ObservationSchema, { ...input, metadata: { at: new Date(0) } }), [
      'metadata.at',
    ]);
  });

  it('reports invalid input through parseRecord as an InvalidRecordError naming each field', () => {
    const input = observationInput({ acquisition: 'error', entries: [textEntry('/data/out.txt', 'x')] });
    assert.throws(
      () => parseRecord(ObservationSchema, input, 'observation'),
      (error: unknown) =>
        error instanceof InvalidRecordError &&
        error.code === 'invalid_record' &&
        error.issues.length === 1 &&
        /^payload\.entries: an error acquisition carries no entries$/.test(error.issues[0] ?? '') &&
        error.message === `invalid observation: ${error.issues[0]}`,
    );
  });

  it('round-trips built observations byte for byte', () => {
    const built = [
      observation({ entries: [textEntry('/data/out.txt', 'héllo\n\u0000')] }),
      observation({
        uri: '/d/**',
        match: 'glob',
        acquisition: 'partial',
        entries: [binaryEntry('/d/a.bin', Uint8Array.of(0xff, 0xfe)), truncatedEntry('/d/b.txt', 'pre', 1e6)],
        gaps: [
          { reason: 'link_not_followed', uri: '/d/link' },
          { reason: 'read_limit_exceeded', uri: '/d/b.txt', detail: 'read 16000000 bytes' },
        ],
      }),
      observation({ acquisition: 'unavailable', gaps: [{ reason: 'surface_root_unavailable' }] }),
    ];
    for (const record of built) {
      const json = JSON.stringify(record);
      assert.equal(JSON.stringify(ObservationSchema.parse(JSON.parse(json))), json);
    }
  });

  it('round-trips JSON whose optional scope match was omitted into the canonical form', () => {
    const input = observationInput({});
    const { match: _a, ...scorable } = input.scorable;
    const { match: _b, ...scope } = input.payload.scope;
    const parsed = ObservationSchema.parse({ ...input, scorable, payload: { ...input.payload, scope } });
    assert.equal(JSON.stringify(parsed), JSON.stringify(observation({})));
  });
});

describe('checkSurfaceEntries and checkObservationOfCheckedEntries', () => {
  const input = () =>
    observationInput({
      uri: '/**',
      match: 'glob',
      entries: [textEntry('/a', 'a'), textEntry('/b', 'b')],
    });

  it('gives the same frozen observation as checkObservation', () => {
    const value = input();
    value.payload.entries = checkSurfaceEntries(value.payload.entries);
    const checked = checkObservationOfCheckedEntries(value);
    assert.deepEqual(checked, checkObservation(input()));
    assert.ok(Object.isFrozen(checked) && Object.isFrozen(checked.payload.entries));
    assert.ok(checked.payload.entries.every((entry) => Object.isFrozen(entry)));
    assert.equal(checkObservation(checked), checked, 'remembered as checked');
  });

  it('rejects an invalid entry in a batch, naming it', () => {
    assert.throws(
      () => checkSurfaceEntries([textEntry('/a', 'a'), { ...textEntry('/b', 'b'), sha256: 'nope' }]),
      (error: unknown) => error instanceof InvalidRecordError && /observation entry/.test(error.message),
    );
  });

  it('never trusts an entry that checkSurfaceEntries did not check', () => {
    const value = input();
    value.payload.entries = [checkSurfaceEntries([textEntry('/a', 'a')])[0], textEntry('/b', 'b')] as never;
    assert.throws(() => checkObservationOfCheckedEntries(value), InvalidRecordError);
  });

  it('still checks the invariants across entries: sorted and unique uris', () => {
    for (const uris of [
      ['/b', '/a'],
      ['/a', '/a'],
    ]) {
      const value = input();
      value.payload.entries = checkSurfaceEntries(uris.map((uri) => textEntry(uri, 'x')));
      assert.throws(
        () => checkObservationOfCheckedEntries(value),
        (error: unknown) =>
          error instanceof InvalidRecordError && /payload\.entries\[1\]\.uri/.test(error.message),
      );
    }
  });
});
