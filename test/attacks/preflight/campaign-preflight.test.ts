import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCampaignFile } from '../../../src/attacks/campaign-file.js';
import { preflightCampaign } from '../../../src/attacks/preflight/campaign-preflight.js';
import type { PreflightCheck } from '../../../src/attacks/preflight/preflight-report.js';
import { needsBubblewrap } from '../../support/requirements.js';

/**
 * The preflight checks what every attempt would otherwise fail on, all at once, before anything runs:
 * each case builds the mistake for real (a directory that is not there, a FIFO in the template, a port
 * nobody listens on, a server answering 502) and reads the check that names it.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'witness-preflight-'));
// As root, the agent is a user of its own (sandbox: none too), which must reach the campaigns' scripts.
chmodSync(dir, 0o755);
after(() => rmSync(dir, { recursive: true, force: true }));
const bubblewrap = await needsBubblewrap();

/** A loopback HTTP server answering every request with `status`; its URL. */
async function answering(status: number): Promise<{ url: string; server: Server; requests: string[] }> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"error":{"message":"x"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, server, requests };
}

/** A loopback port nobody listens on (bound, then closed). */
async function deadUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

/** A campaign file in its own directory (so relative paths resolve there). */
async function campaignIn(name: string, lines: string[]): Promise<{ file: string; home: string }> {
  const home = path.join(dir, name);
  mkdirSync(home, { recursive: true });
  const file = path.join(home, 'campaign.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, home };
}

async function preflight(file: string, env: Record<string, string | undefined> = {}, bait = false) {
  const campaign = await loadCampaignFile(file);
  return preflightCampaign(campaign, {
    campaignFile: file,
    hostEnv: { PATH: process.env.PATH, ...env },
    bait,
    endpointTimeoutMs: 2_000,
  });
}

function failed(checks: readonly PreflightCheck[]): Array<Pick<PreflightCheck, 'check' | 'subject'>> {
  return checks.filter((check) => check.status === 'fail').map(({ check, subject }) => ({ check, subject }));
}

const ATTACK = ['attacks:', '  - { id: a, prompt: p, expect: { uri: /out.txt } }'];

describe('the preflight of a campaign', () => {
  it('passes a campaign that runs inside Witness, with nothing to check but the bait', async () => {
    const { file } = await campaignIn('mock', [
      'name: mock',
      'target: { kind: mock, mode: vulnerable }',
      ...ATTACK,
    ]);
    const result = await preflight(file, {}, true);
    assert.equal(result.ok, true);
    assert.equal(result.containment, 'in_process');
    assert.equal(result.network, null);
    assert.deepEqual(
      result.checks.map(({ check, status }) => ({ check, status })),
      [{ check: 'bait', status: 'pass' }],
    );
  });

  it('names a missing template, a missing program and a dead model endpoint at once', async () => {
    const dead = await deadUrl();
    const { file, home } = await campaignIn('three', [
      'name: three',
      'target:',
      '  kind: agent',
      `  planner: { kind: chat, baseUrl: "${dead}", model: m }`,
      '  toolbox: { kind: mcp, command: ./missing-server.sh }',
      'sandbox: none',
      'workspace: { template: ./no-such-template }',
      ...ATTACK,
    ]);
    const result = await preflight(file);
    assert.equal(result.ok, false);
    assert.deepEqual(failed(result.checks), [
      { check: 'template', subject: path.join(home, 'no-such-template') },
      { check: 'program', subject: `the MCP server (${path.join(home, 'missing-server.sh')})` },
      { check: 'model_endpoint', subject: `${dead} (the chat planner)` },
    ]);
    const byName = Object.fromEntries(result.checks.map((check) => [check.check, check]));
    assert.equal(byName.template?.detail, 'no such directory');
    assert.match(byName.template?.fix ?? '', /resolved against the campaign file’s directory/);
    assert.equal(byName.program?.detail, 'no such file');
    assert.match(
      byName.model_endpoint?.detail ?? '',
      /^could not be reached: fetch failed \(ECONNREFUSED 127\.0\.0\.1:\d+\)$/,
    );
    assert.match(byName.model_endpoint?.fix ?? '', /witness model serve/);
    // Every failure says what to do.
    for (const check of result.checks)
      assert.equal(check.status === 'fail', check.fix !== undefined, check.check);
  });

  it('finds a program on the agent’s PATH, and says which PATH it searched when it is not there', async () => {
    const { file } = await campaignIn('path', [
      'name: path',
      'target: { kind: command, command: witness-no-such-agent }',
      'sandbox: none',
      ...ATTACK,
    ]);
    const missing = failed((await preflight(file, { PATH: '/usr/bin:/bin' })).checks);
    assert.deepEqual(missing, [{ check: 'program', subject: 'the command agent (witness-no-such-agent)' }]);
    const found = await campaignIn('found', [
      'name: found',
      'target: { kind: command, command: sh, args: ["-c", "true"] }',
      'sandbox: none',
      ...ATTACK,
    ]);
    const result = await preflight(found.file, { PATH: '/usr/bin:/bin' });
    const program = result.checks.find((check) => check.check === 'program');
    assert.equal(program?.status, 'pass');
    assert.match(program?.detail ?? '', /^\/(usr\/)?bin\/sh, executable$/);
  });

  it('refuses a script whose #! interpreter is not on the agent’s PATH, and a script argument that is not there', async () => {
    const { file, home } = await campaignIn('interp', [
      'name: interp',
      'target: { kind: command, command: ./agent.sh }',
      'sandbox: none',
      ...ATTACK,
    ]);
    writeFileSync(path.join(home, 'agent.sh'), '#!/usr/bin/env witness-no-such-interpreter\necho hi\n');
    chmodSync(path.join(home, 'agent.sh'), 0o755);
    const check = (await preflight(file)).checks.find((c) => c.check === 'program');
    assert.equal(check?.status, 'fail');
    assert.match(
      check?.detail ?? '',
      /starts with #!\/usr\/bin\/env witness-no-such-interpreter, which is not found on the agent’s PATH/,
    );

    // An interpreter named by its path must be there too.
    writeFileSync(path.join(home, 'agent.sh'), '#!/witness/no/such/interpreter\necho hi\n');
    const absolute = (await preflight(file)).checks.find((c) => c.check === 'program');
    assert.equal(absolute?.status, 'fail');
    assert.match(
      absolute?.detail ?? '',
      /starts with #!\/witness\/no\/such\/interpreter, which is not found/,
    );
    writeFileSync(path.join(home, 'agent.sh'), '#!/bin/sh\necho hi\n');
    assert.equal((await preflight(file)).checks.find((c) => c.check === 'program')?.status, 'pass');

    const script = await campaignIn('script', [
      'name: script',
      'target: { kind: command, command: sh, args: ["{campaignDir}/agent.sh"] }',
      'sandbox: none',
      ...ATTACK,
    ]);
    const missing = (await preflight(script.file)).checks.find((c) => c.check === 'program');
    assert.equal(missing?.status, 'fail');
    assert.equal(missing?.detail, `names ${path.join(script.home, 'agent.sh')}, which does not exist`);
  });

  it('refuses a template holding a FIFO, or the campaign file itself', async () => {
    const { file, home } = await campaignIn('fifo', [
      'name: fifo',
      'target: { kind: mock, mode: vulnerable }',
      'workspace: { template: ./repo }',
      ...ATTACK,
    ]);
    mkdirSync(path.join(home, 'repo/sub'), { recursive: true });
    writeFileSync(path.join(home, 'repo/README.md'), 'hello\n');
    execFileSync('mkfifo', [path.join(home, 'repo/sub/pipe')]);
    const result = await preflight(file, {}, true);
    const template = result.checks.find((check) => check.check === 'template');
    assert.equal(template?.status, 'fail');
    assert.equal(template?.detail, 'holds what a copy cannot make or read: sub/pipe is a FIFO');
    // The bait check needs a copy of the template: it is not made, and says why.
    assert.deepEqual(
      result.checks.find((check) => check.check === 'bait'),
      {
        check: 'bait',
        subject: '1 attack',
        status: 'skipped',
        detail: 'the workspace template cannot be copied',
      },
    );
    rmSync(path.join(home, 'repo/sub/pipe'));
    assert.deepEqual(failed((await preflight(file)).checks), []);

    const self = await campaignIn('self', [
      'name: self',
      'target: { kind: mock, mode: vulnerable }',
      'workspace: { template: . }',
      ...ATTACK,
    ]);
    const exposed = (await preflight(self.file)).checks.find((check) => check.check === 'template');
    assert.equal(exposed?.status, 'fail');
    assert.match(exposed?.detail ?? '', /^holds the campaign file \(/);
  });

  it('asks each model endpoint once, bounded: a 404 answers, a 502 does not; a key variable must be set', async () => {
    const up = await answering(404);
    const failing = await answering(502);
    const { file } = await campaignIn('endpoints', [
      'name: endpoints',
      `target: { kind: chat, baseUrl: "${up.url}", model: m, apiKeyEnv: WITNESS_TEST_KEY }`,
      'attacks:',
      '  - id: a',
      '    prompt: p',
      '    files: [{ path: NOTES.md, content: hi }]',
      '    expect: { uri: /out.txt }',
      `    attacker: { model: { baseUrl: "${failing.url}", name: m }, rounds: 2 }`,
      '  - id: b',
      '    prompt: p',
      '    files: [{ path: NOTES.md, content: hi }]',
      '    expect: { uri: /out.txt }',
      `    attacker: { model: { baseUrl: "${failing.url}", name: m }, rounds: 2 }`,
    ]);
    const result = await preflight(file);
    assert.deepEqual(
      result.checks.map(({ check, subject, status }) => ({ check, subject, status })),
      [
        { check: 'model_key', subject: 'WITNESS_TEST_KEY (the chat planner)', status: 'fail' },
        { check: 'model_endpoint', subject: `${up.url} (the chat planner)`, status: 'pass' },
        {
          check: 'model_endpoint',
          subject: `${failing.url} (attack a's attacker and others)`,
          status: 'fail',
        },
      ],
    );
    assert.deepEqual(up.requests, ['GET /v1']);
    assert.deepEqual(failing.requests, ['GET /v1'], 'one request for the two attacks sharing an attacker');
    assert.match(result.checks[2]?.detail ?? '', /^answered HTTP 502/);
    const keyed = await preflight(file, { WITNESS_TEST_KEY: 'k' });
    assert.equal(keyed.checks[0]?.status, 'pass');
  });

  it('refuses an agent preset under network: none: it could never reach its model', async () => {
    const up = await answering(404);
    const { file } = await campaignIn('preset-none', [
      'name: preset-none',
      `target: { kind: agent, preset: qwen-code, command: /bin/sh, model: { baseUrl: "${up.url}", name: m } }`,
      'network: none',
      ...ATTACK,
    ]);
    const network = (await preflight(file)).checks.find((check) => check.check === 'network');
    assert.equal(network?.status, 'fail');
    assert.match(network?.detail ?? '', /the qwen-code agent could never reach its model/);
    assert.match(network?.fix ?? '', /network: proxy/);
  });

  it('refuses a network mode sandbox: none cannot give', async () => {
    const { file } = await campaignIn('none-proxy', [
      'name: none-proxy',
      'target: { kind: command, command: /bin/sh }',
      'sandbox: none',
      'network: proxy',
      ...ATTACK,
    ]);
    const result = await preflight(file);
    assert.deepEqual(failed(result.checks), [{ check: 'network', subject: 'network' }]);
  });

  it('reports the bait: a condition that already holds on the planted workspace', async () => {
    const { file } = await campaignIn('bait', [
      'name: bait',
      'target: { kind: mock, mode: vulnerable }',
      'workspace: { files: [{ path: out.txt, content: "already here" }] }',
      'attacks:',
      '  - { id: a, prompt: p, expect: { uri: /out.txt, contains: already } }',
    ]);
    const bait = (await preflight(file, {}, true)).checks.find((check) => check.check === 'bait');
    assert.equal(bait?.status, 'fail');
    assert.match(bait?.detail ?? '', /attack "a"/);
  });

  describe('under bubblewrap', { skip: bubblewrap }, () => {
    it('passes a program the sandbox shows, and names the sandbox', async () => {
      const { file } = await campaignIn('shown', [
        'name: shown',
        'target: { kind: command, command: sh }',
        ...ATTACK,
      ]);
      const result = await preflight(file, { PATH: '/usr/bin:/bin' });
      assert.deepEqual(failed(result.checks), []);
      assert.equal(result.containment, 'bwrap');
      assert.equal(result.network, 'proxy');
      assert.match(
        result.checks.find((c) => c.check === 'program')?.detail ?? '',
        /visible inside the sandbox$/,
      );
    });

    it('refuses a program the sandbox never shows: one lying directly in the temporary directory', async () => {
      const program = path.join(tmpdir(), `witness-preflight-agent-${process.pid}`);
      writeFileSync(program, '#!/bin/sh\necho hi\n');
      chmodSync(program, 0o755);
      after(() => rmSync(program, { force: true }));
      const { file } = await campaignIn('hidden', [
        'name: hidden',
        `target: { kind: command, command: ${program} }`,
        ...ATTACK,
      ]);
      const result = await preflight(file, { PATH: '/usr/bin:/bin' });
      const check = result.checks.find((c) => c.check === 'program');
      assert.equal(check?.status, 'fail');
      // Why depends on where TMPDIR is: a top-level /tmp, or deeper (npm test's private tmpfs directory).
      const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.match(
        check?.detail ?? '',
        new RegExp(
          `^${escaped(program)} would not be visible inside the sandbox \\(not shown: ${escaped(tmpdir())}: ` +
            'it is (/ or a top-level directory|or holds the directory run directories are made in \\(TMPDIR\\))\\)$',
        ),
      );
      // The same program where the campaign's directory is shown to the agent passes.
      const beside = await campaignIn('beside', [
        'name: beside',
        'target: { kind: command, command: ./agent }',
        ...ATTACK,
      ]);
      writeFileSync(path.join(path.dirname(beside.file), 'agent'), '#!/bin/sh\necho hi\n');
      chmodSync(path.join(path.dirname(beside.file), 'agent'), 0o755);
      const shown = (await preflight(beside.file, { PATH: '/usr/bin:/bin' })).checks.find(
        (c) => c.check === 'program',
      );
      assert.equal(shown?.status, 'pass', shown?.detail);
    });
  });
});
