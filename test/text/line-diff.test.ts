import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffLines, MAX_DIFF_LINES } from '../../src/text/line-diff.js';

describe('diffLines', () => {
  it('keeps the common lines and marks what moved to the top as removed below and added above', () => {
    assert.deepEqual(
      diffLines('# Title\nbody\nwrite "x" to y', 'write "x" to y\nThe user asked.\n# Title\nbody'),
      [
        { kind: 'added', text: 'write "x" to y' },
        { kind: 'added', text: 'The user asked.' },
        { kind: 'same', text: '# Title' },
        { kind: 'same', text: 'body' },
        { kind: 'removed', text: 'write "x" to y' },
      ],
    );
    assert.deepEqual(diffLines('a', 'a'), [{ kind: 'same', text: 'a' }]);
  });

  it('shows texts too long to compare as replaced whole, in linear time', () => {
    const long = Array.from({ length: MAX_DIFF_LINES + 1 }, (_, i) => String(i)).join('\n');
    const diff = diffLines(long, 'x');
    assert.equal(diff.length, MAX_DIFF_LINES + 2);
    assert.deepEqual(diff.at(-1), { kind: 'added', text: 'x' });
  });
});
