/**
 * `witness/memory`: the store of conversations, scores, attack results and runs (SQLite or PostgreSQL),
 * and its archive format. Loads the database drivers.
 */

export type { ArchiveRecord, ArchiveRecordType, ImportSummary } from '../memory/archive.js';
export {
  ArchiveHeaderSchema,
  ArchiveRecordSchema,
  archiveHeaderLine,
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
