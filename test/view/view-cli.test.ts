import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CLI_PATH, runCli } from '../support/cli.js';
import { buildMemoryFile, fileState, storeHostileRun } from './support.js';

describe('witness view (command line)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'witness-view-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a database that does not exist, creating nothing (exit 2)', async () => {
    const missing = join(dir, 'nothing-here.db');
    const result = await runCli(['view', '--db', missing]);
    assert.equal(result.status, 2);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /there is no database at .*nothing-here\.db/);
    assert.equal(existsSync(missing), false);
    assert.equal(existsSync(`${missing}-wal`), false);
  });

  it('refuses a port that is not a number (exit 2)', async () => {
    const result = await runCli(['view', '--db', join(dir, 'x.db'), '--port', 'http']);
    assert.equal(result.status, 2);
    assert.match(result.stderr, /--port takes a number from 0 to 65535/);
  });

  it('prints its loopback URL on stdout, serves the memory read-only, and stops cleanly on SIGINT', async () => {
    const db = join(dir, 'witness.db');
    await buildMemoryFile(db, async (memory) => {
      await storeHostileRun(memory);
    });
    const state = await fileState(db, dir);
    const child = spawn(process.execPath, [CLI_PATH, 'view', '--db', db], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const line = /^(http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+)\n/.exec(stdout);
          if (line !== null) resolve(line[1] as string);
        });
        child.once('exit', () => reject(new Error(`witness view exited early: ${stderr}`)));
      });
      // The printed URL's token comes back as a cookie, which then opens the pages.
      const first = await fetch(url, { redirect: 'manual' });
      assert.equal(first.status, 303);
      const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string;
      assert.equal((await fetch(new URL('/', url))).status, 401);
      const page = await fetch(new URL(first.headers.get('location') ?? '', url), { headers: { cookie } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /hostile &#60;script&#62;/);
      assert.match(stderr, /read-only; press Ctrl-C to stop/);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      assert.equal(await exited, 0);
      assert.deepEqual(await fileState(db, dir), state);
      assert.deepEqual((await readdir(dir)).sort(), ['witness.db']);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
