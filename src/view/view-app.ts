import { timingSafeEqual } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { InvalidOptionError } from '../errors.js';
import { html, type SafeHtml, text, urlPart } from '../render/html.js';
import type { RunSummary } from '../render/run-summary.js';
import { APP_CSS, APP_JS } from './assets.js';
import { parseAttemptQuery } from './attempt-filter.js';
import { renderPage } from './page.js';
import { renderAttemptBody } from './pages/attempt-page.js';
import { renderCompareForm, renderComparison } from './pages/compare-page.js';
import { renderRunBody, renderRunParts } from './pages/run-page.js';
import { renderRunsBody } from './pages/runs-page.js';
import type { AttemptPageView, ViewReadModel } from './read-model.js';
import { CHANGED_ATTEMPTS_LISTED } from './run-comparison.js';

/**
 * The viewer's routes (GET and HEAD only) and the checks every request passes first. Each check names the
 * attack it stops:
 * - `Host` must be the viewer's own (`127.0.0.1:PORT` or `localhost:PORT`): a page on an attacker's domain
 *   that rebinds its DNS name to 127.0.0.1 (DNS rebinding) would otherwise be same-origin with the viewer
 *   and could read the memory — evidence, replies, sometimes secrets — through the victim's browser.
 * - Any other method is refused (405): there is nothing to write, so nothing a forged form could change.
 * - Every request must carry the viewer's random access token: in the URL `witness view` prints
 *   (`?token=…`, answered with a cookie and a redirect to the same page without it) or in that cookie
 *   (`HttpOnly`, `SameSite=Strict`). Anything else that can reach 127.0.0.1 — an agent run under
 *   `network: host` or `sandbox: none` that found the port in `/proc/net/tcp`, another local user — would
 *   otherwise read every stored attack's criterion and payload, the run in progress included (401).
 * - Every response carries a Content-Security-Policy that loads only the viewer's own /app.js and /app.css
 *   (no inline script or style, no other origin, no framing, no form posting elsewhere), so text an agent
 *   planted that somehow became markup could still not run or call out; plus `nosniff`, `no-referrer` and
 *   `no-store` (a run's evidence is not kept in the browser's cache).
 * - A path outside the routes is a 404; nothing is served from the file system.
 */

export interface ViewAppOptions {
  readModel: ViewReadModel;
  /** The `Host` header values accepted (filled in once the server knows its port). */
  allowedHosts: ReadonlySet<string>;
  /** The access token every request must carry (`?token=` once, then the cookie). */
  access: ViewAccess;
  /** How often an open page polls for changes. Default 2,000 ms. */
  pollIntervalMs?: number | undefined;
}

export interface ViewAccess {
  token: string;
  /** The cookie's name; one per port, since cookies are shared by every port of a host. */
  cookie: string;
}

/** The query parameter that carries the access token in the URL the viewer prints. */
export const VIEW_TOKEN_PARAMETER = 'token';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

