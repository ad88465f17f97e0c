import { surface } from '../src/models/scorable.js';
import type { MatchKind } from '../src/models/vocabulary.js';
import type { SourceLimits } from '../src/sources/local-file/limits.js';
import { LocalFileSurfaceSource } from '../src/sources/local-file-source.js';

/**
 * A child process (forked with an IPC channel) that holds one source and runs an acquisition each time the
 * parent asks, replying with what it took and what it saw. Row 1a times Witness here, in a process that
 * does nothing else, as `find | xargs` runs in processes of its own: in the bench's own process each
 * acquisition also paid for the garbage its other contenders left in the heap (the naive baseline's
 * buffers, the procfs seam's and the synchronous walk's observations), collected whenever an acquisition
 * happened to start a major collection.
 *
 *   parent → child: { run: true } | { stop: true }
 *   child → parent: { ready: true } (after its warm-up acquisition) | ServerReply
 */

export interface ServerRequest {
  root: string;
  uri: string;
  match: MatchKind;
  limits?: Partial<SourceLimits>;
}

export interface ServerReply {
  ms: number;
  acquisition: string;
  entries: number;
  /** The seam the acquisition used and its statistics (the observation's metadata). */
  surfaceFs: string;
  stats: Record<string, number>;
}

async function main(): Promise<void> {
  const request = JSON.parse(process.argv[2] ?? '') as ServerRequest;
  const source = new LocalFileSurfaceSource({ root: request.root, ...request.limits });
  const scorable = surface(request.uri, request.match);
  const acquire = async (): Promise<ServerReply> => {
    const started = performance.now();
    const observation = await source.acquire(scorable);
    const ms = performance.now() - started;
    return {
      ms,
      acquisition: observation.acquisition,
      entries: observation.payload.entries.length,
      surfaceFs: String(observation.metadata.surfaceFs),
      stats: (observation.metadata.stats ?? {}) as Record<string, number>,
    };
  };
  await acquire();
  const send = (message: unknown) => process.send?.(message);
  process.on('message', (message: { run?: boolean; stop?: boolean }) => {
    if (message.stop === true) {
      void source.close().then(() => process.disconnect());
      return;
    }
    acquire().then(send, (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    });
  });
  send({ ready: true });
}

await main();
