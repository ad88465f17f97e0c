import type { Adaptation } from '../models/attempt-chain.js';
import { MAX_INJECTION_CHARS } from '../models/attempt-chain.js';
import type { AttemptRecord } from '../models/attempt-record.js';
import type { TranscriptEvent } from '../targets/transcript.js';
import { AttackerError, type AttackerModel, attackerFeedback } from './attacker-model.js';
import { runSurvivingAttempt } from './attempt-survival.js';
import { type Attack, type Campaign, plantedPath, plantOf } from './campaign.js';
import { type AttemptContext, unrunAttempt } from './run-attempt.js';

/**
 * An adaptive attack's chain (SPEC §15): round 1 plants the attack as written; after each round that did
 * not succeed, the attacker model gets that round's feedback and returns the next text of the planted file,
 * which replaces it in a fresh workspace for the next round. Every round is a full attempt (its own
 * workspace, baseline, evidence and verdict), handed to `onRound` as it finishes, in order. The chain
 * stops at the first round whose condition is proven, or after `rounds`. An attacker that fails ends the
 * chain with one more round, an `error` that never ran, naming why; the campaign goes on.
 *
 * The chain's outcome is {@link chainOutcome} of its rounds; success is the state's verdict alone.
 */

export interface RunChainOptions {
  /** The chain's attempt: `attack.attacker` set; `attempt` is the chain's number within the attack. */
  context: AttemptContext;
  attacker: AttackerModel;
  /**
   * Called with each round's record as it finishes, before the next round starts; `last` says the chain
   * ends with it (it succeeded, it was round `rounds`, or the attacker gave up).
   */
  onRound(record: AttemptRecord, last: boolean): Promise<void>;
  /**
   * Rounds of this chain already stored (by a worker that was lost, SPEC §15: the chain goes on), in
   * order, none of them the last: the chain resumes after them, from the last one's feedback.
   */
  resume?: readonly AttemptRecord[] | undefined;
}

/** The id the rounds of one chain share: its run, attack and attempt (the same wherever a round runs). */
export function chainIdOf(runId: string, attack: string, attempt: number): string {
  return `${runId}/${attack}/${attempt}`;
}

export async function runChain(options: RunChainOptions): Promise<void> {
  const { context, attacker } = options;
  const { attack, campaign } = context;
  const spec = attack.attacker;
  if (spec === undefined) throw new TypeError(`attack ${attack.id} has no attacker`);
  const plant = plantPathOf(attack, campaign);
  const chain = chainIdOf(context.run.runId, attack.id, context.attempt);
  const resumed = options.resume ?? [];
  let previous = resumed.at(-1);
  let text = previous?.adaptation?.injection ?? plantedText(attack, campaign, plant);
  let exchange: TranscriptEvent[] = [];
  for (let round = resumed.length + 1; round <= spec.rounds; round++) {
    if (previous !== undefined) {
      const feedback = attackerFeedback(previous, {
        objective: attack.objective ?? attack.id,
        round: round - 1,
        rounds: spec.rounds,
        plant,
        injection: text,
      });
      try {
        const reply = await attacker.nextInjection(feedback, context.signal);
        text = reply.text;
        exchange = reply.transcript;
      } catch (error) {
        if (context.signal?.aborted) throw context.signal.reason;
        const transcript = error instanceof AttackerError ? error.transcript : [];
        const record = unrunAttempt(
          { ...context, round: { chain, round, adaptation: adaptation(plant, '', transcript) } },
          `the attacker gave no next text, so the chain ends: ${(error as Error).message}`,
        );
        await options.onRound(record, true);
        return;
      }
    }
    // A round that fails unexpectedly is that round's error, not the campaign's end.
    const record = await runSurvivingAttempt({
      ...context,
      attack: withPlantedText(attack, plant, text),
      round: { chain, round, adaptation: adaptation(plant, text, exchange) },
    });
    const last = record.outcome === 'success' || round === spec.rounds;
    await options.onRound(record, last);
    if (last) return;
    previous = record;
  }
}

/** The attack with `plant` holding `text` (planted after the campaign's files, so it wins). */
export function withPlantedText(attack: Attack, plant: string, text: string): Attack {
  const files = (attack.files ?? []).filter((file) => plantedPath(file.path) !== plant);
  return { ...attack, files: [...files, { path: plant, content: text }] };
}

/** The plant of an attack the campaign schema accepted (it refuses an ambiguous one). */
export function plantPathOf(attack: Attack, campaign: Pick<Campaign, 'workspace'>): string {
  const plant = plantOf(attack, campaign);
  if (!plant.ok) throw new TypeError(`attack ${attack.id}: ${plant.error}`);
  return plant.path;
}

/** The text planted at `plant` as the campaign is written (the attack's file wins over the campaign's). */
export function plantedText(attack: Attack, campaign: Pick<Campaign, 'workspace'>, plant: string): string {
  const files = [...campaign.workspace.files, ...(attack.files ?? [])];
  const file = files.filter((entry) => plantedPath(entry.path) === plant).at(-1);
  return file?.content ?? '';
}

/**
 * A chain's outcome from its rounds (in round order): `success` if any round succeeded, else the last
 * round's outcome (an attacker that gave up makes it `error`).
 */
export function chainOutcome<T extends { outcome: AttemptRecord['outcome'] }>(
  rounds: readonly T[],
): T['outcome'] {
  if (rounds.some((round) => round.outcome === 'success')) return 'success';
  return rounds.at(-1)?.outcome ?? 'error';
}

function adaptation(plant: string, text: string, attacker: TranscriptEvent[]): Adaptation {
  return {
    plant,
    injection: text.length <= MAX_INJECTION_CHARS ? text : text.slice(0, MAX_INJECTION_CHARS),
    injectionTruncated: text.length > MAX_INJECTION_CHARS,
    attacker,
  };
}
