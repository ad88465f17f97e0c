/**
 * The one function that prepares untrusted text for a person (SPEC §10): file names and contents an agent
 * chose, replies, prompts, criteria, imported records, error messages that embed any of those. Every
 * terminal line, every HTML string (through src/render/html.ts) and every JUnit message goes through
 * {@link neutralizeText}; nothing else may print such text.
 *
 * Guarantees, whatever the input:
 * - no C0 control (ESC included, so no ANSI CSI/OSC sequence can start), no DEL, no C1 control (U+0080–
 *   U+009F, so no 8-bit CSI U+009B or OSC U+009D), no format character (bidi overrides and isolates such
 *   as U+202E, U+2066–U+2069, marks, zero-width characters, BOM), no line or paragraph separator and no
 *   unpaired surrogate reaches the output: each is written as a visible escape (`\n`, `\t`, `\u001B`,
 *   `\u{E0001}`). The attacks this stops: a file name that clears the screen or rewrites the window title,
 *   a reply that draws a fake `Verdict: FALSE` line under the real one, a name whose right-to-left
 *   override makes `gpj.sh` read as `hs.jpg`.
 * - everything else is written as itself, backslashes and quotes included, so a criterion reads as it was
 *   written (`curl\s.*attacker\.example`, never `curl\\s`) and a script as it is in the file. The price: in
 *   plain text a typed `\n` and an escaped line feed look alike. {@link neutralizeParts} tells them apart,
 *   and the HTML layer marks every escape it writes (a styled span naming the code point), so a report or
 *   the viewer shows which is which. Neutralizing neutralized text changes nothing, so text quoted when it
 *   was stored (a rationale) is shown exactly once quoted.
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
  /** After the ellipsis, say how many characters were not shown. Default false. */
  countOmitted?: boolean | undefined;
}

/** Characters never written as themselves: controls, format characters, separators, lone surrogates. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** A run of text written as itself, or one character written as a visible escape. */
export type NeutralPart = { text: string } | { escape: string; codePoint: number };

export function neutralizeText(text: string, options: NeutralizeOptions = {}): string {
  let out = '';
  for (const part of neutralizeParts(text, options)) out += 'text' in part ? part.text : part.escape;
  return out;
}

/**
 * {@link neutralizeText} as parts, so a renderer can mark the escapes (HTML does); joined, the parts are
 * exactly what `neutralizeText` returns.
 */
export function neutralizeParts(text: string, options: NeutralizeOptions = {}): NeutralPart[] {
  const characters = Array.from(text);
  const max = options.maxChars;
  const cut = max !== undefined && characters.length > max;
  const kept = cut ? characters.slice(0, max) : characters;
  const parts: NeutralPart[] = [];
  let run = '';
  for (const character of kept) {
    if (!UNSAFE.test(character) || (character === '\n' && options.multiline === true)) {
      run += character;
      continue;
    }
    if (run !== '') parts.push({ text: run });
    run = '';
    parts.push({ escape: escapeOf(character), codePoint: character.codePointAt(0) as number });
  }
  if (cut) {
    const omitted = characters.length - (max as number);
    run += options.countOmitted === true ? `… (${omitted} more characters not shown)` : '…';
  }
  if (run !== '') parts.push({ text: run });
  return parts;
}

/**
 * One line of at most `maxChars` code points between quotes: the form used inside sentences and
 * rationales. The quotes are the first of `"`, `'`, `` ` `` that the text does not hold (nested JSON reads
 * `'"upload": "x"'`, not `"\"upload\": \"x\""`); text holding all three is put between `"`.
 */
export function quoteText(text: string, maxChars: number = EXCERPT_MAX_CHARS): string {
  const line = neutralizeText(text, { maxChars });
  const quote = quoteMarkFor(line);
  return `${quote}${line}${quote}`;
}

/** The quote mark {@link quoteText} puts around `line` (already neutralized). */
export function quoteMarkFor(line: string): string {
  return QUOTES.find((candidate) => !line.includes(candidate)) ?? '"';
}

const QUOTES = ['"', "'", '`'] as const;

/** How many code points of a file name a rationale quotes. */
export const EXCERPT_MAX_CHARS = 60;

function escapeOf(character: string): string {
  const short = SHORT_ESCAPES[character];
  if (short !== undefined) return short;
  const codePoint = character.codePointAt(0) as number;
  const hex = codePoint.toString(16).toUpperCase().padStart(4, '0');
  return codePoint > 0xffff ? `\\u{${hex}}` : `\\u${hex}`;
}
