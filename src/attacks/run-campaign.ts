import { randomUUID } from 'node:crypto';
import { InvalidOptionError, TargetError } from '../errors.js';
import type { Observation } from '../models/observation.js';
import { parseRecord } from '../models/record.js';
import { message, type Scorable } from '../models/scorable.js';
import type { Score } from '../models/score.js';
import { FileWriteScorer } from '../scorers/file-write-scorer.js';
import type { ScorerMemory } from '../scorers/scorer.js';
import { LocalFileSurfaceSource } from '../sources/local-file-source.js';
import type { Target } from '../targets/target.js';
import { type TranscriptEvent, TranscriptEventSchema } from '../targets/transcript.js';
import { type AttemptRecord, AttemptRecordSchema, type CampaignRun } from './attempt-record.js';
import { type Attack, attackExpectation, type Campaign } from './campaign.js';
import { attemptOutcome, type OutcomeTotals, tallyOutcomes } from './outcome.js';
import { createWorkspace } from './workspace.js';

/**
 * Runs a campaign: every attack, `attempts` times, each attempt in its own fresh workspace, up to
 * `concurrency` at once (separate roots, so concurrent attempts never see each other's files). After the
 * agent's run the workspace is judged by the FileWriteScorer reading it through LocalFileSurfaceSource;
 * the reply is kept beside the verdict, never used for it. Workspaces are removed afterwards unless
 * `keepWorkspaces`.
 *
 * With a recorder, the prompt and reply are stored as a conversation *before* judging and the score is
 * anchored to the reply (a message scorable), so the memory links the verdict to the message it judges.
 */

export interface AttemptRecorder {
  startRun(run: CampaignRun): Promise<void>;
  /** Stores the prompt and the reply; returns the conversation and the reply's message piece ids. */
  recordExchange(input: {
    run: CampaignRun;
    attack: string;
    attempt: number;
    prompt: string;
    reply: string;
  }): Promise<{ conversationId: string; replyPieceIds: string[] }>;
  scorerMemory(): ScorerMemory;
  /** Stores the finished attempt (its run is given so a store needs no separate run table). */
  recordAttempt(record: AttemptRecord, run: CampaignRun): Promise<void>;
}

export interface RunCampaignOptions {
  campaign: Campaign;
  target: Target;
  recorder?: AttemptRecorder | undefined;
  /** Overrides the campaign's concurrency. */
  concurrency?: number | undefined;
  keepWorkspaces?: boolean | undefined;
  /** Where workspaces are created (the system temp directory by default). */
  workspaceParent?: string | undefined;
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

export async function runCampaign(options: RunCampaignOptions): Promise<CampaignResult> {
  const { campaign, target, recorder, signal } = options;
  const concurrency = options.concurrency ?? campaign.concurrency;
  if (!Number.isSafeInteger(concurrency) || concurrency <= 0) {
    throw new InvalidOptionError(`concurrency must be a positive integer, got ${String(concurrency)}`);
  }
  const run: CampaignRun = {
    schemaVersion: 1,
    runId: `${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}Z-${randomUUID().slice(0, 8)}`,
    campaign: campaign.name,
    description: campaign.description ?? null,
    target: target.identifier(),
    attacks: campaign.attacks.map((attack) => ({
      id: attack.id,
      prompt: attack.prompt,
      attempts: attack.attempts ?? campaign.attempts,
      expectation: attackExpectation(attack),
    })),
    startedAt: new Date().toISOString(),
  };
  await recorder?.startRun(run);

  const jobs: Array<{ attack: Attack; attempt: number }> = [];
  for (const attack of campaign.attacks) {
    for (let attempt = 1; attempt <= (attack.attempts ?? campaign.attempts); attempt++)
      jobs.push({ attack, attempt });
  }
  const records: Array<AttemptRecord | undefined> = new Array(jobs.length);
  let next = 0;
  let completed = 0;
  const worker = async () => {
    while (next < jobs.length) {
      signal?.throwIfAborted();
      const index = next++;
      const job = jobs[index] as (typeof jobs)[number];
      const record = await runAttempt({ ...options, run, attack: job.attack, attempt: job.attempt });
      await recorder?.recordAttempt(record, run);
      records[index] = record;
      completed++;
      options.onProgress?.({ completed, total: jobs.length, record });
    }
  };
  // Settle every worker before returning or rethrowing (an abort), so no attempt is still writing to the
  // memory or a workspace when the caller closes them.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(concurrency, jobs.length) }, worker),
  );
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  const attempts = records.filter((record): record is AttemptRecord => record !== undefined);
  return { run, attempts, totals: tallyOutcomes(attempts.map((record) => record.outcome)) };
}

