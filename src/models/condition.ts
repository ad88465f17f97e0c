import { z } from 'zod';
import { parseLocator } from './locator.js';
import { type Matcher, MatcherSchema } from './matcher.js';
import { parseRecord } from './record.js';
import { MatchKindSchema, type SurfaceScorable, UriSchema } from './scorable.js';
import type { ConditionType, SameVocabulary } from './vocabulary.js';

/**
 * `content_written`: the location holds content (any nonempty content without a matcher, or content the
 * matcher accepts).
 */
export const ContentWrittenSchema = z.strictObject({
  conditionType: z.literal('content_written'),
  uri: UriSchema,
  match: MatchKindSchema.default('exact'),
  matcher: MatcherSchema.optional(),
});
export type ContentWritten = z.infer<typeof ContentWrittenSchema>;

export const ConditionSchema = z.discriminatedUnion('conditionType', [ContentWrittenSchema]);
export type Condition = z.infer<typeof ConditionSchema>;

/** The union discriminates exactly `CONDITION_TYPES` (a compile error otherwise). */
export const CONDITION_TYPES_AGREE: SameVocabulary<Condition['conditionType'], ConditionType> = true;

/**
 * A ContentWritten condition for a location: a uri (exact) or a surface scorable, and an optional matcher.
 */
export function contentWritten(location: string | SurfaceScorable, matcher?: Matcher): ContentWritten {
  const scope = typeof location === 'string' ? { uri: location, match: 'exact' as const } : location;
  parseLocator(scope.uri, scope.match);
  const record: Record<string, unknown> = {
    conditionType: 'content_written',
    uri: scope.uri,
    match: scope.match,
  };
  if (matcher !== undefined) record.matcher = matcher;
  return parseRecord(ContentWrittenSchema, record, 'content_written condition');
}
