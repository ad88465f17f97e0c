import { randomUUID } from 'node:crypto';
import type { Memory } from '../memory/memory.js';
import { type JsonObject, parseRecord } from '../models/record.js';
import type { ScorerMemory } from '../scorers/scorer.js';
import {
  type AttemptRecord,
  AttemptRecordSchema,
  type CampaignRun,
  CampaignRunSchema,
} from './attempt-record.js';
import type { ReportRun } from './report-html.js';
import type { AttemptRecorder } from './run-attempt.js';

/**
 * Stores campaign attempts in the memory (SPEC §7) and reads them back for the report. Per attempt: a
 * conversation (labels campaign/run/attack/attempt) holding the prompt (turn 0) and the reply (turn 1),
 * stored *before* judging so the score is anchored to the reply's pieces; the score and its observation
 * (saved by the scorer, in one transaction); then the attack result, whose metadata carries the run
 * description, the prompt, the expectation and the transcript (secrets already redacted by the target).
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
  | 'listAttackResults'
  | 'getScore'
  | 'observationsForScore'
>;

export class MemoryAttemptRecorder implements AttemptRecorder {
  readonly #memory: CampaignMemory;

  constructor(memory: CampaignMemory) {
    this.#memory = memory;
  }

  async startRun(_run: CampaignRun): Promise<void> {}

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
      createdAt: record.finishedAt,
      metadata: {
        runId: record.runId,
        run: run as unknown as JsonObject,
        prompt: record.prompt,
        expectation: record.expectation as unknown as JsonObject,
        transcript: record.transcript as unknown as JsonObject[],
        startedAt: record.startedAt,
        finishedAt: record.finishedAt,
        control: record.control,
        changes: record.changes as unknown as JsonObject[],
      },
    });
  }
}

/** Reads stored runs back (newest run last), optionally only one campaign's or one run's. */
export async function loadReportRuns(
  memory: CampaignMemory,
  filter: { campaign?: string | undefined; runId?: string | undefined } = {},
): Promise<ReportRun[]> {
  const results = await memory.listAttackResults({ campaign: filter.campaign });
  const runs = new Map<string, ReportRun>();
  for (const result of results) {
    const meta = result.metadata;
    const runId = typeof meta.runId === 'string' ? meta.runId : `unknown-${result.campaign}`;
    if (filter.runId !== undefined && runId !== filter.runId) continue;
    const score = result.scoreId === null ? null : await memory.getScore(result.scoreId);
    const observations = result.scoreId === null ? [] : await memory.observationsForScore(result.scoreId);
    const record = parseRecord(
      AttemptRecordSchema,
      {
        schemaVersion: 1,
        runId,
        campaign: result.campaign,
        attack: result.attack,
        attempt: result.attempt,
        prompt: meta.prompt,
        expectation: meta.expectation,
        target: result.target,
        outcome: result.outcome,
        reply: result.reply,
        error: result.error,
        transcript: meta.transcript ?? [],
        score,
        observations,
        workspace: result.workspace,
        conversationId: result.conversationId,
        control: meta.control === true,
        changes: meta.changes ?? [],
        startedAt: meta.startedAt,
        finishedAt: meta.finishedAt,
      },
      `stored attempt ${result.id}`,
    );
    let entry = runs.get(runId);
    if (entry === undefined) {
      const run = parseRecord(CampaignRunSchema, meta.run, `campaign run ${runId}`);
      entry = { run, attempts: [] };
      runs.set(runId, entry);
    }
    entry.attempts.push(record);
  }
  for (const entry of runs.values()) {
    const order = entry.run.attacks.map((attack) => attack.id);
    entry.attempts.sort((a, b) => order.indexOf(a.attack) - order.indexOf(b.attack) || a.attempt - b.attempt);
  }
  return [...runs.values()];
}

function labelsOf(run: CampaignRun, attack: string, attempt: number): Record<string, string> {
  return { campaign: run.campaign, runId: run.runId, attack, attempt: String(attempt) };
}
