import { randomUUID } from 'node:crypto';
import type { Memory } from '../memory/memory.js';
import type { AttackResult } from '../models/attack-result.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { CampaignRun } from '../models/campaign-run.js';
import type { ScorerMemory } from '../scorers/scorer.js';
import type { AttemptRecorder } from './run-attempt.js';

/**
 * Stores campaign attempts in the memory (SPEC §7) and reads them back for the report. The run is stored
 * once, when it starts (its own record). Per attempt: a conversation (labels campaign/run/attack/attempt)
 * holding the prompt (turn 0) and the reply (turn 1), stored *before* judging so the score is anchored to
 * the reply's pieces; the score and its observation (saved by the scorer, in one transaction); then the
 * attack result naming its run, with the start time and the transcript (secrets already redacted by the
 * target). Reading back is the memory's join (`listRuns`, `listAttempts`).
 *
 * `CampaignMemory` is the part of the Memory interface this module uses.
 */

export type CampaignMemory = Pick<
  Memory,
  | 'resolveMessage'
  | 'saveScore'
  | 'createConversation'
  | 'appendMessage'
  | 'saveAttackResult'
  | 'saveRun'
  | 'listRuns'
  | 'listAttempts'
>;

/**
 * The memory with its attack results handed to `save` instead: every other call goes to `memory`. The queue
 * worker uses it to store a result in the transaction that completes its job.
 */
export function withAttackResultSaver(
  memory: CampaignMemory,
  save: (result: AttackResult) => Promise<void>,
): CampaignMemory {
  return {
    resolveMessage: (...args) => memory.resolveMessage(...args),
    saveScore: (...args) => memory.saveScore(...args),
    createConversation: (...args) => memory.createConversation(...args),
    appendMessage: (...args) => memory.appendMessage(...args),
    saveRun: (...args) => memory.saveRun(...args),
    listRuns: (...args) => memory.listRuns(...args),
    listAttempts: (...args) => memory.listAttempts(...args),
    saveAttackResult: save,
  };
}

export class MemoryAttemptRecorder implements AttemptRecorder {
  readonly #memory: CampaignMemory;

  constructor(memory: CampaignMemory) {
    this.#memory = memory;
  }

  async startRun(run: CampaignRun): Promise<void> {
    await this.#memory.saveRun(run);
  }

  async recordExchange(input: {
    run: CampaignRun;
    attack: string;
    attempt: number;
    prompt: string;
    reply: string;
  }): Promise<{ conversationId: string; replyPieceIds: string[] }> {
    const conversation = await this.#memory.createConversation({
      labels: labelsOf(input.run, input.attack, input.attempt),
    });
    await this.#memory.appendMessage({
      conversationId: conversation.id,
      role: 'user',
      texts: [input.prompt],
    });
    const reply = await this.#memory.appendMessage({
      conversationId: conversation.id,
      role: 'assistant',
      texts: [input.reply],
    });
    return { conversationId: conversation.id, replyPieceIds: reply.map((piece) => piece.id) };
  }

  scorerMemory(): ScorerMemory {
    return this.#memory;
  }

  async recordAttempt(record: AttemptRecord, run: CampaignRun): Promise<void> {
    let conversationId = record.conversationId;
    if (conversationId === null) {
      // The attempt ended before an exchange was stored (its workspace could not be prepared).
      conversationId = (
        await this.#memory.createConversation({ labels: labelsOf(run, record.attack, record.attempt) })
      ).id;
    }
    await this.#memory.saveAttackResult({
      id: randomUUID(),
      campaign: record.campaign,
      attack: record.attack,
      attempt: record.attempt,
      conversationId,
      outcome: record.outcome,
      scoreId: record.score?.id ?? null,
      target: record.target,
      workspace: record.workspace,
      reply: record.reply,
      error: record.error,
      ...(record.targetError === undefined ? {} : { targetError: record.targetError }),
      createdAt: record.finishedAt,
      runId: record.runId,
      startedAt: record.startedAt,
      transcript: record.transcript,
      ...(record.containment === undefined ? {} : { containment: record.containment }),
      ...(record.shownPaths === undefined ? {} : { shownPaths: record.shownPaths }),
      ...(record.cleanup === undefined ? {} : { cleanup: record.cleanup }),
      ...(record.changes === undefined ? {} : { changes: record.changes }),
      ...(record.chain === undefined ? {} : { chain: record.chain, round: record.round }),
      ...(record.adaptation === undefined ? {} : { adaptation: record.adaptation }),
      ...(record.task === undefined
        ? {}
        : {
            task: {
              outcome: record.task.outcome,
              rationale: record.task.rationale,
              scoreId: record.task.scoreId,
            },
          }),
      ...(record.network === undefined ? {} : { network: record.network }),
      metadata: {},
    });
  }
}

/** A stored run and its attempts. */
export interface StoredRun {
  run: CampaignRun;
  attempts: AttemptRecord[];
}

/** Reads stored runs back (oldest run first, newest last), optionally only one campaign's or one run's. */
export async function loadReportRuns(
  memory: CampaignMemory,
  filter: { campaign?: string | undefined; runId?: string | undefined } = {},
): Promise<StoredRun[]> {
  const runs = await memory.listRuns({ campaign: filter.campaign });
  const wanted = filter.runId === undefined ? runs : runs.filter((run) => run.runId === filter.runId);
  const report: StoredRun[] = [];
  for (const run of wanted) report.push({ run, attempts: await memory.listAttempts(run.runId) });
  return report;
}

function labelsOf(run: CampaignRun, attack: string, attempt: number): Record<string, string> {
  return { campaign: run.campaign, runId: run.runId, attack, attempt: String(attempt) };
}
