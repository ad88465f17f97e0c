import os from 'node:os';

/** errno number → name; the first name wins where two share a number (EAGAIN before EWOULDBLOCK). */
const errnoNames = new Map<number, string>();
for (const [name, value] of Object.entries(os.constants.errno)) {
  if (!errnoNames.has(value)) errnoNames.set(value, name);
}

/** The name Node gives an errno (`EXDEV`, `ELOOP`, …), so native calls and Node's own share one vocabulary. */
export function errnoName(errno: number): string {
  return errnoNames.get(errno) ?? `errno ${errno}`;
}

/** A failed native call as Node would report it: an Error whose `code` is the errno's name. */
export function nativeCallError(call: string, errno: number): Error {
  const code = errnoName(errno);
  return Object.assign(new Error(`${call} failed (${code})`), { code, errno: -errno });
}
