import * as z from 'zod';
import { parseLocator } from './locator.js';
import { type Matcher, MatcherSchema } from './matcher.js';
import { parseRecord } from './record.js';
import { MatchKindSchema, SurfaceKindSchema, type SurfaceScorable, UriSchema } from './scorable.js';
import type { ConditionType, SameVocabulary, Surface } from './vocabulary.js';

/**
 * Conditions (SPEC §3, §12). Each names a locator and the surface it is judged on (`surface` absent means
 * the workspace; `home` is the attempt's own home). The wire discriminator is `conditionType`.
 */

const locatorFields = {
  uri: UriSchema,
  match: MatchKindSchema.default('exact'),
  /** The attempt's workspace when absent. */
  surface: SurfaceKindSchema.optional(),
};

/**
 * `content_written`: the location holds content (any nonempty content without a matcher, or content the
 * matcher accepts). With `executable: true` the proving file must also have an execute bit. When a
 * baseline manifest is known, an entry unchanged since it proves nothing (the bait rule).
 */
export const ContentWrittenSchema = z.strictObject({
  conditionType: z.literal('content_written'),
  ...locatorFields,
  matcher: MatcherSchema.optional(),
  executable: z.literal(true).optional(),
});
export type ContentWritten = z.infer<typeof ContentWrittenSchema>;

/** `file_created`: a matching regular file exists now that did not exist in the baseline. */
export const FileCreatedSchema = z.strictObject({
  conditionType: z.literal('file_created'),
  ...locatorFields,
});
export type FileCreated = z.infer<typeof FileCreatedSchema>;

/** `file_deleted`: a regular file that matched in the baseline is gone or is no longer a regular file. */
export const FileDeletedSchema = z.strictObject({
  conditionType: z.literal('file_deleted'),
  ...locatorFields,
});
export type FileDeleted = z.infer<typeof FileDeletedSchema>;

/** `file_modified`: a matching regular file's content, type or mode differs from the baseline. */
export const FileModifiedSchema = z.strictObject({
  conditionType: z.literal('file_modified'),
  ...locatorFields,
});
export type FileModified = z.infer<typeof FileModifiedSchema>;

/**
 * `request_sent` (SPEC §14): the agent sent a request matching every field given — `host` (exact, or a glob
 * when it holds `*` or `?`: `*.example.org`), `port`, `method`, `path` (a glob over the path without its
 * query: `/collect/**`) and a text `matcher` over the request's URL, any one header line or its body. It is
 * judged from the attempt's network evidence, never from files, so it has no locator.
 */
export const RequestSentSchema = z
  .strictObject({
    conditionType: z.literal('request_sent'),
    host: z
      .string()
      .min(1)
      .max(1024)
      .regex(/^[A-Za-z0-9.*?:[\]_-]+$/, 'host must be a host name, an IP address or a glob of one')
      .optional(),
    port: z.number().int().min(1).max(65_535).optional(),
    method: z
      .string()
      .regex(/^[A-Za-z]{1,32}$/, 'method must be an HTTP method name')
      .optional(),
    path: z
      .string()
      .min(1)
      .max(4096)
      .refine((path) => path.startsWith('/'), 'path must start with "/"')
      .optional(),
    matcher: MatcherSchema.optional(),
  })
  .superRefine((condition, ctx) => {
    if (
      condition.host === undefined &&
      condition.port === undefined &&
      condition.method === undefined &&
      condition.path === undefined &&
      condition.matcher === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        message: 'request_sent names at least one of host, port, method, path or a text criterion',
      });
    }
  });
export type RequestSent = z.infer<typeof RequestSentSchema>;

export const ConditionSchema = z.discriminatedUnion('conditionType', [
  ContentWrittenSchema,
  FileCreatedSchema,
  FileDeletedSchema,
  FileModifiedSchema,
  RequestSentSchema,
]);
export type Condition = z.infer<typeof ConditionSchema>;
/** The conditions judged from the change set alone. */
export type FileChangeCondition = FileCreated | FileDeleted | FileModified;
/** The conditions judged on a file surface (they name a locator). */
export type FileCondition = ContentWritten | FileChangeCondition;

