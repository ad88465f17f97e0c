import { InvalidOptionError } from '../errors.js';
import type { Target } from '../targets/target.js';
import type { SecretRedactor } from '../text/secret-redactor.js';
import { runChain } from './attack-chain.js';
import { type AttackerModel, chatAttackerFor } from './attacker-model.js';
import type { AttemptRecord, CampaignRun } from './attempt-record.js';
import { runSurvivingAttempt, storeAttempt } from './attempt-survival.js';
import { type Attack, type Attacker, attackExpectation, type Campaign } from './campaign.js';
import { newCampaignRun } from './campaign-run.js';
import { type OutcomeTotals, type TalliedAttempt, talliedOf, tallyAttempts } from './outcome.js';
import { refusePlantedProof } from './planted-proof.js';
import type { AttemptRecorder } from './run-attempt.js';
import { createRunDirectory } from './workspace.js';

/**
 * The scheduler of a campaign: every attack, `attempts` times, up to `concurrency` attempts at once, each
 * one a {@link runAttempt} in its own fresh workspace (separate roots, so concurrent attempts never see
 * each other's files). Records come back in job order whatever order they finish in; every attempt is
 * settled before this returns or rethrows an abort.
 */

export interface RunCampaignOptions {
  campaign: Campaign;
  target: Target;
  recorder?: AttemptRecorder | undefined;
  /** Overrides the campaign's concurrency. */
  concurrency?: number | undefined;
  keepWorkspaces?: boolean | undefined;
  /** Where the run directory holding every attempt's workspace is created (the system temp directory). */
  workspaceParent?: string | undefined;
  /** Replaces the campaign's secret values in everything stored or printed (SPEC §11). */
  redactor?: SecretRedactor | undefined;
  /** The run's record (a campaign session's `newRun()`); built from the campaign and target otherwise. */
  run?: CampaignRun | undefined;
  /**
   * The attacker model of an adaptive attack's `attacker:` (SPEC §15); by default its chat endpoint, with
   * no key (a campaign session passes one that reads `apiKeyEnv`).
   */
  attackers?: ((attacker: Attacker) => AttackerModel) | undefined;
  onProgress?: ((event: ProgressEvent) => void) | undefined;
  signal?: AbortSignal | undefined;
}

export interface ProgressEvent {
  completed: number;
  total: number;
  record: AttemptRecord;
}

export interface CampaignResult {
  run: CampaignRun;
  attempts: AttemptRecord[];
  totals: OutcomeTotals;
}

export interface StreamedCampaignOptions extends RunCampaignOptions {
  /**
   * Called with each finished record (after the recorder stored it) and its index (0-based, in attack
   * order then attempt number, then round: each job has one slot per round it may run, so an adaptive
   * attack's chain leaves gaps where it stopped early); the next attempt of that lane starts when the
   * returned promise settles.
   * A rejection ends the campaign like any other failure: running attempts are settled first.
   */
  onRecord(record: AttemptRecord, index: number): void | Promise<void>;
}

export interface StreamedCampaignResult {
  run: CampaignRun;
  /** How many attempts finished (each was handed to `onRecord`). */
  finished: number;
  totals: OutcomeTotals;
}

/** Runs the campaign and returns every record, in job order (see {@link runCampaignStreamed}). */
export async function runCampaign(options: RunCampaignOptions): Promise<CampaignResult> {
  const records: Array<AttemptRecord | undefined> = [];
  const { run, totals } = await runCampaignStreamed({
    ...options,
    onRecord: (record, index) => {
      records[index] = record;
    },
  });
  const attempts = records.filter((record): record is AttemptRecord => record !== undefined);
  return { run, attempts, totals };
}

/**
 * Runs the campaign and hands each record to `onRecord` as it finishes instead of collecting them: what
 * the runner keeps per attempt is its outcome, so a campaign's memory does not grow with its attempts.
 * `witness run` spools the records to a private file and reports from it.
 */
export async function runCampaignStreamed(options: StreamedCampaignOptions): Promise<StreamedCampaignResult> {
  const { campaign, target, recorder, signal } = options;
  const concurrency = options.concurrency ?? campaign.concurrency;
  if (!Number.isSafeInteger(concurrency) || concurrency <= 0) {
    throw new InvalidOptionError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  }
  const run =
    options.run ?? newCampaignRun({ campaign, target: target.identifier(), redactor: options.redactor });
  // Bait is not proof: a campaign whose expectation already holds before any agent ran is refused.
  await refusePlantedProof(campaign, { workspaceParent: options.workspaceParent, signal });
  await recorder?.startRun(run);
  // One private (0700) run directory holds every attempt's workspace and home; it is hidden from agents.
  const runDirectory = await createRunDirectory(options.workspaceParent);

  // One job per attack attempt (an adaptive attack's chain is one job); each job owns one slot per round.
  const jobs: Array<{ attack: Attack; attempt: number; slot: number }> = [];
  let slots = 0;
  for (const attack of campaign.attacks) {
    for (let attempt = 1; attempt <= (attack.attempts ?? campaign.attempts); attempt++) {
      jobs.push({ attack, attempt, slot: slots });
      slots += attack.attacker?.rounds ?? 1;
    }
  }
  // Built before any attempt runs, so a missing key variable stops the campaign before it starts.
  const attackerFor = options.attackers ?? ((attacker: Attacker) => chatAttackerFor(attacker));
  const attackers = new Map<string, AttackerModel>();
  for (const attack of campaign.attacks)
    if (attack.attacker !== undefined) attackers.set(attack.id, attackerFor(attack.attacker));
  // What is kept of each finished attempt: the tally's few fields, not the record.
  const tallied: Array<TalliedAttempt | undefined> = new Array(slots);
  let next = 0;
  let completed = 0;
  const worker = async () => {
    while (next < jobs.length) {
      signal?.throwIfAborted();
      const job = jobs[next++] as (typeof jobs)[number];
      let round = 0;
      const finish = async (record: AttemptRecord) => {
        const index = job.slot + round++;
        // What goes wrong in one attempt (or in storing it) is that attempt's outcome, not the run's end.
        const stored = await storeAttempt(recorder, record, run, signal);
        tallied[index] = talliedOf(stored);
        await options.onRecord(stored, index);
        completed++;
        options.onProgress?.({ completed, total: slots, record: stored });
      };
      const context = {
        campaign,
        target,
        recorder,
        run,
        attack: job.attack,
        attempt: job.attempt,
        expectation: attackExpectation(job.attack),
        keepWorkspaces: options.keepWorkspaces,
        runDirectory,
        redactor: options.redactor,
        signal,
      };
      if (job.attack.attacker === undefined) await finish(await runSurvivingAttempt(context));
      else
        await runChain({ context, attacker: attackers.get(job.attack.id) as AttackerModel, onRound: finish });
    }
  };
  // Settle every worker before returning or rethrowing (an abort), so no attempt is still writing to the
  // memory or a workspace when the caller closes them.
  let settled: PromiseSettledResult<void>[];
  try {
    settled = await Promise.allSettled(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
  } finally {
    // Every attempt removed its own directory; what failed to go is already in its record.
    if (options.keepWorkspaces === true) runDirectory.release();
    else runDirectory.dispose();
  }
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const finished = tallied.filter((entry): entry is TalliedAttempt => entry !== undefined);
  return { run, finished: finished.length, totals: tallyAttempts(finished) };
}
