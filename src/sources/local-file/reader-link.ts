/**
 * The shared state of the link between a walk and its second reader (read-lanes.ts): which Int32 of the
 * link's SharedArrayBuffer means what. Kept apart from read-lanes.ts so that the acquisition pool, which
 * only raises `yield` and `lost`, does not load the readers (reserved-read.ts, node:crypto) on the
 * main thread before it can start its first worker (`witness score` waits for that worker).
 */

/** Index of each Int32 in a link's shared state. */
export const LINK = {
  /** Batches the helper has finished (read and closed, result posted). The walker waits on it. */
  completed: 0,
  /** 1 once the helper thread listens on its port: until then no batch is sent to it. */
  attached: 1,
  /** 1 when the helper's thread was lost: the walker stops waiting and fails the acquisition. */
  lost: 2,
  /** 1 when the pool wants the helper's thread for a queued job: the walker stops sending batches. */
  yield: 3,
} as const;
/** Int32s in a link's shared state. */
export const LINK_INTS = 4;
