import { z } from 'zod';
import { SurfaceChangesSchema } from '../models/change-set.js';
import { ScoringExpectationSchema } from '../models/expectation.js';
import { ComponentIdentifierSchema } from '../models/identifier.js';
import { ObservationSchema } from '../models/observation.js';
import { TimestampSchema } from '../models/record.js';
import { ScoreSchema } from '../models/score.js';
import { ATTACK_OUTCOMES } from '../models/vocabulary.js';
import { TranscriptEventSchema } from '../targets/transcript.js';

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
  error: z.string().nullable(),
  transcript: z.array(TranscriptEventSchema),
  score: ScoreSchema.nullable(),
  observations: z.array(ObservationSchema),
  /** A control attempt (a benign prompt): left out of the success rate; success means it tripped. */
  control: z.boolean(),
  /** What the attempt changed, per surface: baseline and final manifests and their change set (SPEC §12). */
  changes: z.array(SurfaceChangesSchema),
  workspace: z
    .strictObject({ root: z.string(), template: z.string().nullable(), kept: z.boolean() })
    .nullable(),
  /** Ids the memory gave the conversation (null when no memory recorded it). */
  conversationId: z.string().nullable(),
  startedAt: TimestampSchema,
  finishedAt: TimestampSchema,
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/** One campaign run: what was run against what, and when. */
export const CampaignRunSchema = z.strictObject({
  schemaVersion: z.literal(1),
  runId: z.string().min(1),
  campaign: z.string().min(1),
  description: z.string().nullable(),
  target: ComponentIdentifierSchema,
  attacks: z.array(
    z.strictObject({
      id: z.string(),
      prompt: z.string(),
      attempts: z.number().int().positive(),
      expectation: ScoringExpectationSchema,
      control: z.boolean().optional(),
    }),
  ),
  startedAt: TimestampSchema,
});
export type CampaignRun = z.infer<typeof CampaignRunSchema>;
