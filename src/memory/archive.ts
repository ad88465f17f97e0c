import * as z from 'zod';
import { InvalidRecordError } from '../errors.js';
import { AttackResultSchema } from '../models/attack-result.js';
import { CampaignRunSchema } from '../models/campaign-run.js';
import { ConversationSchema, MessagePieceSchema } from '../models/conversation.js';
import { ObservationSchema } from '../models/observation.js';
import { describeIssues } from '../models/record.js';
import { ScoreSchema } from '../models/score.js';

/**
 * The export format (JSON Lines): one header line, then one record per line in an order that imports
 * cleanly (conversations, message pieces, observations with the pieces they were linked to, scores,
 * campaign runs, attack results), each group oldest first. Exporting, importing into an empty database of either backend
 * and exporting again gives the same bytes.
 *
 * ```jsonl
 * {"recordType":"header","format":"witness-memory","schemaVersion":1}
 * {"recordType":"conversation","record":{...}}
 * {"recordType":"observation","record":{...},"messagePieceIds":["..."]}
 * ```
 */

export const ARCHIVE_FORMAT = 'witness-memory';

export const ArchiveHeaderSchema = z.strictObject({
  recordType: z.literal('header'),
  format: z.literal(ARCHIVE_FORMAT),
  schemaVersion: z.literal(1),
});

export const ArchiveRecordSchema = z.discriminatedUnion('recordType', [
  z.strictObject({ recordType: z.literal('conversation'), record: ConversationSchema }),
  z.strictObject({ recordType: z.literal('message_piece'), record: MessagePieceSchema }),
  z.strictObject({
    recordType: z.literal('observation'),
    record: ObservationSchema,
    messagePieceIds: z.array(z.string().min(1)),
  }),
  z.strictObject({ recordType: z.literal('score'), record: ScoreSchema }),
  z.strictObject({ recordType: z.literal('run'), record: CampaignRunSchema }),
  z.strictObject({ recordType: z.literal('attack_result'), record: AttackResultSchema }),
]);
export type ArchiveRecord = z.infer<typeof ArchiveRecordSchema>;
export type ArchiveRecordType = ArchiveRecord['recordType'];

/** How many records of each type an import read (identical records already stored count as read). */
export type ImportSummary = Record<ArchiveRecordType, number>;

export function emptyImportSummary(): ImportSummary {
  return { conversation: 0, message_piece: 0, observation: 0, score: 0, run: 0, attack_result: 0 };
}

/** The first line of every export. */
export function archiveHeaderLine(): string {
  return JSON.stringify({ recordType: 'header', format: ARCHIVE_FORMAT, schemaVersion: 1 });
}

export function formatArchiveLine(record: ArchiveRecord): string {
  return JSON.stringify(record);
}

/**
 * Parses export lines (the header first), naming the line of any problem. Blank lines are skipped; a
 * missing or foreign header is an {@link InvalidRecordError}.
 */
export async function* parseArchiveLines(
  lines: AsyncIterable<string> | Iterable<string>,
  name = 'export',
): AsyncGenerator<ArchiveRecord> {
  let lineNumber = 0;
  let sawHeader = false;
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InvalidRecordError(`${name} line ${lineNumber} is not JSON: ${(error as Error).message}`);
    }
    if (!sawHeader) {
      const header = ArchiveHeaderSchema.safeParse(value);
      if (!header.success) {
        throw new InvalidRecordError(
          `${name} line ${lineNumber} is not a Witness export header (expected ${archiveHeaderLine()}); export the file with "witness export"`,
          describeIssues(header.error),
        );
      }
      sawHeader = true;
      continue;
    }
    const parsed = ArchiveRecordSchema.safeParse(value);
    if (!parsed.success) {
      const issues = describeIssues(parsed.error);
      throw new InvalidRecordError(
        `${name} line ${lineNumber} is not a valid record: ${issues.join('; ')}`,
        issues,
      );
    }
    yield parsed.data;
  }
  if (!sawHeader) throw new InvalidRecordError(`${name} is empty: it has no Witness export header`);
}