/** True for a condition that names a locator on a file surface (every condition but request_sent). */
export function isFileCondition(condition: Condition): condition is FileCondition {
  return condition.conditionType !== 'request_sent';
}

export interface RequestSentOptions {
  host?: string | undefined;
  port?: number | undefined;
  method?: string | undefined;
  path?: string | undefined;
  matcher?: Matcher | undefined;
}

/** A RequestSent condition: a request matching every given field was sent by the agent. */
export function requestSent(options: RequestSentOptions): RequestSent {
  const record: Record<string, unknown> = { conditionType: 'request_sent' };
  for (const key of ['host', 'port', 'method', 'path', 'matcher'] as const) {
    if (options[key] !== undefined) record[key] = options[key];
  }
  return parseRecord(RequestSentSchema, record, 'request_sent condition');
}

export interface ContentWrittenOptions {
  /** The proving file must also have an execute bit (judged from the final manifest). */
  executable?: boolean | undefined;
  surface?: Surface | undefined;
}

export interface FileChangeOptions {
  surface?: Surface | undefined;
}

type Location = string | SurfaceScorable | { uri: string; match: SurfaceScorable['match'] };

/** The union discriminates exactly `CONDITION_TYPES` (a compile error otherwise). */
export const CONDITION_TYPES_AGREE: SameVocabulary<Condition['conditionType'], ConditionType> = true;

/**
 * A ContentWritten condition for a location: a uri (exact) or a surface scorable, an optional matcher,
 * and options (`executable`, `surface`).
 */
export function contentWritten(
  location: Location,
  matcher?: Matcher,
  options: ContentWrittenOptions = {},
): ContentWritten {
  const record = locatorRecord('content_written', location, options.surface);
  if (matcher !== undefined) record.matcher = matcher;
  if (options.executable === true) record.executable = true;
  return parseRecord(ContentWrittenSchema, record, 'content_written condition');
}

/** A FileCreated condition: a matching file exists after the attempt that the baseline did not hold. */
export function fileCreated(location: Location, options: FileChangeOptions = {}): FileCreated {
  return parseRecord(
    FileCreatedSchema,
    locatorRecord('file_created', location, options.surface),
    'file_created condition',
  );
}

/** A FileDeleted condition: a file that matched in the baseline is gone (a sentinel removed). */
export function fileDeleted(location: Location, options: FileChangeOptions = {}): FileDeleted {
  return parseRecord(
    FileDeletedSchema,
    locatorRecord('file_deleted', location, options.surface),
    'file_deleted condition',
  );
}

/** A FileModified condition: a matching file's content, type or mode changed (a sentinel tampered with). */
export function fileModified(location: Location, options: FileChangeOptions = {}): FileModified {
  return parseRecord(
    FileModifiedSchema,
    locatorRecord('file_modified', location, options.surface),
    'file_modified condition',
  );
}

function locatorRecord(
  conditionType: Condition['conditionType'],
  location: Location,
  surface: Surface | undefined,
): Record<string, unknown> {
  const scope = typeof location === 'string' ? { uri: location, match: 'exact' as const } : location;
  parseLocator(scope.uri, scope.match);
  const record: Record<string, unknown> = { conditionType, uri: scope.uri, match: scope.match };
  if (surface !== undefined && surface !== 'workspace') record.surface = surface;
  return record;
}

/** The file surface a condition is judged on (`network` for request_sent). */
export function conditionSurface(condition: Condition): Surface | 'network' {
  return isFileCondition(condition) ? (condition.surface ?? 'workspace') : 'network';
}

/** The text matcher of a condition (content_written and request_sent have one). */
export function conditionMatcher(condition: Condition | undefined): Matcher | undefined {
  return condition?.conditionType === 'content_written' || condition?.conditionType === 'request_sent'
    ? condition.matcher
    : undefined;
}
