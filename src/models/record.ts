import * as z from 'zod';
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
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * A JSON object that has no own `__proto__` key. JSON.parse makes `__proto__` an ordinary own key, but
 * copying it into a parsed object sets the prototype instead, so zod would drop it silently: the record
 * would not round-trip, and a stored record could differ from the one that was checked. It is refused.
 */
function jsonObject<T extends z.ZodType>(values: T) {
  return z
    .custom<Record<string, unknown>>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        !Array.isArray(value) &&
        !Object.hasOwn(value, '__proto__'),
      'expected a JSON object without a "__proto__" key',
    )
    .pipe(z.record(z.string(), values));
}

export const JsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(JsonValueSchema),
    jsonObject(JsonValueSchema),
  ]),
);
export const JsonObjectSchema = jsonObject(JsonValueSchema);
export type JsonObject = { [key: string]: JsonValue };

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