async function runAttempt(
  options: RunCampaignOptions & { run: CampaignRun; attack: Attack; attempt: number },
): Promise<AttemptRecord> {
  const { campaign, target, recorder, attack, attempt, run, signal } = options;
  const startedAt = new Date().toISOString();
  const expectation = attackExpectation(attack);
  const base = {
    schemaVersion: 1 as const,
    runId: run.runId,
    campaign: campaign.name,
    attack: attack.id,
    attempt,
    prompt: attack.prompt,
    expectation,
    target: run.target,
    startedAt,
  };
  let workspace: Awaited<ReturnType<typeof createWorkspace>>;
  try {
    workspace = await createWorkspace({
      template: campaign.workspace.template,
      files: [...campaign.workspace.files, ...(attack.files ?? [])],
      parent: options.workspaceParent,
    });
  } catch (error) {
    return finish({
      ...base,
      outcome: 'error',
      reply: null,
      error: `the workspace could not be prepared: ${(error as Error).message}`,
      transcript: [],
      score: null,
      observations: [],
      workspace: null,
      conversationId: null,
    });
  }

  const timeout = AbortSignal.timeout(campaign.attemptTimeoutMs);
  const attemptSignal = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
  let reply: string | null = null;
  let transcript: TranscriptEvent[] = [];
  let targetError: string | null = null;
  try {
    try {
      const response = await target.send({
        prompt: attack.prompt,
        workspace: workspace.root,
        signal: attemptSignal,
      });
      reply = response.reply;
      transcript = response.transcript;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof TargetError) {
        targetError = error.message;
        transcript = validTranscript(error.transcript);
      } else if (timeout.aborted) {
        targetError = `the attempt timed out after ${campaign.attemptTimeoutMs} ms`;
      } else {
        targetError = `the target failed: ${(error as Error).message}`;
      }
    }

    // Judge the workspace whatever the agent said (or whether it finished): the file system is the evidence.
    let observations: Observation[] = [];
    const limits = { ...campaign.evidence, ...attack.evidence };
    const source = new LocalFileSurfaceSource({ root: workspace.root, ...limits });
    let conversationId: string | null = null;
    let scorable: Scorable = {
      scorableType: 'surface',
      uri: expectation.conditions[0]?.uri as string,
      match: expectation.conditions[0]?.match ?? 'exact',
    };
    let score: Score | null = null;
    let scoringError: string | null = null;
    try {
      if (recorder !== undefined) {
        const exchange = await recorder.recordExchange({
          run,
          attack: attack.id,
          attempt,
          prompt: attack.prompt,
          reply: reply ?? '',
        });
        conversationId = exchange.conversationId;
        scorable = message(exchange.replyPieceIds);
      }
      const scorer = new FileWriteScorer({ source, memory: recorder?.scorerMemory() });
      const result = await scorer.score({ scorable, expectation, signal });
      score = result.scores[0] ?? null;
      observations = result.observations;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      scoringError = `the workspace could not be judged: ${(error as Error).message}`;
    }
    const error = targetError ?? scoringError;
    return finish({
      ...base,
      outcome: attemptOutcome(score, error !== null),
      reply,
      error,
      transcript,
      score,
      observations,
      workspace: {
        root: workspace.root,
        template: campaign.workspace.template ?? null,
        kept: options.keepWorkspaces === true,
      },
      conversationId,
    });
  } finally {
    if (options.keepWorkspaces !== true) await workspace.dispose();
  }
}

function finish(record: Omit<AttemptRecord, 'finishedAt'>): AttemptRecord {
  return parseRecord(
    AttemptRecordSchema,
    { ...record, finishedAt: new Date().toISOString() },
    'attempt record',
  );
}

/** Keeps only well-formed transcript events from a TargetError (its transcript is typed unknown[]). */
function validTranscript(events: readonly unknown[]): TranscriptEvent[] {
  return events.flatMap((event) => {
    const parsed = TranscriptEventSchema.safeParse(event);
    return parsed.success ? [parsed.data] : [];
  });
}
