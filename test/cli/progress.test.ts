import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AttemptRecord } from '../../src/attacks/attempt-record.js';
import type { CliIo } from '../../src/cli/io.js';
import { progressReporter } from '../../src/cli/progress.js';

function io(errIsTTY: boolean): CliIo & { written: string[] } {
  const written: string[] = [];
  return {
    written,
    out: () => undefined,
    err: (text) => written.push(text),
    signal: new AbortController().signal,
    env: {},
    errIsTTY,
  };
}

const record = { attack: 'hook', attempt: 1, outcome: 'success' } as AttemptRecord;

describe('progressReporter', () => {
  it('redraws one bar on a terminal and ends it with a newline', () => {
    const terminal = io(true);
    const progress = progressReporter(terminal, 'c');
    progress.update({ completed: 1, total: 4, record });
    progress.update({ completed: 4, total: 4, record });
    progress.done();
    assert.deepEqual(terminal.written, [
      '\rc [######..................] 1/4 hook success\x1b[K',
      '\rc [########################] 4/4 hook success\x1b[K',
      '\n',
    ]);
  });

  it('prints one plain line per attempt otherwise', () => {
    const plain = io(false);
    const progress = progressReporter(plain, 'c');
    progress.update({ completed: 1, total: 2, record });
    progress.done();
    assert.deepEqual(plain.written, ['c: 1/2 hook #1 success\n']);
  });
});
