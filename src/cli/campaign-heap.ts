import v8 from 'node:v8';

/**
 * How `witness run` and `witness worker` ask V8 to size the heap for a long campaign. This is the CLI's own
 * process, never a library host's: only those two commands call it.
 *
 * Why: an attempt's objects (its transcript, observations, manifests, the records being stored) live for
 * tens of milliseconds, long enough to survive two scavenges, so V8 promotes a steady trickle of them to the
 * old generation. After each full collection V8 sets the next collection's threshold at up to 4× the live
 * size when collections are cheap (they are: the live set is ~25 MiB), so the heap's high-water mark kept
 * climbing with the campaign's length although nothing was retained (61 → 102 MiB reserved over 1,600
 * attempts, with the live set flat). With the growing factor fixed at 1.3×, a full collection comes after ~10–20 MiB of
 * promotions, so the heap stays at the same size however many attempts run.
 *
 * This bounds nothing: it is not a heap cap (`--max-old-space-size` is untouched), so a campaign with large
 * evidence still grows its heap as far as it needs; V8 only collects sooner. The flag is read whenever V8
 * computes a new threshold, so setting it at run time works (Node 20 and 24; test/cli/campaign-heap.test.ts
 * checks it on the Node running the tests). A `--heap-growing-percent` the user gave node itself wins
 * (`node --heap-growing-percent=N $(which witness) run …`; Node refuses it in NODE_OPTIONS).
 */
export const CAMPAIGN_HEAP_GROWING_PERCENT = 30;

/**
 * Applies {@link CAMPAIGN_HEAP_GROWING_PERCENT} unless `execArgv` (node's own arguments) sets its own;
 * returns whether it did.
 */
export function tuneHeapForCampaign(execArgv: readonly string[]): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent\b/.test(arg))) return false;
  v8.setFlagsFromString(`--heap-growing-percent=${CAMPAIGN_HEAP_GROWING_PERCENT}`);
  return true;
}
