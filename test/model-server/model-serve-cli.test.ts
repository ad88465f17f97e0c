import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../support/cli.js';

describe('witness model serve (CLI)', () => {
  it('prints its base URL, answers on it, and stops cleanly on SIGINT', async () => {
    const child = spawn(
      process.execPath,
      [path.resolve('dist/src/cli/main.js'), 'model', 'serve', '--port', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
      const baseUrl = chunk.toString('utf8').trim();
      assert.match(baseUrl, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const models = (await (await fetch(`${baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(
        models.data.map((model) => model.id),
        ['witness-scripted', 'witness-attacker'],
      );
      child.kill('SIGINT');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('refuses a host that is not loopback and a port out of range, with usage errors', async () => {
    const host = await runCli(['model', 'serve', '--host', '0.0.0.0']);
    assert.equal(host.status, 2);
    assert.match(host.stderr, /0\.0\.0\.0/);
    const port = await runCli(['model', 'serve', '--port', '70000']);
    assert.equal(port.status, 2);
    assert.match(port.stderr, /--port must be an integer from 0 to 65535/);
  });
});
