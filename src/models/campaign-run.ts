import * as z from 'zod';
import { ScoringExpectationSchema } from './expectation.js';
import { ComponentIdentifierSchema } from './identifier.js';
import { TimestampSchema } from './record.js';

/**
 * One campaign run: what was run against what, and when. Stored once in the memory's `runs` table; each
 * attempt's attack result names it by `runId`, and an attempt's prompt and expectation are its attack's
 * here.
 */
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
      /** The user's task: its condition (SPEC §16); absent when the attack names none. */
      task: ScoringExpectationSchema.optional(),
      /** A control (a benign prompt, SPEC §12); absent means an attack. */
      control: z.boolean().optional(),
    }),
  ),
  startedAt: TimestampSchema,
});
export type CampaignRun = z.infer<typeof CampaignRunSchema>;
