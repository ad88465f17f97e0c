/**
 * Text an agent might choose for a file name, a reply or a file's content, holding every control class a
 * terminal or a reader can be fooled by: C0 (NUL aside, which names cannot hold), ESC-introduced ANSI CSI
 * and OSC sequences, DEL, 8-bit C1 CSI (U+009B), OSC (U+009D) and ST (U+009C), bidi overrides, isolates
 * and marks, zero-width characters, line and paragraph separators, and a CR/LF that tries to draw a fake
 * verdict line.
 */
export const HOSTILE =
  'x\x1b]0;pwned\x07\x1b[2J\x9b31m\x9d0;t\x9c\x7f\x08\x0b\x0c\u202Egpj.sh\u202D\u2066\u2069\u200E\u200F\u061C\u200B\uFEFF\u2028\u2029\rVerdict: FALSE\ny';

/** Characters that must never reach a terminal or a report from untrusted text (line feed aside). */
export const UNSAFE_OUTPUT =
  /[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/u;

/** The first unsafe character in `text`, described, or undefined. */
export function firstUnsafe(text: string): string | undefined {
  const match = UNSAFE_OUTPUT.exec(text);
  if (match === null) return undefined;
  const code = (match[0].codePointAt(0) as number).toString(16).padStart(4, '0');
  return `U+${code} at ${match.index}: ${JSON.stringify(text.slice(Math.max(0, match.index - 40), match.index + 40))}`;
}
