import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { type DoctorCheck, nodeSupported, renderChecks } from '../../src/cli/commands/doctor.js';
import { redirectionUnavailable } from '../../src/sandbox/namespace-redirection.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { openat2Unavailable } from '../../src/sources/confined-fs.js';
import { runCli } from '../support/cli.js';
import { needsChromium, needsPostgres, TEST_PG_URL } from '../support/requirements.js';

/**
 * `witness doctor` says what this machine gives. Its answers are checked against the probes the tests
 * themselves skip by, on whatever machine runs them: with everything installed (.ci/run) and with
 * bubblewrap and Chromium hidden (test-support/without-tools.sh, the fresh-machine run), so both branches
 * of each line are exercised where CI runs.
 */

async function doctor(args: readonly string[], env: NodeJS.ProcessEnv = process.env) {
  const result = await runCli(['doctor', '--json', ...args], { env });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stderr, '');
  const { checks } = JSON.parse(result.stdout) as { checks: DoctorCheck[] };
  return new Map(checks.map((check) => [check.id, check]));
}

describe('witness doctor', () => {
  it('answers as the probes do: the sandbox, the file-system seam, Chromium', async () => {
    const checks = await doctor([]);
    assert.deepEqual(
      [...checks.keys()],
      ['node', 'sandbox', 'network_namespaces', 'network_redirection', 'surface_fs', 'chromium', 'postgres'],
    );
    assert.equal(checks.get('node')?.status, 'ok');
    assert.match(checks.get('node')?.detail ?? '', new RegExp(process.version.replace(/\./g, '\\.')));

    const sandbox = await detectSandbox({ searchPath: process.env.PATH });
    assert.equal(checks.get('sandbox')?.status, sandbox.available ? 'ok' : 'missing');
    if (sandbox.available && process.getuid?.() === 0) {
      // As root the trial also becomes the agents' own user, as every run does.
      assert.match(checks.get('sandbox')?.detail ?? '', /agents run as uid 65534/);
      assert.match(
        checks.get('sandbox')?.detail ?? '',
        /under sandbox: none each attempt as a uid of its own/,
      );
    }
    if (!sandbox.available) {
      assert.ok(checks.get('sandbox')?.detail.includes(sandbox.reason));
      assert.equal(checks.get('network_namespaces')?.status, 'missing');
    }

    const redirection = redirectionUnavailable();
    assert.equal(checks.get('network_redirection')?.status, redirection === undefined ? 'ok' : 'fallback');
    assert.equal(
      checks.get('network_redirection')?.aptPackage,
      redirection === undefined ? undefined : 'nftables',
    );

    const openat2 = openat2Unavailable();
    assert.equal(checks.get('surface_fs')?.status, openat2 === undefined ? 'ok' : 'fallback');

    assert.equal(checks.get('chromium')?.status, needsChromium === false ? 'ok' : 'missing');
    assert.equal(checks.get('chromium')?.aptPackage, needsChromium === false ? undefined : 'chromium');
  });

  it('names bubblewrap to install when bwrap is not on PATH, and gathers one apt-get line', async () => {
    const checks = await doctor([], { ...process.env, PATH: '/nonexistent' });
    const sandbox = checks.get('sandbox');
    assert.equal(sandbox?.status, 'missing');
    assert.equal(sandbox?.aptPackage, 'bubblewrap');
    assert.match(sandbox?.detail ?? '', /`bwrap` was not found on PATH/);
    assert.equal(checks.get('network_namespaces')?.status, 'missing');

    const text = renderChecks([...checks.values()]);
    assert.match(text, /missing {2}sandbox/);
    const apt = text.split('\n').filter((line) => line.includes('apt-get install'));
    assert.equal(apt.length, 1, text);
    assert.match(apt[0] ?? '', /sudo apt-get install bubblewrap( nftables)?( chromium)?$/);
  });

  it('asks PostgreSQL only when given a postgres:// URL, and never prints its password', async () => {
    const { WITNESS_DB: _unset, ...env } = process.env;
    assert.equal((await doctor([], env)).get('postgres')?.status, 'not_asked');
    assert.equal((await doctor(['--db', 'memory.db'], env)).get('postgres')?.status, 'not_asked');

    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const refused = await runCli(['doctor', '--db', 'postgres://witness:hunter2-secret@127.0.0.1:1/x'], {
      env,
    });
    assert.equal(refused.status, 0, refused.stderr);
    assert.equal(refused.stdout.includes('hunter2-secret'), false, refused.stdout);
    assert.match(
      refused.stdout,
      /FAILED +PostgreSQL +postgres:\/\/witness:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/,
    );
  });

  it('reads a PostgreSQL server it is given, through WITNESS_DB too', { skip: needsPostgres }, async () => {
    const checks = await doctor([], { ...process.env, WITNESS_DB: TEST_PG_URL });
    assert.equal(checks.get('postgres')?.status, 'ok');
    assert.match(checks.get('postgres')?.detail ?? '', /PostgreSQL \d+/);
  });

  it('supports the Node.js lines package.json names', () => {
    const { engines } = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
    assert.equal(engines.node, '^20.11.0 || ^24.0.0', 'change nodeSupported (doctor.ts) with engines');
    for (const version of ['v20.11.0', 'v20.20.2', 'v24.0.0', 'v24.9.1'])
      assert.equal(nodeSupported(version), true, version);
    for (const version of ['v20.10.0', 'v18.19.0', 'v22.1.0', 'v25.0.0', 'garbage']) {
      assert.equal(nodeSupported(version), false, version);
    }
  });
});