export function createViewApp(options: ViewAppOptions): Hono {
  const { readModel, allowedHosts, access } = options;
  const expected = Buffer.from(access.token);
  const matches = (given: string | undefined): boolean => {
    if (given === undefined) return false;
    const bytes = Buffer.from(given);
    return bytes.length === expected.length && timingSafeEqual(bytes, expected);
  };
  const pollMs = options.pollIntervalMs ?? 2_000;
  const app = new Hono();

  app.use(async (c, next) => {
    const host = c.req.header('host');
    if (host === undefined || !allowedHosts.has(host.toLowerCase())) {
      c.res = c.text('421 this viewer answers only to its own address (127.0.0.1 or localhost)\n', 421);
    } else if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      c.res = c.text('405 the viewer is read-only: only GET and HEAD are allowed\n', 405, {
        Allow: 'GET, HEAD',
      });
    } else if (matches(c.req.query(VIEW_TOKEN_PARAMETER))) {
      // The printed URL: remember the token in a cookie and go on without it in the address bar.
      const url = new URL(c.req.url);
      url.searchParams.delete(VIEW_TOKEN_PARAMETER);
      c.res = c.body(null, 303, {
        Location: `${url.pathname}${url.search}`,
        'Set-Cookie': `${access.cookie}=${access.token}; Path=/; HttpOnly; SameSite=Strict`,
      });
    } else if (matches(cookieValue(c.req.header('cookie'), access.cookie))) {
      await next();
    } else {
      c.res = c.text(
        '401 this viewer needs its access token: open the URL that `witness view` printed\n',
        401,
      );
    }
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
  });

  const page = (
    title: string,
    heading: SafeHtml,
    body: SafeHtml,
    live?: { url: string; token: string; rows?: string },
  ): string => renderPage({ title, heading, body, live, location: readModel.location, pollMs }) as string;

  app.get('/app.js', (c) => c.body(APP_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8' }));
  app.get('/app.css', (c) => c.body(APP_CSS, 200, { 'Content-Type': 'text/css; charset=utf-8' }));

  app.get('/', async (c) => {
    const [runs, token] = await Promise.all([readModel.listRuns(), readModel.changeToken()]);
    return c.html(
      page('Runs', html`Runs`, renderRunsBody(runs, readModel.location), {
        url: '/live',
        token,
      }),
    );
  });

  app.get('/runs/:runId', async (c) => {
    const runId = c.req.param('runId');
    const [summary, token] = await Promise.all([readModel.getRun(runId), readModel.changeToken(runId)]);
    if (summary === undefined) return notFound(c, `no stored run has the id ${runId}`);
    const { attempts, query, problem } = await runPage(summary, c.req.query());
    const body = renderRunBody(summary, attempts, query, problem);
    return c.html(
      page(
        `${summary.run.campaign} ${summary.run.runId}`,
        html`${text(summary.run.campaign, { maxChars: 120 })} <small>run <code>${summary.run.runId}</code></small>`,
        body,
        { url: `/live/runs/${urlPart(runId)}`, token, rows: `/live/runs/${urlPart(runId)}/rows` },
      ),
      problem === undefined ? 200 : 400,
    );
  });

  app.get('/runs/:runId/attempts/:attack/:attempt', async (c) => {
    const { runId, attack, attempt } = c.req.param();
    const number = /^[1-9][0-9]{0,9}$/.test(attempt) ? Number(attempt) : Number.NaN;
    // A round of an adaptive attack's chain (SPEC §15): `?round=N`; without it, the attempt's first round.
    const roundText = c.req.query('round');
    const round =
      roundText === undefined ? undefined : /^[1-9][0-9]?$/.test(roundText) ? Number(roundText) : Number.NaN;
    const view =
      Number.isNaN(number) || Number.isNaN(round)
        ? undefined
        : await readModel.getAttempt(runId, { attack, attempt: number, round });
    if (view === undefined) {
      return notFound(c, `run ${runId} has no stored attempt ${attempt} of attack ${attack}`);
    }
    return c.html(
      page(`${attack} #${number}`, html`${attack} <small>attempt ${number}</small>`, renderAttemptBody(view)),
    );
  });

  app.get('/compare', async (c) => {
    const left = c.req.query('a');
    const right = c.req.query('b');
    const runs = await readModel.listRuns();
    if (left === undefined || right === undefined || left === '' || right === '') {
      return c.html(page('Compare runs', html`Compare two runs`, renderCompareForm(runs)));
    }
    const leftRun = runs.find((entry) => entry.run.runId === left);
    const rightRun = runs.find((entry) => entry.run.runId === right);
    if (leftRun === undefined || rightRun === undefined) {
      return notFound(c, `no stored run has the id ${leftRun === undefined ? left : right}`);
    }
    const pairs = await readModel.pairAttempts(left, right, CHANGED_ATTEMPTS_LISTED);
    const token = `${await readModel.changeToken(left)}.${await readModel.changeToken(right)}`;
    return c.html(
      page(
        'Compare runs',
        html`Compare <small>${text(leftRun.run.campaign, { maxChars: 60 })} ↔ ${text(rightRun.run.campaign, { maxChars: 60 })}</small>`,
        html`${renderCompareForm(runs, left, right)}${renderComparison(leftRun, rightRun, pairs)}`,
        { url: `/live/compare?a=${urlPart(left)}&b=${urlPart(right)}`, token },
      ),
    );
  });

  /**
   * What changed on a run's page, for its live updates: the same query string as the page, plus `have`,
   * the digests of the rows the browser shows (`data-v`, dot-separated). Answers JSON: the run's change
   * token, the part above the attempts (summary, counts, filters) and the page links, and the page's rows
   * in order, each either the digest of a row the browser already has or, for a row new or changed, its
   * markup. So an update of a page of 100 attempts in which one attempt was added sends that one row.
   */
  app.get('/live/runs/:runId/rows', async (c) => {
    const runId = c.req.param('runId');
    const { have = '', ...params } = c.req.query();
    const held = new Set(have.split('.').filter((digest) => /^[0-9a-f]{16}$/.test(digest)));
    const token = await readModel.changeToken(runId);
    const summary = await readModel.getRun(runId);
    if (summary === undefined) return c.json({ error: `no stored run has the id ${runId}` }, 404);
    const { attempts, query, problem } = await runPage(summary, params);
    const parts = renderRunParts(summary, attempts, query, problem);
    return c.json({
      token,
      head: parts.head.value,
      pages: parts.pages.value,
      rows: parts.rows.map((row) =>
        held.has(row.version) ? row.version : { v: row.version, html: row.html.value },
      ),
    });
  });

  /** A run's page for a query string (a query that is not valid shows the first page of every attempt, saying why). */
  async function runPage(summary: RunSummary, params: Record<string, string>) {
    const parsed = parseAttemptQuery(params);
    let query = parsed.ok ? parsed.query : {};
    let problem = parsed.ok ? undefined : `${parsed.message}; showing every attempt`;
    let attempts: AttemptPageView;
    try {
      attempts = await readModel.pageAttempts(summary.run, query);
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      const { after: _after, ...rest } = query;
      query = rest;
      problem = `${error.message}; showing the first page`;
      attempts = await readModel.pageAttempts(summary.run, query);
    }
    return { attempts, query, problem };
  }

  app.get('/live', async (c) => c.text(await readModel.changeToken()));
  app.get('/live/runs/:runId', async (c) => c.text(await readModel.changeToken(c.req.param('runId'))));
  app.get('/live/compare', async (c) => {
    const left = c.req.query('a') ?? '';
    const right = c.req.query('b') ?? '';
    return c.text(`${await readModel.changeToken(left)}.${await readModel.changeToken(right)}`);
  });

  app.notFound((c) => notFound(c, `there is no page at ${c.req.path}`));
  app.onError((error, c) =>
    c.html(
      page(
        'Error',
        html`The memory could not be read`,
        html`<p class="problem">${error.message}</p><p>Reload the page to try again.</p>`,
      ),
      500,
    ),
  );

  function notFound(c: Context, message: string) {
    return c.html(
      page(
        'Not found',
        html`Not found`,
        html`<p class="problem">${message}.</p><p><a href="/">All runs</a></p>`,
      ),
      404,
    );
  }

  return app;
}

/** The value of cookie `name` in a `Cookie` header, if there is exactly one. */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const values = header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${name}=`))
    .map((part) => part.slice(name.length + 1));
  return values.length === 1 ? values[0] : undefined;
}
