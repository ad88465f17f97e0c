/**
 * Reversible text encodings used by the injection strategies. Each `encode…` has its `decode…` so a test
 * can prove the round trip: a strategy that garbles its own payload would measure nothing.
 *
 * - zero-width: a ZERO WIDTH SPACE (U+200B) after every character of a word. The text looks the same on
 *   screen and to most tokenizers, but a filter searching for "write" or ".git/hooks" no longer finds it.
 * - Unicode tags: every printable ASCII character moved into the Tags block (U+E0020–U+E007E). Nothing
 *   is rendered, yet some models read the tag characters as the letters they shadow.
 * - base64: standard alphabet with padding (RFC 4648 §4), of the UTF-8 bytes.
 * - homoglyphs: Latin letters swapped for Cyrillic and Greek letters that look the same.
 */

const ZERO_WIDTH_SPACE = '\u200b';
const TAG_OFFSET = 0xe0000;

/** Inserts U+200B between the characters of every word (whitespace is left alone). */
export function encodeZeroWidth(text: string): string {
  return text.replace(/\S+/gu, (word) => [...word].join(ZERO_WIDTH_SPACE));
}

/** Removes every zero-width space, joiner and non-joiner (U+200B–U+200D) and U+2060 WORD JOINER. */
export function decodeZeroWidth(text: string): string {
  return text.replace(/[\u200b-\u200d\u2060]/gu, '');
}

/**
 * Moves printable ASCII (U+0020–U+007E) into the Tags block. Anything else cannot be carried invisibly:
 * it is refused rather than silently dropped, so a payload never arrives cut.
 */
export function encodeUnicodeTags(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code < 0x20 || code > 0x7e) {
      throw new RangeError(
        `Unicode tags carry printable ASCII only; U+${code.toString(16)} cannot be encoded`,
      );
    }
    out += String.fromCodePoint(TAG_OFFSET + code);
  }
  return out;
}

/** The ASCII text hidden in tag characters; every other character is ignored. */
export function decodeUnicodeTags(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code >= TAG_OFFSET + 0x20 && code <= TAG_OFFSET + 0x7e) out += String.fromCharCode(code - TAG_OFFSET);
  }
  return out;
}

export function encodeBase64(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64');
}

export function decodeBase64(encoded: string): string {
  return Buffer.from(encoded, 'base64').toString('utf8');
}

/** Latin letter → a look-alike from another script. Only letters with a convincing twin are listed. */
const HOMOGLYPHS: Readonly<Record<string, string>> = {
  a: '\u0430',
  c: '\u0441',
  e: '\u0435',
  i: '\u0456',
  j: '\u0458',
  o: '\u043e',
  p: '\u0440',
  s: '\u0455',
  x: '\u0445',
  y: '\u0443',
  A: '\u0410',
  B: '\u0412',
  C: '\u0421',
  E: '\u0415',
  H: '\u041d',
  I: '\u0406',
  K: '\u041a',
  M: '\u041c',
  N: '\u039d',
  O: '\u041e',
  P: '\u0420',
  T: '\u0422',
  X: '\u0425',
};
const LATIN_OF = new Map(Object.entries(HOMOGLYPHS).map(([latin, twin]) => [twin, latin]));

/** Replaces every letter that has a look-alike. */
export function encodeHomoglyphs(text: string): string {
  return [...text].map((char) => HOMOGLYPHS[char] ?? char).join('');
}

/** Maps the look-alikes {@link encodeHomoglyphs} uses back to Latin letters. */
export function decodeHomoglyphs(text: string): string {
  return [...text].map((char) => LATIN_OF.get(char) ?? char).join('');
}
