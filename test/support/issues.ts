import type { z } from 'zod';

/**
 * The fields a schema complains about, each once in first-seen order, as `a.b[0].c` paths ("(root)" for
 * the record itself). An unknown key is reported as the path of that key, so a test can check that the
 * error names the offending field. Returns [] when the value is valid.
 */
export function issuePaths(schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value);
  if (result.success) return [];
  const paths = result.error.issues.flatMap((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [undefined];
    return keys.map((key) => formatPath(key === undefined ? issue.path : [...issue.path, key]));
  });
  return [...new Set(paths)];
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}
