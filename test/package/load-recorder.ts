import type { MessagePort } from 'node:worker_threads';

/**
 * A module-resolution hook (registered with `module.register`) that reports every URL resolved in the
 * process, so a test can say which packages an import actually loaded, not which it declares.
 */

let port: MessagePort | undefined;

export function initialize(data: { port: MessagePort }): void {
  port = data.port;
}

export async function resolve(
  specifier: string,
  context: unknown,
  next: (specifier: string, context: unknown) => Promise<{ url: string }>,
): Promise<{ url: string }> {
  const result = await next(specifier, context);
  port?.postMessage(result.url);
  return result;
}
