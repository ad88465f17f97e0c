import * as z from 'zod';
import { JsonObjectSchema, TimestampSchema } from './record.js';
import { MESSAGE_ROLES } from './vocabulary.js';

/**
 * A conversation with a target and the pieces of its messages (SPEC §7). A message is every piece that
 * shares a conversation and a turn; `sequence` orders the pieces inside it. Turns count from 0 and only
 * grow: a piece at a higher turn means the conversation continued after the lower one.
 */

export const MessageRoleSchema = z.enum(MESSAGE_ROLES);

/** Short string tags (`{ "attack": "hook-injection" }`), kept apart from free-form metadata. */
export const LabelsSchema = z.record(z.string(), z.string());
export type Labels = z.infer<typeof LabelsSchema>;

const IdSchema = z.string().min(1);

export const ConversationSchema = z.strictObject({
  id: IdSchema,
  createdAt: TimestampSchema,
  labels: LabelsSchema,
  metadata: JsonObjectSchema,
});
export type Conversation = z.infer<typeof ConversationSchema>;

export const MessagePieceSchema = z.strictObject({
  id: IdSchema,
  conversationId: IdSchema,
  turn: z.number().int().nonnegative().max(2_147_483_647),
  sequence: z.number().int().nonnegative().max(2_147_483_647),
  role: MessageRoleSchema,
  text: z.string(),
  labels: LabelsSchema,
  createdAt: TimestampSchema,
});
export type MessagePiece = z.infer<typeof MessagePieceSchema>;
