// The closing summary of a lane (test-support/run-tests.mjs) and the two checks of the run as a whole
// that no single test can make:
//
// - Nothing is written into the checkout. A test that runs `witness` in the repository's own directory
//   leaves `./witness.db` there (the default memory), and `git status` of a fresh clone is no longer clean.
//   The checkout's untracked and ignored entries are listed before and after the run (`dist/` and
//   `node_modules/` apart: they are the build's); a new entry, or one whose size or modification time
//   moved, fails the run, named. Edits to tracked files are left out: a developer edits sources while the
//   suite runs, and .ci/run checks its copy's `git status` after the tests.
// - Strict mode (WITNESS_TEST_STRICT=1, set by .ci/run, where every tool is installed): any skipped test
//   fails the run. On a developer's machine a test whose tool (bubblewrap, Chromium, PostgreSQL) is
//   missing skips and says why; in CI that would hide a broken setup.
//
// The last line stays the plain "N passed, N failed, N skipped" CI reads; a failed check of the run counts
// as one failure there, as a suite that failed on its own does.
import { execFileSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import path from 'node:path';

/** Entries of the build, never compared: tsc, esbuild and npm write there by design. */
const BUILD_ENTRIES = new Set(['dist/', 'node_modules/']);

/**
 * What of the checkout is not committed: the untracked and ignored entries `git status` shows (an
 * untracked directory as one entry) with their size and modification time. `{ unavailable }` when git
 * cannot tell (not a git work tree, no git): the check is then reported as not made, never as passed.
 */
export function checkoutState(root) {
  let listing;
  try {
    listing = execFileSync(
      'git',
      ['status', '--porcelain=v1', '-z', '--ignored=traditional', '--untracked-files=normal'],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    const reason =
      error.code === 'ENOENT' ? 'git is not installed' : `git status failed: ${firstLine(error)}`;
    return { unavailable: reason };
  }
  const entries = new Map();
  const records = listing.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    if (record === '') continue;
    const status = record.slice(0, 2);
    const name = record.slice(3);
    // A rename or copy is followed by its source path, which names nothing in the tree now.
    if (status[0] === 'R' || status[0] === 'C') i++;
    if (BUILD_ENTRIES.has(name) || (status !== '??' && status !== '!!')) continue;
    entries.set(name, `${status} ${stamp(path.join(root, name))}`);
  }
  return { entries };
}

/** Entries added or changed between two states of {@link checkoutState}, as `git status` names them. */
export function checkoutWrites(before, after) {
  if (before.entries === undefined || after.entries === undefined) return [];
  const writes = [];
  for (const [name, state] of after.entries) {
    if (before.entries.get(name) !== state) writes.push(name);
  }
  return writes.sort();
}

/**
 * The closing lines: each reason for skipping with its count (most first), the checks of the run that
 * failed, and last the CI line. `failed` is the run's failure count with those checks added.
 */
export function closingSummary(results, { strict, writes, checkoutUnavailable }) {
  const lines = [];
  const reasons = Object.entries(results.skipped).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  const skipped = reasons.reduce((sum, [, count]) => sum + count, 0);
  let failed = results.failed;
  for (const [reason, count] of reasons) lines.push(`${count} skipped: ${reason}`);
  if (strict && skipped > 0) {
    failed++;
    lines.push(
      `strict mode (WITNESS_TEST_STRICT=1): ${skipped} skipped, and here nothing may be: install what the reasons above name`,
    );
  }
  if (writes.length > 0) {
    failed++;
    lines.push(
      `the tests wrote into the checkout (write under a temporary directory, and run \`witness\` with a cwd there; or, if you made these while the tests ran, run them again): ${writes.join(', ')}`,
    );
  }
  if (checkoutUnavailable !== undefined) {
    lines.push(`not checked that the tests left the checkout as it was: ${checkoutUnavailable}`);
  }
  lines.push(`${results.passed} passed, ${failed} failed, ${skipped} skipped`);
  return { text: `\n${lines.join('\n')}\n`, failed };
}

function stamp(file) {
  try {
    const stats = lstatSync(file);
    return `${stats.isDirectory() ? 'directory' : `${stats.size} bytes`}, modified ${stats.mtimeMs}`;
  } catch {
    return 'gone';
  }
}

function firstLine(error) {
  const text = String(error.stderr ?? error.message ?? error);
  return text.split('\n').find((line) => line.trim() !== '') ?? text;
}
