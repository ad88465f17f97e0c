/**
 * Quoting attacker-controlled text (file names, above all) inside a rationale a person will read.
 *
 * Guarantees: the result is one quoted line of at most `maxChars` characters of the original plus an
 * ellipsis; control, format (bidirectional overrides, zero-width) and line-separator characters are shown
 * as escapes, so a crafted name can neither smuggle a long payload into a verdict nor fake extra lines or
 * reorder the text around it.
 */

export const EXCERPT_MAX_CHARS = 60;

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

export function quoteExcerpt(text: string, maxChars: number = EXCERPT_MAX_CHARS): string {
  const characters = Array.from(text);
  const kept = characters.length > maxChars ? `${characters.slice(0, maxChars).join('')}…` : text;
  // JSON.stringify escapes quotes, backslashes, C0 controls and lone surrogates; the rest is done here.
  return JSON.stringify(kept).replace(INVISIBLE, (character) => {
    const codePoint = character.codePointAt(0) as number;
    const hex = codePoint.toString(16).toUpperCase().padStart(4, '0');
    return codePoint > 0xffff ? `\\u{${hex}}` : `\\u${hex}`;
  });
}
