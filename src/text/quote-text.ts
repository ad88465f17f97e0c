/**
 * The one function that prepares untrusted text for a person (SPEC §10): file names and contents an agent
 * chose, replies, prompts, imported records, error messages that embed any of those. Every terminal line
 * and every HTML report string goes through {@link neutralizeText}; nothing else may print such text.
 *
 * Guarantees, whatever the input:
 * - no C0 control (ESC included, so no ANSI CSI/OSC sequence can start), no DEL, no C1 control (U+0080–
 *   U+009F, so no 8-bit CSI U+009B or OSC U+009D), no format character (bidi overrides and isolates such
 *   as U+202E, U+2066–U+2069, marks, zero-width characters, BOM), no line or paragraph separator and no
 *   unpaired surrogate reaches the output: each is written as a visible escape (`\n`, `\t`, `\u001B`,
 *   `\u{E0001}`). The attacks this stops: a file name that clears the screen or rewrites the window title,
 *   a reply that draws a fake `Verdict: FALSE` line under the real one, a name whose right-to-left
 *   override makes `gpj.sh` read as `hs.jpg`.
 * - a backslash is doubled, so an escape in the output always means the character was there, never that
 *   the agent typed the six characters `\u001B`.
 * - with `maxChars`, at most that many code points of the original are kept, then an ellipsis (and, with
 *   `countOmitted`, how many were left out): a payload cannot flood a screen or a report.
 * - `multiline` keeps line feeds as line breaks (for content and prompts shown in blocks); everything
 *   else is still escaped, a carriage return included (it would let a line overwrite itself).
 */

export interface NeutralizeOptions {
  /** Keep at most this many code points of the original text. Default: all. */
  maxChars?: number | undefined;
  /** Keep `\n` as a real line break. Default false: the result is one line. */
  multiline?: boolean | undefined;
  /** Escape `"` too (for text shown inside double quotes). Default false. */
  quoted?: boolean | undefined;
  /** After the ellipsis, say how many characters were not shown. Default false. */
  countOmitted?: boolean | undefined;
  /**
   * Double each backslash (default true). False only for text whose untrusted parts were already quoted
   * by this module (a rationale): its escapes are shown once, and every control is still escaped.
   */
  escapeBackslash?: boolean | undefined;
}

/** Characters never written as themselves: controls, format characters, separators, lone surrogates. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function neutralizeText(text: string, options: NeutralizeOptions = {}): string {
  const characters = Array.from(text);
  const max = options.maxChars;
  const cut = max !== undefined && characters.length > max;
  const kept = cut ? characters.slice(0, max) : characters;
  let out = '';
  for (const character of kept) out += escapeCharacter(character, options);
  if (!cut) return out;
  const omitted = characters.length - (max as number);
  return options.countOmitted === true ? `${out}… (${omitted} more characters not shown)` : `${out}…`;
}

/** One quoted line of at most `maxChars` code points: the form used inside sentences and rationales. */
export function quoteText(text: string, maxChars: number = EXCERPT_MAX_CHARS): string {
  return `"${neutralizeText(text, { maxChars, quoted: true })}"`;
}

/** How many code points of a file name a rationale quotes. */
export const EXCERPT_MAX_CHARS = 60;

function escapeCharacter(character: string, options: NeutralizeOptions): string {
  if (character === '\\') return options.escapeBackslash === false ? '\\' : '\\\\';
  if (character === '"' && options.quoted === true) return '\\"';
  if (character === '\n' && options.multiline === true) return '\n';
  if (!UNSAFE.test(character)) return character;
  const short = SHORT_ESCAPES[character];
  if (short !== undefined) return short;
  const codePoint = character.codePointAt(0) as number;
  const hex = codePoint.toString(16).toUpperCase().padStart(4, '0');
  return codePoint > 0xffff ? `\\u{${hex}}` : `\\u${hex}`;
}
