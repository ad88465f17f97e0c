import { neutralizeText } from '../text/quote-text.js';

/**
 * HTML built so that agent-controlled text cannot become markup: the `html` template escapes every
 * interpolated string, after the one quoting function ({@link neutralizeText}) has made control, bidi and
 * ANSI characters visible; only values already built by `html` (or {@link text}) pass through unescaped.
 * A page never concatenates raw strings.
 *
 * ```ts
 * html`<td>${attempt.reply}</td>` // "<script>" arrives as &#60;script&#62;, U+202E as \u202E
 * ```
 *
 * The attacks this stops: a reply, file name or file content carrying `<script>` or an event handler
 * (stored XSS in the viewer, which would run on the viewer's origin); a right-to-left override that makes
 * `gpj.sh` read as `hs.jpg`; ANSI/OSC sequences and other controls that a person copies into a terminal.
 */

export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

export function html(strings: TemplateStringsArray, ...values: readonly HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new SafeHtml(out);
}

function render(value: HtmlValue): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (typeof value === 'number') return String(value);
  return escapeHtml(neutralize(String(value), {}));
}

export interface TextOptions {
  /** Keep at most this many code points, then say how many were not shown. */
  maxChars?: number | undefined;
  /** Keep line feeds (for blocks shown in `<pre>`); every other control is still made visible. */
  multiline?: boolean | undefined;
  /** Text whose untrusted parts were already quoted (a score's rationale): its escapes are shown once. */
  alreadyQuoted?: boolean | undefined;
}

/** Untrusted text, cut and made inert, as HTML. */
export function text(value: string, options: TextOptions = {}): SafeHtml {
  return new SafeHtml(escapeHtml(neutralize(value, options)));
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The one quoting function (SPEC §10), cutting long text with a count of what was left out. */
function neutralize(value: string, options: TextOptions): string {
  return neutralizeText(value, {
    maxChars: options.maxChars,
    multiline: options.multiline,
    countOmitted: true,
    escapeBackslash: options.alreadyQuoted !== true,
  });
}

/** A path segment or query value of a link the viewer builds. */
export function urlPart(value: string): string {
  return encodeURIComponent(value);
}

export interface PageOptions {
  title: string;
  /** The page's heading line (already HTML). */
  heading: SafeHtml;
  body: SafeHtml;
  /** Where the page polls for changes, and the token it was rendered at (absent: the page is static). */
  live?: { url: string; token: string } | undefined;
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
<body${live === undefined ? '' : html` data-live="${live.url}" data-token="${live.token}" data-poll-ms="${options.pollMs ?? 2_000}"`}>
<nav class="top"><a href="/" class="brand">Witness</a> <a href="/">Runs</a> <a href="/compare">Compare</a><span class="where">${options.location}</span><span class="live-state" id="live-state"></span></nav>
<main>
<h1>${options.heading}</h1>
${options.body}
</main>
</body></html>
`.value;
}
