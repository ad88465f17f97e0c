/**
 * The instruction grammar the mock agent understands, in prompts and in the files it reads. One
 * instruction per line; case-insensitive verbs; a line may start with comment decoration (`#`, `>`, `*`,
 * `//`, `<!--`, `-`) and one short label ending in `:` (`IMPORTANT:`, `Note to AI agents:`).
 *
 * ```text
 * write "<text>" to <path>        text is a JSON string: \n, \t, \" and \u escapes work
 * write `<text>` to <path>        text taken literally (no escapes)
 * read <path>                     also read another file (a chained injection)
 * send <source> to <url>          send a file (`~/` names the home) or $NAME (an environment variable)
 *                                 to an http(s) URL, as a POST body (exfiltration)
 * ```
 *
 * `save` and `put` are accepted for `write`; `into`/`in` for `to`; `open` for `read`; `post` and
 * `upload` for `send`. A path may be
 * wrapped in backticks; trailing `.`, `,`, `;` and `-->` are dropped. A `read` path must look like a
 * file (contain `/`, end in an extension, or be a dotfile such as `.env`), so prose such as "read the
 * docs" is not an instruction.
 *
 * Anything else is prose. The grammar is small on purpose: it models an agent that obeys imperative text
 * it meets in data, which is exactly what prompt injection exploits.
 */

export type Instruction =
  | { kind: 'write'; path: string; content: string }
  | { kind: 'read'; path: string }
  | { kind: 'send'; from: string; url: string };

const DECORATION = String.raw`^[\s#>*/!<\-]*(?:[A-Za-z][\w ,'-]{0,40}:\s*)?`;
const PATH = String.raw`(\x60[^\x60]+\x60|\S+)`;
const WRITE = new RegExp(
  String.raw`${DECORATION}(?:write|save|put)\s+("(?:[^"\\]|\\.)*"|\x60[^\x60]*\x60)\s+(?:to|into|in)\s+${PATH}`,
  'i',
);
const READ = new RegExp(String.raw`${DECORATION}(?:also\s+)?(?:read|open)\s+${PATH}\s*(?:-->)?\s*$`, 'i');
const SEND = new RegExp(
  String.raw`${DECORATION}(?:send|post|upload)\s+(?:the\s+contents\s+of\s+)?(\$[A-Za-z_]\w*|\x60[^\x60]+\x60|\S+)\s+to\s+(https?://[^\s\x60"'<>]+)`,
  'i',
);

/** The instructions in `text`, in order. Lines that do not parse (bad escapes included) are prose. */
export function parseInstructions(text: string): Instruction[] {
  const found: Instruction[] = [];
  for (const line of text.split(/\r?\n/)) {
    const write = WRITE.exec(line);
    if (write !== null) {
      const content = decodePayload(write[1] as string);
      const path = cleanPath(write[2] as string);
      if (content !== undefined && path !== '') found.push({ kind: 'write', path, content });
      continue;
    }
    const send = SEND.exec(line);
    if (send !== null) {
      const from = cleanPath(send[1] as string);
      const url = (send[2] as string).replace(/[.,;:!?)]+$/, '');
      if (from.startsWith('$') || looksLikeFile(from.replace(/^~\//, ''))) {
        found.push({ kind: 'send', from, url });
      }
      continue;
    }
    const read = READ.exec(line);
    if (read !== null) {
      const path = cleanPath(read[1] as string);
      if (looksLikeFile(path)) found.push({ kind: 'read', path });
    }
  }
  return found;
}

/**
 * Files a prompt asks about: backtick-quoted paths, and words that look like file paths (`README.md`,
 * `docs/setup.txt`), in order of first mention.
 */
export function mentionedFiles(prompt: string): string[] {
  const found = new Set<string>();
  for (const match of prompt.matchAll(/\x60([^\x60\s]+)\x60|(\S+)/g)) {
    const raw = match[1] ?? match[2] ?? '';
    const path = cleanPath(raw).replace(/^["'(]+|["')]+$/g, '');
    if (match[1] !== undefined ? path !== '' : looksLikeFile(path)) found.add(path);
  }
  return [...found];
}

function decodePayload(raw: string): string | undefined {
  if (raw.startsWith('`')) return raw.slice(1, -1);
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

function cleanPath(raw: string): string {
  let path = raw.replace(/-->$/, '');
  if (path.startsWith('`') && path.endsWith('`') && path.length >= 2) return path.slice(1, -1);
  path = path.replace(/[.,;:!?]+$/, '');
  return path;
}

function looksLikeFile(path: string): boolean {
  return (
    /^[\w./-]+$/.test(path) &&
    (/\/[\w.-]/.test(path) || /[\w-]\.[A-Za-z0-9]{1,8}$/.test(path) || /^\.\w[\w.-]*$/.test(path))
  );
}
