import * as z from 'zod';
import { AdaptationSchema, ChainIdSchema, ChainRoundSchema } from './attempt-chain.js';
import {
  AttemptCleanupSchema,
  ContainmentSchema,
  ShownPathsSchema,
  TargetFailureSchema,
} from './attempt-record.js';
import { TaskVerdictSchema } from './attempt-task.js';
import { SurfaceChangesSchema } from './change-set.js';
import { ComponentIdentifierSchema } from './identifier.js';
import { NetworkEvidenceSchema } from './network-evidence.js';
import { JsonObjectSchema, TimestampSchema } from './record.js';
import type { Score } from './score.js';
import { TranscriptEventSchema } from './transcript.js';
import { ATTACK_OUTCOMES } from './vocabulary.js';

/**
 * The record of one attack attempt (SPEC §8): which campaign and attack, the conversation it held, how it
 * ended, the score that decided it, the workspace it ran in and the agent's reply (what it *claimed*, kept
 * next to what the file system shows).
 *
 * Invariants: `success` and `failure` rest on a score (`scoreId`); `error` names what failed in `error`;
 * only `error` carries an error message.
 *
 * An attempt of a campaign run names its run (`runId`, stored in the memory's `runs` table) and carries
 * when it started and the target's transcript (secrets already redacted by the target); the attempt's
 * prompt and expectation are its attack's in the run. Results stored without a run omit the three.
 */

export const AttackOutcomeSchema = z.enum(ATTACK_OUTCOMES);

/** Where the attempt ran. `kept` is true when the directory was left on disk after the attempt. */
export const AttemptWorkspaceSchema = z.strictObject({
  root: z.string().min(1),
  template: z.string().min(1).nullable(),
  kept: z.boolean(),
});
export type AttemptWorkspace = z.infer<typeof AttemptWorkspaceSchema>;

export const AttackResultSchema = z
  .strictObject({
    id: z.string().min(1),
    campaign: z.string().min(1),
    attack: z.string().min(1),
    attempt: z.number().int().nonnegative().max(2_147_483_647),
    conversationId: z.string().min(1),
    outcome: AttackOutcomeSchema,
    scoreId: z.string().min(1).nullable(),
    target: ComponentIdentifierSchema.nullable(),
    workspace: AttemptWorkspaceSchema.nullable(),
    reply: z.string().nullable(),
    error: z.string().nullable(),
    /** How the target failed, whatever the outcome (SPEC §13); absent when it did not fail. */
    targetError: TargetFailureSchema.optional(),
    createdAt: TimestampSchema,
    runId: z.string().min(1).optional(),
    startedAt: TimestampSchema.optional(),
    transcript: z.array(TranscriptEventSchema).optional(),
    containment: ContainmentSchema.optional(),
    /** Host paths shown to a sandboxed agent besides the system directories (SPEC §13). */
    shownPaths: ShownPathsSchema.optional(),
    cleanup: AttemptCleanupSchema.optional(),
    /** The user's task, judged (SPEC §16); absent when the attack names no task. */
    task: TaskVerdictSchema.optional(),
    /** The adaptive attack's chain this attempt is a round of (SPEC §15): shared by the chain's rounds. */
    chain: ChainIdSchema.optional(),
    /** The round of the chain (1, 2, …); present exactly when `chain` is. */
    round: ChainRoundSchema.optional(),
    /** The round's planted injection text and the attacker's exchange that produced it. */
    adaptation: AdaptationSchema.optional(),
    /** What the attempt changed, per surface (SPEC §12); absent in results stored before change evidence. */
    changes: z.array(SurfaceChangesSchema).optional(),
    /** What the attempt sent (SPEC §14); absent in results stored before network evidence. */
    network: NetworkEvidenceSchema.optional(),
    metadata: JsonObjectSchema,
  })
  .superRefine((result, ctx) => {
    if ((result.outcome === 'success' || result.outcome === 'failure') && result.scoreId === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['scoreId'],
        message: `a "${result.outcome}" outcome rests on a score`,
      });
    }
    if ((result.chain === undefined) !== (result.round === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['round'],
        message: 'a round is numbered exactly when it belongs to a chain',
      });
    }
    if ((result.outcome === 'error') !== (result.error !== null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['error'],
        message: 'error is set exactly when the outcome is "error"',
      });
    }
  });
export type AttackResult = z.infer<typeof AttackResultSchema>;

/** The attack outcome a score stands for: true is a success, false a failure, no value is undetermined. */
export function outcomeOf(score: Pick<Score, 'status' | 'value'>): 'success' | 'failure' | 'undetermined' {
  if (score.status === 'undetermined' || score.value === null) return 'undetermined';
  return score.value ? 'success' : 'failure';
}
