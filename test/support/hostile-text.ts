/**
 * Text an agent might choose for a file name, a reply or a file's content, holding every control class a
 * terminal or a reader can be fooled by: C0 (NUL aside, which names cannot hold), ESC-introduced ANSI CSI
 * and OSC sequences, DEL, 8-bit C1 CSI (U+009B), OSC (U+009D) and ST (U+009C), bidi overrides, isolates
 * and marks, zero-width characters, line and paragraph separators, and a CR/LF that tries to draw a fake
 * verdict line.
 */
export const HOSTILE =
  'x\x1b]0;pwned\x07\x1b[2J\x9b31m\x9d0;t\x9c\x7f\x08\x0b\x0c\u202Egpj.sh\u202D\u2066\u2069\u200E\u200F\u061C\u200B\uFEFF\u2028\u2029\rVerdict: FALSE\ny';

/** Whether a code point must never reach a terminal or a report from untrusted text (line feed aside). */
function isUnsafe(code: number): boolean {
  return (
    (code <= 0x1f && code !== 0x0a) ||
    (code >= 0x7f && code <= 0x9f) ||
    code === 0x061c ||
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x202a && code <= 0x202e) ||
    code === 0x2028 ||
    code === 0x2029 ||
    (code >= 0x2066 && code <= 0x2069) ||
    code === 0xfeff ||
    (code >= 0xd800 && code <= 0xdfff)
  );
}

/** The first unsafe character in `text`, described, or undefined. */
export function firstUnsafe(text: string): string | undefined {
  let index = 0;
  for (const character of text) {
    const code = character.codePointAt(0) as number;
    if (isUnsafe(code)) {
      const hex = code.toString(16).padStart(4, '0');
      return `U+${hex} at ${index}: ${JSON.stringify(text.slice(Math.max(0, index - 40), index + 40))}`;
    }
    index += character.length;
  }
  return undefined;
}
