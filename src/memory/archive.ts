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
 * campaign runs, attack results), each group in the order of its key, then one closing line that counts
 * the records of each type. Exporting, importing into an empty database of either backend and exporting
 * again gives the same bytes. Both ends stream: an export is written a page of records at a time and an
 * import reads a line at a time, so neither holds the memory, only a record.
 *
 * ```jsonl
 * {"recordType":"header","format":"witness-memory","schemaVersion":2}
 * {"recordType":"conversation","record":{...}}
 * {"recordType":"observation","record":{...},"messagePieceIds":["..."]}
 * {"recordType":"end","records":{"conversation":1,"message_piece":0,"observation":1,...}}
 * ```
 *
 * Version 2 added the closing line, so an archive cut short at a line break (a full disk, an interrupted
 * copy) is refused instead of imported as a smaller memory. Version 1 archives (no closing line) are read
 * as they are.
 */

export const ARCHIVE_FORMAT = 'witness-memory';

/** The version this Witness writes; it reads every version up to it. */
export const ARCHIVE_SCHEMA_VERSION = 2;

export const ArchiveHeaderSchema = z.strictObject({
  recordType: z.literal('header'),
  format: z.literal(ARCHIVE_FORMAT),
  schemaVersion: z.union([z.literal(1), z.literal(2)]),
});

const RecordCountSchema = z.number().int().nonnegative();

/** The closing line of a version 2 archive: how many records of each type it holds. */
export const ArchiveEndSchema = z.strictObject({
  recordType: z.literal('end'),
  records: z.strictObject({
    conversation: RecordCountSchema,
    message_piece: RecordCountSchema,
    observation: RecordCountSchema,
    score: RecordCountSchema,
    run: RecordCountSchema,
    attack_result: RecordCountSchema,
  }),
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

/** The first line of every export (of the version this Witness writes). */
export function archiveHeaderLine(): string {
  return JSON.stringify({
    recordType: 'header',
    format: ARCHIVE_FORMAT,
    schemaVersion: ARCHIVE_SCHEMA_VERSION,
  });
}

export function formatArchiveLine(record: ArchiveRecord): string {
  return JSON.stringify(record);
}

/** The last line of every export: the count of the records of each type before it. */
export function archiveEndLine(records: ImportSummary): string {
  return JSON.stringify({ recordType: 'end', records });
}

/**
 * A whole archive, line by line (each without its line break): the header, the records as they come, the
 * closing count. Lines are made as they are read, so an export of any size holds one record at a time.
 */
export async function* archiveLines(
  records: AsyncIterable<ArchiveRecord> | Iterable<ArchiveRecord>,
): AsyncGenerator<string> {
  yield archiveHeaderLine();
  const counts = emptyImportSummary();
  for await (const record of records) {
    counts[record.recordType]++;
    yield formatArchiveLine(record);
  }
  yield archiveEndLine(counts);
}

/**
 * The records {@link parseArchiveLines} made (each validated against its schema as it was parsed), so an
 * import that takes them does not validate each one a second time: validating a record costs more
 * allocation than storing it, and an import in a small heap (a memory larger than the heap) runs out of
 * it when the garbage collector falls behind. Held weakly: a record leaves with its last reference.
 */
const validatedRecords = new WeakSet<ArchiveRecord>();

/** Whether `record` came from {@link parseArchiveLines}, validated, rather than from a caller's own code. */
export function isValidatedArchiveRecord(record: ArchiveRecord): boolean {
  return validatedRecords.has(record);
}

/** Where a parse is (set before each record is handed on), for errors found later, while storing it. */
export interface ArchivePosition {
  /** The 1-based line of the last record handed on; 0 before the first. */
  line: number;
}

/**
 * Parses export lines (the header first), naming the line of any problem. Blank lines are skipped; a
 * missing or foreign header, a version 2 archive without its closing line (cut short) or whose counts
 * differ from its records (lines removed or added), and anything after the closing line are each an
 * {@link InvalidRecordError}. The error is thrown when the parse reaches it: a consumer that stores the
 * records in one transaction (`Memory.importRecords`) then stores none.
 */
export async function* parseArchiveLines(
  lines: AsyncIterable<string> | Iterable<string>,
  name = 'export',
  position: ArchivePosition = { line: 0 },
): AsyncGenerator<ArchiveRecord> {
  let lineNumber = 0;
  let version: 1 | 2 | undefined;
  let ended = false;
  const counts = emptyImportSummary();
  for await (const line of lines) {
    lineNumber++;
    if (line.trim() === '') continue;
    if (ended) {
      throw new InvalidRecordError(
        `${name} line ${lineNumber} follows the archive's closing line: the file was appended to; nothing was imported`,
      );
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new InvalidRecordError(`${name} line ${lineNumber} is not JSON: ${(error as Error).message}`);
    }
    if (version === undefined) {
      const header = ArchiveHeaderSchema.safeParse(value);
      if (!header.success) {
        throw new InvalidRecordError(
          `${name} line ${lineNumber} is not a Witness export header (expected ${archiveHeaderLine()}); export the file with "witness export"`,
          describeIssues(header.error),
        );
      }
      version = header.data.schemaVersion;
      continue;
    }
    if (version >= 2 && (value as { recordType?: unknown } | null)?.recordType === 'end') {
      const end = ArchiveEndSchema.safeParse(value);
      if (!end.success) {
        const issues = describeIssues(end.error);
        throw new InvalidRecordError(
          `${name} line ${lineNumber} is not a valid closing line: ${issues.join('; ')}`,
          issues,
        );
      }
      const differs = (Object.keys(counts) as ArchiveRecordType[]).filter(
        (type) => counts[type] !== end.data.records[type],
      );
      if (differs.length > 0) {
        const detail = differs
          .map((type) => `${end.data.records[type]} ${type} records, ${counts[type]} read`)
          .join('; ');
        throw new InvalidRecordError(
          `${name} line ${lineNumber} closes an archive whose records do not match its counts (${detail}): lines were removed or added; nothing was imported`,
        );
      }
      ended = true;
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
    counts[parsed.data.recordType]++;
    position.line = lineNumber;
    validatedRecords.add(parsed.data);
    yield parsed.data;
  }
  if (version === undefined)
    throw new InvalidRecordError(`${name} is empty: it has no Witness export header`);
  if (version >= 2 && !ended) {
    throw new InvalidRecordError(
      `${name} ends at line ${lineNumber} without its closing line ({"recordType":"end",...}, which "witness export" writes last): it was cut short; nothing was imported`,
    );
  }
}
