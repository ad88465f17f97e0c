import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { InvalidOptionError } from '../errors.js';
import type { MemoryReader } from '../memory/memory-reader.js';
import { ViewReadModel } from './read-model.js';
import { createViewApp, VIEW_TOKEN_PARAMETER } from './view-app.js';

/**
 * Starts `witness view`'s web server on the loopback interface (127.0.0.1 only, never a wildcard
 * address: the memory holds evidence and sometimes secrets). Every request needs the random access token
 * of the URL it prints (then a cookie; see view-app.ts), so a process that merely finds the port learns
 * nothing. Port 0 (the default) asks the system for a free port.
 *
 * ```ts
 * const reader = await openMemoryReader('./witness.db');
 * const viewer = await startViewServer({ reader });
 * console.log(viewer.url); // http://127.0.0.1:43121/?token=3f0c…
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
  /** What to open: `http://127.0.0.1:PORT/?token=…` (the token becomes a cookie on the first visit). */
  readonly url: string;
  /** `http://127.0.0.1:PORT/`, for building the address of a page once the cookie is set. */
  readonly origin: string;
  /** The access token (the cookie's value). */
  readonly token: string;
  /** The cookie carrying the token, as a `Cookie` header value (for non-browser clients). */
  readonly cookie: string;
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
  const access = { token: randomBytes(24).toString('base64url'), cookie: 'witness_view' };
  const app = createViewApp({
    readModel: new ViewReadModel(options.reader),
    allowedHosts,
    access,
    pollIntervalMs: options.pollIntervalMs,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: VIEW_HOSTNAME, port }, () => resolve(started));
    started.once('error', reject);
  });
  const bound = (server.address() as AddressInfo).port;
  allowedHosts.add(`127.0.0.1:${bound}`);
  allowedHosts.add(`localhost:${bound}`);
  access.cookie = `witness_view_${bound}`;
  const origin = `http://${VIEW_HOSTNAME}:${bound}/`;
  return {
    url: `${origin}?${VIEW_TOKEN_PARAMETER}=${access.token}`,
    origin,
    token: access.token,
    cookie: `${access.cookie}=${access.token}`,
    port: bound,
    close: () =>
      new Promise<void>((resolve, reject) => {
        const http = server as import('node:http').Server;
        http.close((error) => (error === undefined ? resolve() : reject(error)));
        http.closeAllConnections?.();
      }),
  };
}
