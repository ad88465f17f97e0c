import type { IncomingMessage } from 'node:http';

/**
 * The whole body of an HTTP request, or `undefined` once it passes `limitBytes` (nothing past the limit is
 * kept, so a client streaming an endless body costs at most `limitBytes` of memory). Used by every loopback
 * server Witness runs (the scripted model, the recording proxy).
 */
export function readBoundedBody(req: IncomingMessage, limitBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size > limitBytes) {
        over = true;
        chunks.length = 0;
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!over) resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}
