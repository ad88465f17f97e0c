import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type MemoryReader, openMemoryReader } from '../../src/memory/memory-reader.js';
import { CONTENT_SECURITY_POLICY } from '../../src/view/view-app.js';
import { startViewServer, type ViewServer } from '../../src/view/view-server.js';
import { needsBubblewrap } from '../support/requirements.js';
import { buildMemoryFile, fileState, storeDemoRun, storeHostileRun } from './support.js';

/** Why the tests that run an out-of-process agent (in its sandbox) skip here, if they do. */
const bubblewrap = await needsBubblewrap();

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The viewer's cookie (`name=token`), sent by default once the viewer runs. */
let accessCookie: string | undefined;

/** A raw HTTP request, so the test controls the Host header, the cookie and the method exactly. */
function send(
  port: number,
  options: { method?: string; path?: string; host?: string | null; cookie?: string | null },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    if (options.host !== null) headers.Host = options.host ?? `127.0.0.1:${port}`;
    const cookie = options.cookie === undefined ? accessCookie : options.cookie;
    if (cookie !== null && cookie !== undefined) headers.Cookie = cookie;
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method ?? 'GET',
        path: options.path ?? '/',
        headers,
        setHost: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('witness view over HTTP', () => {
  let dir: string;
  let db: string;
  let reader: MemoryReader;
  let viewer: ViewServer;
  let runIds: { vulnerable: string; hostile: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'witness-view-http-'));
    db = join(dir, 'witness.db');
    await buildMemoryFile(db, async (memory) => {
      const vulnerable = await storeDemoRun(memory, 'vulnerable');
      const hostile = await storeHostileRun(memory);
      runIds = { vulnerable: vulnerable.run.runId, hostile: hostile.run.runId };
    });
    reader = await openMemoryReader(db);
    viewer = await startViewServer({ reader });
    accessCookie = viewer.cookie;
  });
  after(async () => {
    await viewer.close();
    await reader.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('listens on 127.0.0.1 only, on a port the system chose', () => {
    assert.match(viewer.origin, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.equal(viewer.url, `${viewer.origin}?token=${viewer.token}`);
    assert.ok(viewer.port > 0);
  });

  it('shows nothing to a client without its token: a process that only found the port gets 401', async () => {
    const other = await startViewServer({ reader });
    try {
      const attempts: Array<{ cookie: string | null; path?: string }> = [
        { cookie: null },
        { cookie: `${viewer.cookie.split('=')[0]}=wrong` },
        { cookie: `${viewer.cookie.split('=')[0]}=${viewer.token.slice(1)}` },
        // Cookies are shared by every port of a host: another viewer's cookie is not this one's.
        { cookie: other.cookie.replace(String(other.port), String(viewer.port)) },
        { cookie: `${viewer.cookie}; ${viewer.cookie}` },
        { cookie: null, path: '/?token=wrong' },
        { cookie: null, path: `/?token=${other.token}` },
      ];
      for (const attempt of attempts) {
        for (const path of ['/', `/runs/${runIds.vulnerable}`, '/live', '/app.js']) {
          const reply = await send(viewer.port, { path: attempt.path ?? path, cookie: attempt.cookie });
          assert.equal(reply.status, 401, `${String(attempt.cookie)} ${attempt.path ?? path}`);
          assert.doesNotMatch(reply.body, /demo-vulnerable|hook-injection|<html/);
          assert.equal(reply.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
        }
      }
    } finally {
      await other.close();
    }
  });

  it('turns the printed token into an HttpOnly, SameSite=Strict cookie and drops it from the address', async () => {
    const path = `/runs/${runIds.vulnerable}?outcome=success&token=${viewer.token}`;
    const first = await send(viewer.port, { path, cookie: null });
    assert.equal(first.status, 303);
    assert.equal(first.headers.location, `/runs/${runIds.vulnerable}?outcome=success`);
    assert.deepEqual(first.headers['set-cookie'], [
      `witness_view_${viewer.port}=${viewer.token}; Path=/; HttpOnly; SameSite=Strict`,
    ]);
    assert.equal(viewer.cookie, `witness_view_${viewer.port}=${viewer.token}`);
    const next = await send(viewer.port, { path: first.headers.location as string, cookie: viewer.cookie });
    assert.equal(next.status, 200);
    assert.match(next.body, /demo-vulnerable/);
  });

  it('serves its pages to its own Host names, each with the strict CSP and no caching', async () => {
    for (const host of [`127.0.0.1:${viewer.port}`, `localhost:${viewer.port}`]) {
      const reply = await send(viewer.port, { host });
      assert.equal(reply.status, 200, host);
      assert.equal(reply.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
      assert.equal(reply.headers['cache-control'], 'no-store');
      assert.equal(reply.headers['x-content-type-options'], 'nosniff');
      assert.match(reply.body, /<title>Runs · Witness<\/title>/);
    }
    assert.match(CONTENT_SECURITY_POLICY, /^default-src 'none'; script-src 'self'; style-src 'self';/);
  });

  it('refuses a foreign or missing Host header (DNS rebinding), on every path', async () => {
    for (const host of [
      `attacker.example:${viewer.port}`,
      'attacker.example',
      `127.0.0.1:${viewer.port + 1}`,
      '127.0.0.1',
      `0.0.0.0:${viewer.port}`,
      `127.0.0.1.attacker.example:${viewer.port}`,
      null,
    ]) {
      for (const path of ['/', `/runs/${runIds.vulnerable}`, '/app.js', '/live', '/nope']) {
        const reply = await send(viewer.port, { host, path });
        // Node's HTTP parser itself answers 400 to a request without Host; every other one reaches the check.
        assert.equal(reply.status, host === null ? 400 : 421, `${String(host)} ${path}`);
        assert.doesNotMatch(reply.body, /demo-vulnerable|hook-injection/);
        if (host !== null) assert.equal(reply.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
      }
    }
  });

  it('answers every method other than GET and HEAD with 405, whatever the path', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND']) {
      for (const path of ['/', `/runs/${runIds.vulnerable}`, '/nope']) {
        const reply = await send(viewer.port, { method, path });
        assert.equal(reply.status, 405, `${method} ${path}`);
        assert.equal(reply.headers.allow, 'GET, HEAD');
      }
    }
    const head = await send(viewer.port, { method: 'HEAD', path: `/runs/${runIds.vulnerable}` });
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  it('answers 404 for paths outside its routes and for runs or attempts that are not stored', async () => {
    for (const path of [
      '/etc/passwd',
      '/../witness.db',
      '/witness.db',
      '/runs',
      '/runs/no-such-run',
      `/runs/${runIds.vulnerable}/attempts/hook-injection/9`,
      `/runs/${runIds.vulnerable}/attempts/hook-injection/0`,
      `/runs/${runIds.vulnerable}/attempts/hook-injection/1.0`,
      `/runs/${runIds.vulnerable}/attempts/no-such-attack/1`,
      '/compare?a=nope&b=nope',
      '/app.js/x',
    ]) {
      const reply = await send(viewer.port, { path });
      assert.equal(reply.status, 404, path);
      assert.equal(reply.headers['content-security-policy'], CONTENT_SECURITY_POLICY);
    }
  });

  it('gives each run and attempt a stable URL, and refuses a filter value outside its vocabulary', async () => {
    const run = await send(viewer.port, { path: `/runs/${runIds.vulnerable}` });
    assert.equal(run.status, 200);
    assert.match(run.body, /href="\/runs\/[^"]+\/attempts\/hook-injection\/1"/);
    const attempt = await send(viewer.port, { path: `/runs/${runIds.vulnerable}/attempts/hook-injection/1` });
    assert.equal(attempt.status, 200);
    assert.match(attempt.body, /<span class="badge success">success<\/span>/);
    const bad = await send(viewer.port, { path: `/runs/${runIds.vulnerable}?outcome=pwned` });
    assert.equal(bad.status, 400);
    assert.match(bad.body, /the filter outcome is not valid/);
  });

  it('escapes the hostile run everywhere: no markup from the agent, controls shown as escapes', {
    skip: bubblewrap,
  }, async () => {
    const pages = [
      '/',
      `/runs/${runIds.hostile}`,
      `/runs/${runIds.hostile}/attempts/markup-everywhere/1`,
      `/compare?a=${runIds.hostile}&b=${runIds.vulnerable}`,
    ];
    for (const path of pages) {
      const reply = await send(viewer.port, { path });
      assert.equal(reply.status, 200, path);
      // The only script element is the viewer's own; no tag the agent wrote survives.
      assert.deepEqual(reply.body.match(/<script[^>]*>/g), ['<script src="/app.js" defer>'], path);
      assert.equal(/<img/i.test(reply.body), false, path);
      assert.equal(/<[^>]*\sonerror\s*=/i.test(reply.body), false, path);
      // No raw control or bidi character (ESC, BEL, U+202E) reaches the page.
      for (const raw of ['\u001b', '\u0007', '\u202e']) assert.equal(reply.body.includes(raw), false, path);
    }
    const attempt = await send(viewer.port, { path: pages[2] as string });
    assert.ok(attempt.body.includes('&#60;script&#62;window.__pwned=1&#60;/script&#62;'));
    // Each escape the page wrote is marked, so it reads apart from the same characters typed.
    assert.ok(attempt.body.includes('<span class="esc" title="U+202E">\\u202E</span>gpj.sh'));
    const unmarked = attempt.body.replace(/<span class="esc" title="U\+[0-9A-F]+">([^<]*)<\/span>/g, '$1');
    assert.ok(unmarked.includes('\\u202Egpj.sh\\u001B[31mRED\\u001B]0;title\\u0007'));
    assert.ok(attempt.body.includes('/out/&#60;img src=x onerror=window.__pwned=3&#62;.html'));
  });

  it('sends a live run page only the rows it does not have, with the counts above them', async () => {
    const run = await send(viewer.port, { path: `/runs/${runIds.vulnerable}?sort=attack` });
    const versions = [
      ...run.body.matchAll(
        /<tr class="[^"]*" data-attack="[^"]*" data-outcome="[^"]*" data-v="([0-9a-f]{16})">/g,
      ),
    ].map((match) => match[1] as string);
    assert.ok(versions.length >= 4, `${versions.length} rows`);
    assert.match(run.body, /data-rows="\/live\/runs\/[^"]+\/rows"/);
    const changes = async (have: string[]) => {
      const reply = await send(viewer.port, {
        path: `/live/runs/${runIds.vulnerable}/rows?sort=attack&have=${have.join('.')}`,
      });
      assert.equal(reply.status, 200);
      assert.match(String(reply.headers['content-security-policy']), /default-src 'none'/);
      return JSON.parse(reply.body) as {
        token: string;
        head: string;
        pages: string;
        rows: Array<string | { v: string; html: string }>;
      };
    };
    // The browser has every row: only digests come back, in the page's order.
    const same = await changes(versions);
    assert.deepEqual(same.rows, versions);
    assert.match(same.head, /^<div id="run-head">[\s\S]*<p class="count" id="shown-count">/);
    assert.match(same.pages, /^<p class="pages" id="pages">/);
    assert.equal(same.token, (await send(viewer.port, { path: `/live/runs/${runIds.vulnerable}` })).body);
    // Missing two rows (new to it, or changed since it drew them): only those two are sent whole.
    const missing = [versions[1], versions.at(-1)] as string[];
    const partial = await changes(versions.filter((version) => !missing.includes(version)));
    const sent = partial.rows.filter((row) => typeof row !== 'string') as Array<{ v: string; html: string }>;
    assert.deepEqual(
      sent.map((row) => row.v),
      missing,
    );
    for (const row of sent) {
      assert.ok(run.body.includes(row.html), 'the same markup as the page');
      assert.match(row.html, new RegExp(`^<tr [^>]*data-v="${row.v}">`));
    }
    assert.deepEqual(
      partial.rows.map((row) => (typeof row === 'string' ? row : row.v)),
      versions,
    );
    // Digests that are not digests are ignored, not trusted: the rows are sent whole.
    const forged = await changes(['<script>', 'x'.repeat(16)]);
    assert.equal(forged.rows.filter((row) => typeof row === 'string').length, 0);
    const missingRun = await send(viewer.port, { path: '/live/runs/no-such-run/rows' });
    assert.equal(missingRun.status, 404);
  });

  it('never writes the database: size, times and directory unchanged, no -wal or -shm created', async () => {
    const before = await fileState(db, dir);
    assert.deepEqual(before.names, ['witness.db']);
    const paths = [
      '/',
      `/runs/${runIds.vulnerable}?outcome=success&sort=attack&order=desc`,
      `/runs/${runIds.vulnerable}/attempts/config-injection/2`,
      `/compare?a=${runIds.vulnerable}&b=${runIds.vulnerable}`,
      '/live',
      `/live/runs/${runIds.vulnerable}`,
      `/live/runs/${runIds.vulnerable}/rows?outcome=success`,
    ];
    for (const path of paths) assert.equal((await send(viewer.port, { path })).status, 200, path);
    assert.deepEqual(await fileState(db, dir), before);
    assert.equal(existsSync(`${db}-wal`), false);
    assert.equal(existsSync(`${db}-shm`), false);
  });
});
