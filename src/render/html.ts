import { neutralizeParts, neutralizeText, quoteMarkFor } from '../text/quote-text.js';

/**
 * HTML built so that agent-controlled text cannot become markup: the `html` template escapes every
 * interpolated string, after the one quoting function (`neutralizeParts`, src/text/quote-text.ts) has made
 * control, bidi and ANSI characters visible; only values already built by `html` (or {@link text}) pass
 * through unescaped. Every page of the viewer and the whole report are built with it; nothing concatenates
 * raw strings into markup.
 *
 * ```ts
 * html`<td>${attempt.reply}</td>` // "<script>" arrives as &#60;script&#62;, U+202E as \u202E
 * ```
 *
 * {@link text}, for element content (replies, file contents, names, rationales), also marks each escape the
 * quoting wrote (`<span class="esc" title="U+202E">\u202E</span>`), so a reader tells an escaped control
 * from the same characters typed (backslashes are shown as written). A plain interpolation marks nothing,
 * so it stays safe inside an attribute value or a `<title>`.
 *
 * The attacks this stops: a reply, file name or file content carrying `<script>` or an event handler
 * (stored XSS in the viewer, which would run on the viewer's origin, or in a report opened from disk); a
 * right-to-left override that makes `gpj.sh` read as `hs.jpg`; ANSI/OSC sequences and other controls
 * that a person copies into a terminal.
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
  return escapeHtml(neutralizeText(String(value)));
}

export interface TextOptions {
  /** Keep at most this many code points, then say how many were not shown. */
  maxChars?: number | undefined;
  /** Keep line feeds (for blocks shown in `<pre>`); every other control is still made visible. */
  multiline?: boolean | undefined;
  /** Say how many code points a cut left out (default true). */
  countOmitted?: boolean | undefined;
}

/** Untrusted text, cut and made inert, as HTML element content (never inside an attribute). */
export function text(value: string, options: TextOptions = {}): SafeHtml {
  return new SafeHtml(neutralHtml(value, options));
}

/** Untrusted text between the quote marks `quoteText` would choose (src/text/quote-text.ts), as HTML. */
export function quoted(value: string, options: TextOptions = {}): SafeHtml {
  const quote = escapeHtml(
    quoteMarkFor(neutralizeText(value, { ...options, countOmitted: options.countOmitted !== false })),
  );
  return new SafeHtml(`${quote}${neutralHtml(value, options)}${quote}`);
}

/** Already-built HTML joined with a separator (the separator is escaped like any text). */
export function join(parts: readonly SafeHtml[], separator: string): SafeHtml {
  return new SafeHtml(parts.map((part) => part.value).join(escapeHtml(separator)));
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function neutralHtml(value: string, options: TextOptions): string {
  let out = '';
  const parts = neutralizeParts(value, {
    maxChars: options.maxChars,
    multiline: options.multiline,
    countOmitted: options.countOmitted !== false,
  });
  for (const part of parts) {
    out +=
      'text' in part
        ? escapeHtml(part.text)
        : `<span class="esc" title="U+${part.codePoint.toString(16).toUpperCase().padStart(4, '0')}">${escapeHtml(part.escape)}</span>`;
  }
  return out;
}

/** A path segment or query value of a link. */
export function urlPart(value: string): string {
  return encodeURIComponent(value);
}
