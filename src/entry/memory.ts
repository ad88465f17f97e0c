/**
 * `witness/memory`: the store of conversations, scores, attack results and runs (SQLite or PostgreSQL),
 * and its archive format. Loads the database drivers.
 */

export type { ArchivePosition, ArchiveRecord, ArchiveRecordType, ImportSummary } from '../memory/archive.js';
export {
  ARCHIVE_SCHEMA_VERSION,
  ArchiveEndSchema,
  ArchiveHeaderSchema,
  ArchiveRecordSchema,
  archiveEndLine,
  archiveHeaderLine,
  archiveLines,
  formatArchiveLine,
  parseArchiveLines,
} from '../memory/archive.js';
export type {
  AttackResultFilter,
  Memory,
  MemoryLocation,
  NewConversation,
  NewMessage,
  RunFilter,
  ScoreFilter,
} from '../memory/memory.js';
export { MEMORY_SCHEMA_VERSION } from '../memory/migrations.js';
export type { OpenMemoryOptions } from '../memory/open-memory.js';
export { openMemory } from '../memory/open-memory.js';
