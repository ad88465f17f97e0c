import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `condition` every 20 ms until it holds; throws naming `what` after `limitMs` (default 60 s, a
 * bound for a stuck test on a loaded machine, never a speed check). Tests wait on a sign that the thing
 * they need has happened (a marker file an agent writes) instead of on a fixed sleep.
 */
export async function waitUntil(what: string, condition: () => boolean, limitMs = 60_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited >= limitMs) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`);
    await sleep(20);
  }
}
