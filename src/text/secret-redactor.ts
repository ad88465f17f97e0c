/**
 * Secrets never reach what Witness stores or prints (SPEC §11). The campaign names them (`secrets:`, and a
 * chat target's `apiKeyEnv`); their values are replaced by `[redacted:NAME]` in every string of an
 * attempt's records — reply, transcript (tool-call arguments, stderr, HTTP bodies), evidence content and
 * excerpts, errors — before they are stored, printed or rendered.
 *
 * The attack: an agent that runs `env > notes.txt`, echoes its key in a reply, or is tricked into writing
 * it into a judged file would otherwise put the key into the database, its WAL, the HTML report and the
 * terminal.
 *
 * Truncation: many texts are cut to a budget before they reach the redactor (stdout, HTTP bodies, file
 * content), and a cut can split a secret. So at the two ends of every string, a fragment of a secret of at
 * least {@link MIN_FRAGMENT_CHARS} characters (the secret's start at a string's end, its end at a string's
 * start) is redacted too. Values are also matched in their JSON-escaped form (a secret holding `"` or `\`
 * inside a stored JSON string).
 */

export interface NamedSecret {
  name: string;
  value: string;
}

/** Secret values shorter than this are refused: redacting them would mangle ordinary text. */
export const MIN_SECRET_CHARS = 4;
/** The shortest fragment of a cut secret that is redacted at a string's end. */
export const MIN_FRAGMENT_CHARS = 6;

interface Pattern {
  name: string;
  forms: string[];
}

export class SecretRedactor {
  readonly #patterns: Pattern[];

  /** Secrets whose value is empty or shorter than {@link MIN_SECRET_CHARS} are skipped (see `skipped`). */
  constructor(secrets: readonly NamedSecret[]) {
    const patterns: Pattern[] = [];
    for (const secret of secrets) {
      if (secret.value.length < MIN_SECRET_CHARS) continue;
      const escaped = JSON.stringify(secret.value).slice(1, -1);
      patterns.push({
        name: secret.name,
        forms: escaped === secret.value ? [secret.value] : [secret.value, escaped],
      });
    }
    // Longest first, so a secret that contains another is replaced whole.
    patterns.sort((a, b) => longest(b) - longest(a));
    this.#patterns = patterns;
  }

  /** True when there is something to redact. */
  get active(): boolean {
    return this.#patterns.length > 0;
  }

  /**
   * `preserveLength`: each replacement has the replaced text's UTF-8 byte length (the marker padded with
   * `#`, or cut). Used for evidence content, whose retained text must stay the file's size (SPEC §3).
   */
  redactText(text: string, options: { preserveLength?: boolean } = {}): string {
    if (this.#patterns.length === 0 || text === '') return text;
    const mark = (name: string, replaced: string) =>
      options.preserveLength === true ? fitMarker(name, Buffer.byteLength(replaced)) : `[redacted:${name}]`;
    let result = text;
    for (const pattern of this.#patterns) {
      for (const form of pattern.forms) {
        if (result.includes(form)) result = result.split(form).join(mark(pattern.name, form));
      }
    }
    for (const pattern of this.#patterns) {
      for (const form of pattern.forms)
        result = redactCutEnds(result, form, (cut) => mark(pattern.name, cut));
    }
    return result;
  }

  /**
   * An observation with secrets redacted: entry content keeps its byte length (see `redactText`), every
   * other string is redacted normally.
   */
  redactObservation<T extends { payload: { entries: Array<{ content: string | null }> } }>(
    observation: T,
  ): T {
    if (this.#patterns.length === 0) return observation;
    const redacted = this.redactValue(observation);
    redacted.payload.entries.forEach((entry, i) => {
      const original = observation.payload.entries[i]?.content;
      entry.content = original == null ? null : this.redactText(original, { preserveLength: true });
    });
    return redacted;
  }

  /**
   * A copy of a JSON-shaped value with every string redacted (object keys included). Values that are not
   * plain data (class instances) are returned as they are.
   */
  redactValue<T>(value: T): T {
    if (this.#patterns.length === 0) return value;
    return this.#walk(value) as T;
  }

  #walk(value: unknown): unknown {
    if (typeof value === 'string') return this.redactText(value);
    if (Array.isArray(value)) return value.map((item) => this.#walk(item));
    if (value !== null && typeof value === 'object') {
      const prototype = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return value;
      const result: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) result[this.redactText(key)] = this.#walk(item);
      return result;
    }
    return value;
  }
}

/** Redacts a secret cut at the end of `text` (its prefix) or at the start (its suffix). */
function redactCutEnds(text: string, secret: string, marker: (cut: string) => string): string {
  let result = text;
  const longestFragment = Math.min(secret.length - 1, result.length);
  for (let length = longestFragment; length >= MIN_FRAGMENT_CHARS; length--) {
    const fragment = secret.slice(0, length);
    if (result.endsWith(fragment)) {
      result = result.slice(0, result.length - length) + marker(fragment);
      break;
    }
  }
  for (let length = Math.min(secret.length - 1, result.length); length >= MIN_FRAGMENT_CHARS; length--) {
    const fragment = secret.slice(secret.length - length);
    if (result.startsWith(fragment)) {
      result = marker(fragment) + result.slice(length);
      break;
    }
  }
  return result;
}

/** `[redacted:NAME]` padded with `#` (or cut, keeping a closing `]`) to exactly `bytes` ASCII bytes. */
function fitMarker(name: string, bytes: number): string {
  const marker = `[redacted:${name}]`;
  if (marker.length <= bytes) return marker + '#'.repeat(bytes - marker.length);
  return bytes <= 1 ? '#'.repeat(bytes) : `${marker.slice(0, bytes - 1)}]`;
}

function longest(pattern: Pattern): number {
  return Math.max(...pattern.forms.map((form) => form.length));
}

/** The secrets a campaign names, with their values read from the given environment (unset ones skipped). */
export function secretsFromEnvironment(
  names: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): NamedSecret[] {
  const secrets: NamedSecret[] = [];
  for (const name of new Set(names)) {
    const value = env[name];
    if (value !== undefined && value !== '') secrets.push({ name, value });
  }
  return secrets;
}
