import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { z } from 'zod';
import { InvalidRecordError } from '../../src/errors.js';
import { sampleSize } from './sample-size.js';

/**
 * The agreement a hand-written fast path must show with the schema whose rule it implements again (ONE
 * RULE, TWO IMPLEMENTATIONS: `acceptSurfaceEntry`, `acceptManifestEntry`): on every input it accepts exactly
 * what the schema accepts, with a result equal to the schema's (same keys in the same order, same
 * prototype, a fresh object), and the receipt (`check`, which takes whichever path it likes inside) agrees
 * with a plain `safeParse`. The returned function asserts that for one input and says whether the schema
 * accepted it.
 */
export function fastPathAgreement<T>(options: {
  schema: z.ZodType<T>;
  fast: (value: unknown) => T | undefined;
  check: (values: readonly unknown[]) => readonly T[];
}): (value: unknown) => boolean {
  const { schema, fast: accept, check } = options;
  return (value) => {
    const parsed = schema.safeParse(value);
    const fast = accept(value);
    if (parsed.success) {
      if (fast === undefined) assert.fail(`the schema accepts what the fast path refused: ${show(value)}`);
      assert.deepStrictEqual(fast, parsed.data);
      assert.deepStrictEqual(Object.keys(fast as object), Object.keys(parsed.data as object));
      assert.equal(Object.getPrototypeOf(fast), Object.getPrototypeOf(parsed.data));
      assert.notEqual(fast, value, 'the fast path returns a fresh object, never the input');
      const [entry] = check([value]);
      assert.deepStrictEqual(entry, parsed.data);
      assert.ok(Object.isFrozen(entry));
    } else {
      if (fast !== undefined) assert.fail(`the fast path accepted what the schema rejects: ${show(value)}`);
      assert.throws(() => check([value]), InvalidRecordError);
    }
    return parsed.success;
  };
}

/** A short printable form of an input for a failure message (bigints and long strings included). */
export function show(value: unknown): string {
  try {
    return JSON.stringify(value, (_key, v) =>
      typeof v === 'bigint' ? `${v}n` : typeof v === 'string' && v.length > 80 ? `${v.slice(0, 80)}…` : v,
    );
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * Runs `agrees` on 20,000 generated inputs (an eighth in `npm test`: support/sample-size.ts), each `arbitrary`'s value passed through `shape` with a coin
 * flip (so a rule across fields can be met half the time, and every rule on one field is reached), and
 * requires both answers many times: agreement that only ever accepts, or only ever rejects, proves nothing.
 */
export function assertAgreesOnGenerated<T>(
  agrees: (value: unknown) => boolean,
  arbitrary: fc.Arbitrary<T>,
  shape: (value: T, coin: boolean) => unknown,
): void {
  let accepted = 0;
  let total = 0;
  fc.assert(
    fc.property(arbitrary, fc.boolean(), (value, coin) => {
      total++;
      if (agrees(shape(value, coin))) accepted++;
    }),
    { numRuns: sampleSize(20_000) },
  );
  assert.ok(accepted > total / 50, `accepted ${accepted} of ${total}`);
  assert.ok(total - accepted > total / 2, `rejected ${total - accepted} of ${total}`);
}
