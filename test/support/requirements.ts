import { accessSync, constants } from 'node:fs';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';

/**
 * Why a test cannot run on this machine, as a `skip` option (`describe(name, { skip }, …)`,
 * `it(name, { skip }, …)`), or `false` when it can. The README's `npm test` passes on a machine with
 * Node.js and nothing else: a test that needs bubblewrap, Chromium or PostgreSQL skips there, and the
 * runner's closing summary counts the skips by reason (`12 skipped: bubblewrap absent (apt-get install
 * bubblewrap)`). So each reason is one fixed text naming the fix, the same in every file; .ci/run, where
 * everything is installed, fails on any skip (WITNESS_TEST_STRICT=1).
 */
export type Skip = string | false;

/** Debian's Chromium, driven by playwright-core (the browser checks; test/support/chromium.ts). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** The report and viewer checks in a real browser: an executable Chromium where Debian puts it. */
export const needsChromium: Skip = executable(CHROMIUM_PATH)
  ? false
  : `Chromium absent (apt-get install chromium; looked for ${CHROMIUM_PATH})`;

/** The PostgreSQL server tests make private databases in (scripts/start-test-postgres.sh starts one). */
export const TEST_PG_URL: string | undefined = process.env.WITNESS_TEST_PG_URL || undefined;

/** The PostgreSQL backend of the memory, and the queue. */
export const needsPostgres: Skip =
  TEST_PG_URL === undefined
    ? 'PostgreSQL not given (set WITNESS_TEST_PG_URL; eval "$(bash scripts/start-test-postgres.sh)" starts one)'
    : false;

/**
 * A bubblewrap sandbox, as every out-of-process agent and MCP server runs in by default: `bwrap` on PATH
 * and a trial sandbox that starts (user namespaces allowed). Asked once per process (detectSandbox caches).
 */
export async function needsBubblewrap(): Promise<Skip> {
  const availability = await detectSandbox();
  if (availability.available) return false;
  return availability.reason === '`bwrap` was not found on PATH'
    ? 'bubblewrap absent (apt-get install bubblewrap)'
    : `bubblewrap cannot start a sandbox here: ${availability.reason}`;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
