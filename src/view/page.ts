import { html, type SafeHtml } from '../render/html.js';

/** The viewer's document around a page's body: navigation, the live-update hooks, the shared stylesheet. */

export interface PageOptions {
  title: string;
  /** The page's heading line (already HTML). */
  heading: SafeHtml;
  body: SafeHtml;
  /**
   * Where the page polls for changes, and the token it was rendered at (absent: the page is static);
   * `rows`: where a run's page fetches only what changed (else the page is fetched again whole).
   */
  live?: { url: string; token: string; rows?: string | undefined } | undefined;
  location: string;
  /** How often a live page polls its change token. */
  pollMs?: number | undefined;
}

/** The whole document. Styles and script are served from /app.css and /app.js (the CSP allows nothing inline). */
export function renderPage(options: PageOptions): string {
  const live = options.live;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${options.title} · Witness</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body${live === undefined ? '' : html` data-live="${live.url}" data-token="${live.token}" data-poll-ms="${options.pollMs ?? 2_000}"${live.rows === undefined ? '' : html` data-rows="${live.rows}"`}`}>
<nav class="top"><a href="/" class="brand">Witness</a> <a href="/">Runs</a> <a href="/compare">Compare</a><span class="where">${options.location}</span><span class="live-state" id="live-state"></span></nav>
<main>
<h1>${options.heading}</h1>
${options.body}
</main>
</body></html>
`.value;
}
