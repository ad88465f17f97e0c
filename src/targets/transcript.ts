/** The transcript schemas are records (they are stored with attack results): see models/transcript.ts. */
export type { HttpExchangeEvent, TranscriptEvent } from '../models/transcript.js';
export {
  HttpExchangeEventSchema,
  MESSAGE_ROLES,
  NoteEventSchema,
  ProcessEventSchema,
  ToolCallEventSchema,
  ToolResultEventSchema,
  TranscriptEventSchema,
  TranscriptMessageSchema,
} from '../models/transcript.js';
