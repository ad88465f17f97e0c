import { z } from 'zod';
import { InvalidRecordError } from '../errors.js';

/** Formats zod issues as `path: message` lines, naming the field that is wrong. */
export function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.length === 0 ? '(root)' : formatPath(issue.path);
    return `${path}: ${issue.message}`;
  });
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * Validates `value` against `schema`, throwing an {@link InvalidRecordError} that names each wrong field.
 * `what` names the record for the message ("observation", "score").
 */
export function parseRecord<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = describeIssues(result.error);
  throw new InvalidRecordError(`invalid ${what}: ${issues.join('; ')}`, issues);
}

/** A JSON value (the `params` of an identifier, the `metadata` of a record). */
export const JsonValueSchema = z.json();
export type JsonValue = z.infer<typeof JsonValueSchema>;
export const JsonObjectSchema = z.record(z.string(), JsonValueSchema);
export type JsonObject = z.infer<typeof JsonObjectSchema>;

/** UTC ISO-8601 timestamp with a `Z` suffix, as every record stores times. */
export const TimestampSchema = z.iso.datetime({ offset: false });

/**
 * Serializes with keys sorted at every level: the same value always gives the same bytes (for hashing),
 * and different values give different bytes (a `__proto__` key from parsed JSON is kept, not dropped).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    // No prototype, so assigning `__proto__` makes an own key instead of calling the prototype setter.
    const out: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(value).sort()) {
      const child = (value as Record<string, unknown>)[key];
      if (child !== undefined) out[key] = sortKeys(child);
    }
    return out;
  }
  return value;
}
