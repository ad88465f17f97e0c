import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { InvalidOptionError } from '../errors.js';
import type { MemoryReader } from '../memory/memory-reader.js';
import { ViewReadModel } from './read-model.js';
import { createViewApp } from './view-app.js';

/**
 * Starts `witness view`'s web server on the loopback interface (127.0.0.1 only, never a wildcard
 * address: the memory holds evidence and sometimes secrets, and the viewer has no authentication). Port 0
 * (the default) asks the system for a free port.
 *
 * ```ts
 * const reader = await openMemoryReader('./witness.db');
 * const viewer = await startViewServer({ reader });
 * console.log(viewer.url); // http://127.0.0.1:43121/
 * // …
 * await viewer.close();
 * await reader.close();
 * ```
 */

export interface ViewServerOptions {
  reader: MemoryReader;
  /** 0 (default) for a free port chosen by the system. */
  port?: number | undefined;
  /** How often open pages poll for new attempts. Default 2,000 ms. */
  pollIntervalMs?: number | undefined;
}

export interface ViewServer {
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections and ends open ones. */
  close(): Promise<void>;
}

export const VIEW_HOSTNAME = '127.0.0.1';

export async function startViewServer(options: ViewServerOptions): Promise<ViewServer> {
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new InvalidOptionError(`the port must be a whole number from 0 to 65535, got ${String(port)}`);
  }
  const allowedHosts = new Set<string>();
  const app = createViewApp({
    readModel: new ViewReadModel(options.reader),
    allowedHosts,
    pollIntervalMs: options.pollIntervalMs,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: VIEW_HOSTNAME, port }, () => resolve(started));
    started.once('error', reject);
  });
  const bound = (server.address() as AddressInfo).port;
  allowedHosts.add(`127.0.0.1:${bound}`);
  allowedHosts.add(`localhost:${bound}`);
  return {
    url: `http://${VIEW_HOSTNAME}:${bound}/`,
    port: bound,
    close: () =>
      new Promise<void>((resolve, reject) => {
        const http = server as import('node:http').Server;
        http.close((error) => (error === undefined ? resolve() : reject(error)));
        http.closeAllConnections?.();
      }),
  };
}
