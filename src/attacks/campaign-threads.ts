import {
  acquisitionPool,
  CAMPAIGN_THREAD_YOUNG_GENERATION_MB,
} from '../sources/local-file/acquisition-pool.js';

/**
 * Gives the acquisition threads this process starts from now on the campaign's young generation
 * ({@link CAMPAIGN_THREAD_YOUNG_GENERATION_MB}, 6 MiB) instead of the library's larger default (16 MiB, for
 * large acquisitions). A long campaign's steady trickle of attempts otherwise grows every thread's young
 * generation to that cap, memory the process then keeps. `witness run` and `witness
 * worker` call it; a host that runs campaigns through `runCampaign` may call it too, before its first
 * acquisition: threads already running keep theirs. It also reads each manifest with one thread (a
 * campaign's attempts keep both threads busy; a second reader per manifest raised a long campaign's peak
 * by ≈ 20 MiB). It changes only memory and speed, never evidence.
 */
export function tuneAcquisitionThreadsForCampaign(): void {
  acquisitionPool.setThreadYoungGenerationMb(CAMPAIGN_THREAD_YOUNG_GENERATION_MB);
  acquisitionPool.setManifestsShareReaders(false);
}
