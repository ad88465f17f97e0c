/**
 * A failed request's error in words: Node's fetch says only "fetch failed" and keeps the reason in its
 * causes, so the message is followed by each cause's code and address (`fetch failed (ECONNREFUSED
 * 127.0.0.1:8719)`), which is what a person needs to see to fix it.
 */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const causes: string[] = [];
  let cause: unknown = error.cause;
  for (let depth = 0; cause instanceof Error && depth < 3; depth++) {
    const { code, address, port } = cause as Error & { code?: unknown; address?: unknown; port?: unknown };
    const where =
      typeof address === 'string' ? ` ${address}${typeof port === 'number' ? `:${port}` : ''}` : '';
    causes.push(typeof code === 'string' ? `${code}${where}` : cause.message);
    cause = cause.cause;
  }
  return causes.length === 0 ? error.message : `${error.message} (${causes.join('; ')})`;
}
