import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { describe, it } from 'node:test';
import { warmScoreParsing, warmUpScore } from '../../src/cli/score-warm-up.js';
import { contentWritten } from '../../src/models/condition.js';
import { expectation } from '../../src/models/expectation.js';
import { contains, regex } from '../../src/models/matcher.js';
import { surface } from '../../src/models/scorable.js';
import { ScoreSchema } from '../../src/models/score.js';
import { FileWriteScorer } from '../../src/scorers/file-write-scorer.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';

/**
 * `witness score` parses a sample score while it waits for the acquisition thread, so that zod has built
 * its internals before the real score comes (src/cli/score-warm-up.ts). The sample must stay a valid score
 * of the same shape as the real one: were it rejected, zod would stop early and the warm-up would stop
 * warming without anyone noticing.
 */
describe('the score warm-up', () => {
  const root = fs.mkdtempSync(`${os.tmpdir()}/witness-warm-up-`);
  const source = new LocalFileSurfaceSource({ root });

  it('parses as a score for an exact and for a glob location, with each kind of matcher', () => {
    for (const [scope, matcher] of [
      [surface('/a.txt'), contains('file')],
      [surface('/out/**/*.sh', 'glob'), regex('curl .*example')],
    ] as const) {
      const wanted = expectation([contentWritten(scope, matcher)], 'an objective');
      assert.equal(warmScoreParsing(scope, wanted, source.identifier()), true);
      const parsed = ScoreSchema.safeParse(warmUpScore(scope, wanted, source.identifier()));
      assert.deepEqual(parsed.error?.issues, undefined);
    }
  });

  it("has the real score's shape: the same keys, and the same keys in each part", async () => {
    fs.writeFileSync(`${root}/a.txt`, 'hello file');
    const scope = surface('/a.txt');
    const wanted = expectation([contentWritten(scope, contains('file'))]);
    const {
      scores: [real],
    } = await new FileWriteScorer({ source }).score({ scorable: scope, expectation: wanted });
    assert.ok(real !== undefined);
    const sample = warmUpScore(scope, wanted, source.identifier()) as Record<string, Record<string, unknown>>;
    const keys = (value: object | undefined) => Object.keys(value ?? {}).sort();
    assert.deepEqual(keys(sample), keys(real));
    assert.deepEqual(keys(sample.scorer), keys(real.scorer));
    assert.deepEqual(keys(sample.metadata), keys(real.metadata));
    assert.deepEqual(sample.scorer?.children, real.scorer.children);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
