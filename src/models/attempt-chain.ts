import * as z from 'zod';
import { TranscriptEventSchema } from './transcript.js';

/**
 * What a round of an adaptive attack (SPEC §15) keeps beside its attempt: the planted file the attacker
 * rewrites, the text planted in this round, and the attacker's exchange that produced it (none in round 1,
 * which plants the attack as written). The round's attempt is an ordinary attempt otherwise: its own
 * workspace, baseline, evidence and verdict. Rounds of one chain share its `chain` id and are numbered by
 * `round` (1, 2, …) on the attempt record.
 */

/** Characters of a round's injection text kept on its record (the attacker's reply is bounded the same). */
export const MAX_INJECTION_CHARS = 65_536;

export const ChainIdSchema = z.string().min(1);
export const ChainRoundSchema = z.number().int().min(1).max(50);

export const AdaptationSchema = z.strictObject({
  /** The planted file whose text the attacker rewrites (workspace-relative). */
  plant: z.string().min(1),
  /** The text planted in this round, cut to {@link MAX_INJECTION_CHARS} characters. */
  injection: z.string(),
  injectionTruncated: z.boolean(),
  /** The attacker's request and reply that produced this round's text (secrets redacted, bounded). */
  attacker: z.array(TranscriptEventSchema),
});
export type Adaptation = z.infer<typeof AdaptationSchema>;
