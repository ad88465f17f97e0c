import { z } from 'zod';
import { ScoringExpectationSchema } from './expectation.js';
import { ComponentIdentifierSchema } from './identifier.js';
import { ObservationSchema } from './observation.js';
import { TimestampSchema } from './record.js';
import { ScoreSchema } from './score.js';
import { TranscriptEventSchema } from './transcript.js';
import { ATTACK_OUTCOMES } from './vocabulary.js';

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
  workspace: z
    .strictObject({ root: z.string(), template: z.string().nullable(), kept: z.boolean() })
    .nullable(),
  /** Ids the memory gave the conversation (null when no memory recorded it). */
  conversationId: z.string().nullable(),
  startedAt: TimestampSchema,
  finishedAt: TimestampSchema,
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;
