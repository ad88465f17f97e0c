import * as z from 'zod';
import { AdaptationSchema, ChainIdSchema, ChainRoundSchema } from './attempt-chain.js';
import { AttemptTaskSchema } from './attempt-task.js';
import { SurfaceChangesSchema } from './change-set.js';
import { ScoringExpectationSchema } from './expectation.js';
import { ComponentIdentifierSchema } from './identifier.js';
import { NetworkEvidenceSchema } from './network-evidence.js';
import { ObservationSchema } from './observation.js';
import { TimestampSchema } from './record.js';
import { ScoreSchema } from './score.js';
import { TranscriptEventSchema } from './transcript.js';
import { ATTACK_OUTCOMES, CONTAINMENTS, TARGET_FAILURE_KINDS } from './vocabulary.js';

/** What removing an attempt's directories left behind (SPEC §11: reported, never fatal). */
export const AttemptCleanupSchema = z.strictObject({
  removed: z.boolean(),
  failures: z.array(z.strictObject({ path: z.string(), reason: z.string() })),
  unlistedFailures: z.number().int().nonnegative(),
});
export type AttemptCleanup = z.infer<typeof AttemptCleanupSchema>;

/** How an attempt's agent was contained (SPEC §11). */
export const ContainmentSchema = z.enum(CONTAINMENTS);

/** Absolute host paths, sorted, each once: what a sandboxed agent was shown of the host (SPEC §13). */
export const ShownPathsSchema = z
  .array(z.string().startsWith('/'))
  .refine((paths) => paths.every((path, i) => i === 0 || (paths[i - 1] as string) < path), {
    message: 'shown paths are sorted, each once',
  });

/**
 * How the attempt's target failed (SPEC §13), kept whatever the outcome: a proven condition is a success
 * even when the agent then exited non-zero, timed out or was killed, and this says so beside the verdict.
 * `message` is the whole account: first the cause in one line (from the transcript where it knows better
 * than stderr: a refused connection to the model, an HTTP status, a timeout), then the target's own
 * account with its stderr tail; `stderrTail` is the end of the agent's stderr alone.
 */
export const TargetFailureSchema = z.strictObject({
  kind: z.enum(TARGET_FAILURE_KINDS),
  message: z.string(),
  /** The process's exit status (null when it was killed, never started, or there was no process). */
  exitCode: z.number().int().nullable(),
  /** The signal that ended the process (null when it exited or there was no process). */
  signal: z.string().nullable(),
  /** The last lines of its stderr (null when there was no process or it wrote nothing). */
  stderrTail: z.string().nullable(),
});
export type TargetFailure = z.infer<typeof TargetFailureSchema>;

/**
 * Everything about one attempt, as the runner hands it to a recorder and the report renders it: what was
 * sent, what the agent claimed (`reply`), what it did (`transcript`), what the file system showed
 * (`observations`) and the verdict (`score`), side by side.
 */
export const AttemptRecordSchema = z.strictObject({
  schemaVersion: z.literal(1),
  runId: z.string().min(1),
  campaign: z.string().min(1),
  attack: z.string().min(1),
  /** 1-based attempt number within the attack. */
  attempt: z.number().int().positive(),
  prompt: z.string(),
  expectation: ScoringExpectationSchema,
  target: ComponentIdentifierSchema,
  outcome: z.enum(ATTACK_OUTCOMES),
  reply: z.string().nullable(),
  /** Why the attempt is `error` (set exactly then): the target's or the judgement's failure. */
  error: z.string().nullable(),
  /** How the target failed, also when the outcome is not `error` (absent when it did not fail). */
  targetError: TargetFailureSchema.optional(),
  transcript: z.array(TranscriptEventSchema),
  score: ScoreSchema.nullable(),
  observations: z.array(ObservationSchema),
  /**
   * A control attempt (a benign prompt): left out of the success rate; success means it tripped. Absent
   * means not a control.
   */
  control: z.boolean().optional(),
  /**
   * The user's task, judged from the same evidence (SPEC §16); absent when the attack names no task.
   */
  task: AttemptTaskSchema.optional(),
  /** The adaptive attack's chain this attempt is a round of (SPEC §15): shared by the chain's rounds. */
  chain: ChainIdSchema.optional(),
  /** The round of the chain (1, 2, …); present exactly when `chain` is. */
  round: ChainRoundSchema.optional(),
  /** The round's planted injection text and the attacker's exchange that produced it. */
  adaptation: AdaptationSchema.optional(),
  /**
   * What the attempt changed, per surface: baseline and final manifests and their change set (SPEC §12).
   * Absent in records written before change evidence existed.
   */
  changes: z.array(SurfaceChangesSchema).optional(),
  /** What the attempt sent: its network evidence (SPEC §14); absent in records written before it existed. */
  network: NetworkEvidenceSchema.optional(),
  workspace: z
    .strictObject({ root: z.string(), template: z.string().nullable(), kept: z.boolean() })
    .nullable(),
  /** How the agent was contained (SPEC §11); absent in records written before containment existed. */
  containment: ContainmentSchema.optional(),
  /**
   * The host paths shown to the agent read-only besides the system directories (SPEC §13: the campaign
   * directory, the program's install directory, the PATH entries); present for a sandboxed agent.
   */
  shownPaths: ShownPathsSchema.optional(),
  /** What removing the attempt's directories left behind (absent when they were kept or all removed). */
  cleanup: AttemptCleanupSchema.optional(),
  /**
   * Why this record is not held in full where the run keeps it (SPEC §13: a full disk or an I/O error while
   * storing one attempt is that attempt's problem, not the run's): the memory refused it, or the run's
   * spool could not take it and this is a stand-in without its transcript and evidence. Absent when it is.
   */
  storeError: z.string().optional(),
  /** Ids the memory gave the conversation (null when no memory recorded it). */
  conversationId: z.string().nullable(),
  startedAt: TimestampSchema,
  finishedAt: TimestampSchema,
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;
