import type { Server } from 'node:http';

/**
 * Starts `server` listening on `host:port` (0 picks a free port); rejects with the listen error (the port
 * is taken, the host is not this machine's) instead of leaving it to an `error` event nobody hears.
 */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
