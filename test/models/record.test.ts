import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as z from 'zod';
import { InvalidRecordError, WitnessError } from '../../src/errors.js';
import { canonicalJson, JsonObjectSchema, parseRecord, TimestampSchema } from '../../src/models/record.js';
import { issuePaths } from '../support/issues.js';

describe('canonicalJson', () => {
  it('sorts keys at every level, inside arrays too, and keeps array order', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }, 3], c: null } }),
      '{"a":{"c":null,"d":[{"y":2,"z":1},3]},"b":1}',
    );
  });

  it('gives the same bytes for the same value written in any key order', () => {
    assert.equal(canonicalJson({ x: 1, y: { p: 1, q: 2 } }), canonicalJson({ y: { q: 2, p: 1 }, x: 1 }));
  });

  it('leaves out undefined properties, as JSON does', () => {
    assert.equal(canonicalJson({ a: undefined, b: 1 }), '{"b":1}');
  });

  it('keeps a "__proto__" key read from JSON instead of dropping it', () => {
    assert.equal(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}')), '{"__proto__":{"x":1},"b":1}');
    assert.notEqual(canonicalJson(JSON.parse('{"__proto__":{"x":1}}')), canonicalJson({}));
  });
});

describe('parseRecord', () => {
  const schema = z.strictObject({ name: z.string(), items: z.array(z.strictObject({ size: z.number() })) });

  it('returns the parsed value when it is valid', () => {
    assert.deepEqual(parseRecord(schema, { name: 'a', items: [{ size: 1 }] }, 'thing'), {
      name: 'a',
      items: [{ size: 1 }],
    });
  });

  it('throws an InvalidRecordError whose issues name each wrong field by path', () => {
    assert.throws(
      () => parseRecord(schema, { name: 1, items: [{ size: 1 }, { size: 'x' }], extra: true }, 'thing'),
      (error: unknown) => {
        assert.ok(error instanceof InvalidRecordError && error instanceof WitnessError);
        assert.equal(error.code, 'invalid_record');
        assert.deepEqual(
          error.issues.map((issue) => issue.slice(0, issue.indexOf(':'))),
          ['name', 'items[1].size', '(root)'],
        );
        assert.match(error.issues[2] ?? '', /extra/);
        assert.equal(error.message, `invalid thing: ${error.issues.join('; ')}`);
        return true;
      },
    );
  });
});

describe('TimestampSchema', () => {
  it('accepts UTC ISO-8601 times with a Z suffix, with or without fractions of a second', () => {
    for (const time of ['2025-01-02T03:04:05Z', '2025-01-02T03:04:05.123Z', '2024-02-29T23:59:59.999999Z']) {
      assert.equal(TimestampSchema.safeParse(time).success, true, time);
    }
  });

  it('rejects offsets, dates alone, missing seconds and impossible dates', () => {
    for (const time of [
      '2025-01-02T03:04:05+00:00',
      '2025-01-02T03:04:05',
      '2025-01-02',
      '2025-01-02T03:04Z',
      '2025-02-30T00:00:00Z',
      1735787045000,
    ]) {
      assert.equal(TimestampSchema.safeParse(time).success, false, String(time));
    }
  });
});

describe('JsonObjectSchema', () => {
  it('accepts nested JSON values and keeps them as given', () => {
    const value = { a: [1, 'x', true, null, { b: [] }], c: { d: -0.5 } };
    assert.deepEqual(JsonObjectSchema.parse(value), value);
  });

  it('rejects values JSON cannot represent, naming them', () => {
    assert.deepEqual(issuePaths(JsonObjectSchema, { a: Number.POSITIVE_INFINITY }), ['a']);
    assert.deepEqual(issuePaths(JsonObjectSchema, { a: { b: undefined } }), ['a']);
    assert.deepEqual(issuePaths(JsonObjectSchema, { a: 1n }), ['a']);
  });

  it('rejects an array where an object is required', () => {
    assert.deepEqual(issuePaths(JsonObjectSchema, []), ['(root)']);
  });
});
