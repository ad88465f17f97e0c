import * as z from 'zod';
import { parseLocator } from './locator.js';
import { parseRecord } from './record.js';
import {
  MATCH_KINDS,
  type MatchKind,
  type SameVocabulary,
  type ScorableType,
  SURFACES,
} from './vocabulary.js';

/** What a score is about (SPEC §1): stored message pieces, loose text, or a location under a root. */

export const MatchKindSchema = z.enum(MATCH_KINDS);
/** Which surface a locator is on: the attempt's workspace or its home (conditions, manifests). */
export const SurfaceKindSchema = z.enum(SURFACES);

/** A locator uri as stored: non-empty, no NUL. Full locator rules are checked by {@link parseLocator}. */
export const UriSchema = z
  .string()
  .min(1, 'uri must not be empty')
  .refine((uri) => !uri.includes('\0'), 'uri must not contain a NUL byte')
  .refine((uri) => !/\p{Cs}/u.test(uri), 'uri must be well-formed Unicode (no unpaired surrogate)');

export const SurfaceScorableSchema = z.strictObject({
  scorableType: z.literal('surface'),
  uri: UriSchema,
  match: MatchKindSchema.default('exact'),
});
export type SurfaceScorable = z.infer<typeof SurfaceScorableSchema>;

export const MessageScorableSchema = z.strictObject({
  scorableType: z.literal('message'),
  pieceIds: z.array(z.string().min(1)).min(1, 'a message scorable names at least one message piece'),
});
export type MessageScorable = z.infer<typeof MessageScorableSchema>;

export const ContentScorableSchema = z.strictObject({
  scorableType: z.literal('content'),
  text: z.string(),
});
export type ContentScorable = z.infer<typeof ContentScorableSchema>;

export const ScorableSchema = z.discriminatedUnion('scorableType', [
  MessageScorableSchema,
  ContentScorableSchema,
  SurfaceScorableSchema,
]);
export type Scorable = z.infer<typeof ScorableSchema>;

/** The union discriminates exactly `SCORABLE_TYPES` (a compile error otherwise). */
export const SCORABLE_TYPES_AGREE: SameVocabulary<Scorable['scorableType'], ScorableType> = true;

/** A surface scorable for `uri` (exact by default). The locator rules are checked now, before any I/O. */
export function surface(uri: string, match: MatchKind = 'exact'): SurfaceScorable {
  parseLocator(uri, match);
  return parseRecord(SurfaceScorableSchema, { scorableType: 'surface', uri, match }, 'surface scorable');
}

/** A scorable naming stored message pieces (one message of one conversation). */
export function message(pieceIds: readonly string[]): MessageScorable {
  return parseRecord(
    MessageScorableSchema,
    { scorableType: 'message', pieceIds: [...pieceIds] },
    'message scorable',
  );
}

/** A scorable holding loose text. */
export function content(text: string): ContentScorable {
  return parseRecord(ContentScorableSchema, { scorableType: 'content', text }, 'content scorable');
}

/** True when two locators name the same location (uri, with or without its leading "/", and match kind). */
export function sameLocator(
  a: { uri: string; match: MatchKind },
  b: { uri: string; match: MatchKind },
): boolean {
  return rooted(a.uri) === rooted(b.uri) && a.match === b.match;
}

/** A leading "/" is optional in a uri (it means the root), so "/a" and "a" name the same location. */
function rooted(uri: string): string {
  return uri.startsWith('/') ? uri : `/${uri}`;
}
