import * as z from 'zod';
import { JsonValueSchema } from './record.js';
import { MESSAGE_ROLES } from './vocabulary.js';

/**
 * What a target did during one attempt, in order: messages, tool calls and their results, raw HTTP
 * exchanges (secrets redacted), subprocess runs. The transcript is evidence of what the agent *said and
 * asked for*; the verdict still comes from the file system, never from the transcript.
 */

/** The roles are the vocabulary's (models/vocabulary.ts), re-exported for the transcript's readers. */
export { MESSAGE_ROLES };

export const TranscriptMessageSchema = z.strictObject({
  kind: z.literal('message'),
  role: z.enum(MESSAGE_ROLES),
  text: z.string(),
});

export const ToolCallEventSchema = z.strictObject({
  kind: z.literal('tool_call'),
  callId: z.string().optional(),
  name: z.string(),
  arguments: JsonValueSchema,
});

export const ToolResultEventSchema = z.strictObject({
  kind: z.literal('tool_result'),
  callId: z.string().optional(),
  name: z.string(),
  ok: z.boolean(),
  text: z.string(),
});

export const HttpExchangeEventSchema = z.strictObject({
  kind: z.literal('http_exchange'),
  /** 1 for the first try of a request, 2+ for retries. */
  try: z.number().int().positive(),
  request: z.strictObject({
    method: z.string(),
    url: z.string(),
    headers: z.record(z.string(), z.string()),
    body: JsonValueSchema,
  }),
  response: z
    .strictObject({
      status: z.number().int(),
      body: JsonValueSchema,
    })
    .nullable(),
  error: z.string().optional(),
  durationMs: z.number().nonnegative(),
});

export const ProcessEventSchema = z.strictObject({
  kind: z.literal('process'),
  command: z.string(),
  args: z.array(z.string()),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  timedOut: z.boolean(),
  stderr: z.string(),
  stdoutTruncated: z.boolean(),
});

export const NoteEventSchema = z.strictObject({ kind: z.literal('note'), text: z.string() });

export const TranscriptEventSchema = z.discriminatedUnion('kind', [
  TranscriptMessageSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  HttpExchangeEventSchema,
  ProcessEventSchema,
  NoteEventSchema,
]);
export type TranscriptEvent = z.infer<typeof TranscriptEventSchema>;
export type HttpExchangeEvent = z.infer<typeof HttpExchangeEventSchema>;
