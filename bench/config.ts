import type { SourceLimits } from '../src/sources/local-file/limits.js';

/**
 * Sizes of one benchmark run. The full configuration measures at the scale the targets are set for (a
 * 100,000-file workspace, files of hundreds of MiB, a million entries); the quick one keeps every code path with trees small enough for a smoke run, and tests use smaller still.
 */
export interface BenchConfig {
  /** Timed repetitions of each measurement; the table shows medians. */
  runs: number;
  /** Small-file tree of rows 1, 2, 4 and 5. */
  mainTree: { files: number; directories: number };
  /** Sizes in MiB of the large files of row 3. */
  bigFileSizesMiB: number[];
  /** Sequential exact acquisitions timed in row 4. */
  exactCalls: number;
  /** Row 4a: calls made (and timed apart) before the timed ones, while V8 compiles the hot path. */
  exactWarmupCalls: number;
  /** Row 2: acquisitions made before the timed ones (the first is reported), while V8 compiles the walk. */
  prefixWarmupCalls: number;
  /** `witness score` processes timed in row 4. */
  cliRuns: number;
  /** Entries per stored observation, and replays timed, in row 5. */
  replay: { entries: number; replays: number };
  /** Empty-file tree of row 6: directories × files per directory listed entries. */
  entriesTree: { directories: number; filesPerDirectory: number };
  /** Budgets of row 6; empty keeps the defaults (the full run), smaller trees need smaller budgets. */
  memoryLimits: Partial<SourceLimits>;
  /** Row 8: mock attempts per `witness run` (even numbers: two attacks), smallest first. */
  campaignAttempts: number[];
  /** Tree of row 9 (change evidence): files spread over directories. Default 10,000 / 100. */
  changeTree?: { files: number; directories: number };
  /** Row 10 (the queue): mock attempts per run and the `witness worker` counts. Default 40, [1, 2, 3]. */
  queue?: { attempts: number; workerCounts: number[] };
  /** Row 11a: attempts timed under each of network: none and network: proxy. Default 20. */
  networkAttempts?: number;
  /** Row 11b: requests per timed round, through the proxy and direct. Default 2,000. */
  networkRequests?: number;
  /** Row 12 (report and viewer at scale): attempts stored per run, smallest first. Default 2,000 and 20,000. */
  reportAttempts?: number[];
  /** Row 14 (export and import): attempts in the archive, smallest first. Default 1,000 and 10,000. */
  archiveAttempts?: number[];
  /**
   * Row 13 (evidence content in the memory): observations of one shared file of `contentKiB`, and the size
   * of one file of control characters. Default 2,000 × 40 KiB, 16 MiB.
   */
  evidenceStore?: { observations: number; contentKiB: number; controlMiB: number };
  /**
   * Row 15 (a hundred thousand attempts): attempts of the stored run the viewer and the report open (the
   * baseline run holds a tenth), the two `witness run` sizes, and the page requests timed per page.
   * Default 100,000, [1,000, 10,000], 50.
   */
  memoryScale?: { storedAttempts?: number; campaignAttempts?: number[]; requests?: number };
}

export const FULL_CONFIG: BenchConfig = {
  runs: 5,
  mainTree: { files: 100_000, directories: 5_000 },
  bigFileSizesMiB: [50, 100, 200],
  exactCalls: 10_000,
  exactWarmupCalls: 3_000,
  prefixWarmupCalls: 30,
  cliRuns: 10,
  replay: { entries: 1_000, replays: 300 },
  entriesTree: { directories: 1_000, filesPerDirectory: 1_000 },
  memoryLimits: {},
  campaignAttempts: [100, 400, 1_600],
  changeTree: { files: 10_000, directories: 100 },
  queue: { attempts: 40, workerCounts: [1, 2, 3] },
  reportAttempts: [2_000, 20_000],
};

export const QUICK_CONFIG: BenchConfig = {
  runs: 3,
  mainTree: { files: 4_000, directories: 200 },
  bigFileSizesMiB: [4, 8, 16],
  exactCalls: 1_000,
  exactWarmupCalls: 300,
  prefixWarmupCalls: 10,
  cliRuns: 3,
  replay: { entries: 500, replays: 50 },
  entriesTree: { directories: 40, filesPerDirectory: 500 },
  memoryLimits: { maxListedEntries: 2_000 },
  campaignAttempts: [20, 80, 320],
  changeTree: { files: 2_000, directories: 40 },
  queue: { attempts: 20, workerCounts: [1, 2, 3] },
  networkAttempts: 10,
  networkRequests: 1_000,
  reportAttempts: [400, 4_000],
  archiveAttempts: [200, 1_000],
  evidenceStore: { observations: 500, contentKiB: 40, controlMiB: 4 },
  memoryScale: { storedAttempts: 5_000, campaignAttempts: [100, 400], requests: 20 },
};
