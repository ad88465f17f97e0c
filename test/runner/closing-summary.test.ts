import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

/**
 * The test runner's closing summary (test-support/closing-summary.mjs, summary-reporter.mjs): skips
 * counted by reason, strict mode, and the check that the tests left the checkout as it was.
 */

interface Results {
  passed: number;
  failed: number;
  skipped: Record<string, number>;
}
interface CheckoutState {
  entries?: Map<string, string>;
  unavailable?: string;
}
interface ClosingSummary {
  checkoutState(root: string): CheckoutState;
  checkoutWrites(before: CheckoutState, after: CheckoutState): string[];
  closingSummary(
    results: Results,
    options: { strict: boolean; writes: string[]; checkoutUnavailable?: string | undefined },
  ): { text: string; failed: number };
}
type Reporter = (source: AsyncIterable<unknown>) => AsyncGenerator<string>;

const support = (file: string) => pathToFileURL(path.resolve('test-support', file)).href;
const { checkoutState, checkoutWrites, closingSummary } = (await import(
  support('closing-summary.mjs')
)) as ClosingSummary;
const { default: summaryReporter } = (await import(support('summary-reporter.mjs'))) as { default: Reporter };

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'witness-summary-'));
  dirs.push(dir);
  return dir;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd, stdio: 'pipe' });

describe('the checkout check', () => {
  it('names what the tests wrote: a new ignored file, a new untracked one, a file in an untracked directory', () => {
    const root = tempDir();
    git(root, 'init', '-q');
    writeFileSync(path.join(root, '.gitignore'), '*.db\ndist/\n');
    writeFileSync(path.join(root, 'package-lock.json'), '{}\n');
    git(root, 'add', '-A');
    git(root, 'commit', '-qm', 'first');
    execFileSync('mkdir', ['-p', path.join(root, 'dist'), path.join(root, 'notes')]);
    writeFileSync(path.join(root, 'notes', 'mine.txt'), 'the developer’s own, before the run');
    writeFileSync(path.join(root, 'kept.db'), 'there before the run');
    const before = checkoutState(root);
    assert.equal(before.unavailable, undefined);

    // What a careless test does: the default memory in the cwd, a report beside it. The build output
    // (dist/) is not the tests' to keep clean, and an edit to a tracked file is the developer's, made
    // while the suite runs (.ci/run checks its copy's git status for those).
    writeFileSync(path.join(root, 'witness.db'), 'x');
    writeFileSync(path.join(root, 'report.html'), '<p>');
    writeFileSync(path.join(root, 'package-lock.json'), '{ "edited": true }\n');
    writeFileSync(path.join(root, 'dist', 'out.js'), 'built');
    const quiet = checkoutState(root);
    assert.deepEqual(checkoutWrites(before, quiet), ['report.html', 'witness.db']);
    // A file added to an untracked directory moves the directory's time.
    execFileSync('sh', ['-c', 'sleep 0.05; echo more > notes/new.txt'], { cwd: root });
    assert.deepEqual(checkoutWrites(before, checkoutState(root)), ['notes/', 'report.html', 'witness.db']);
    // Nothing written: nothing named.
    assert.deepEqual(checkoutWrites(quiet, checkoutState(root)).includes('kept.db'), false);
  });

  it('says when it cannot look (not a git work tree), and never calls that clean', () => {
    const state = checkoutState(tempDir());
    assert.match(state.unavailable ?? '', /git status failed/);
    const summary = closingSummary(
      { passed: 1, failed: 0, skipped: {} },
      { strict: false, writes: [], checkoutUnavailable: state.unavailable },
    );
    assert.match(summary.text, /not checked that the tests left the checkout as it was: git status failed/);
  });
});

describe('the closing summary', () => {
  const results: Results = {
    passed: 10,
    failed: 0,
    skipped: { 'PostgreSQL not given (…)': 2, 'bubblewrap absent (apt-get install bubblewrap)': 5 },
  };

  it('counts skips by reason, most first, and ends with the line CI reads', () => {
    const summary = closingSummary(results, { strict: false, writes: [] });
    assert.equal(
      summary.text,
      '\n5 skipped: bubblewrap absent (apt-get install bubblewrap)\n2 skipped: PostgreSQL not given (…)\n' +
        '10 passed, 0 failed, 7 skipped\n',
    );
    assert.equal(summary.failed, 0);
  });

  it('fails a strict run that skipped anything, and a run that wrote into the checkout', () => {
    const strict = closingSummary(results, { strict: true, writes: [] });
    assert.equal(strict.failed, 1);
    assert.match(strict.text, /strict mode \(WITNESS_TEST_STRICT=1\): 7 skipped/);
    assert.match(strict.text, /\n10 passed, 1 failed, 7 skipped\n$/);
    assert.equal(closingSummary({ ...results, skipped: {} }, { strict: true, writes: [] }).failed, 0);

    const wrote = closingSummary({ ...results, skipped: {} }, { strict: false, writes: ['witness.db'] });
    assert.equal(wrote.failed, 1);
    assert.match(
      wrote.text,
      /the tests wrote into the checkout .*: witness\.db\n10 passed, 1 failed, 0 skipped\n$/,
    );
  });
});

describe('the summary reporter', () => {
  async function report(events: unknown[]): Promise<Results> {
    const file = path.join(tempDir(), 'results.json');
    const saved = process.env.WITNESS_TEST_RESULTS;
    process.env.WITNESS_TEST_RESULTS = file;
    try {
      async function* source() {
        yield* events;
      }
      for await (const _ of summaryReporter(source())) {
        // The runner prints the summary; with WITNESS_TEST_RESULTS the reporter prints nothing.
        assert.fail('printed');
      }
    } finally {
      if (saved === undefined) delete process.env.WITNESS_TEST_RESULTS;
      else process.env.WITNESS_TEST_RESULTS = saved;
    }
    return JSON.parse(readFileSync(file, 'utf8')) as Results;
  }
  const test = (type: string, data: Record<string, unknown>) => ({
    type,
    data: { name: 't', nesting: 1, ...data },
  });

  it('counts tests, a suite that failed on its own, and a skipped suite once, with its reason', async () => {
    const results = await report([
      test('test:pass', {}),
      test('test:pass', { skip: 'bubblewrap absent (apt-get install bubblewrap)' }),
      test('test:fail', {}),
      test('test:pass', { skip: true }),
      // A skipped suite: node never runs its body, so its tests are not reported one by one.
      test('test:pass', {
        skip: 'bubblewrap absent (apt-get install bubblewrap)',
        details: { type: 'suite' },
      }),
      // A suite whose hook threw: one failure; a suite failing only because a test in it did: none more.
      test('test:fail', { details: { type: 'suite', error: { failureType: 'hookFailed' } } }),
      test('test:fail', { details: { type: 'suite', error: { failureType: 'subtestsFailed' } } }),
      test('test:pass', { details: { type: 'suite' } }),
      { type: 'test:diagnostic', data: { message: 'ignored' } },
    ]);
    assert.deepEqual(results, {
      passed: 1,
      failed: 2,
      skipped: { 'bubblewrap absent (apt-get install bubblewrap)': 2, 'no reason given': 1 },
    });
  });
});
