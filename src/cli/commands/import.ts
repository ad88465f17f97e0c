import { createReadStream, existsSync, rmSync } from 'node:fs';
import { access } from 'node:fs/promises';
import type { Command } from 'commander';
import { InvalidRecordError, WitnessError } from '../../errors.js';
import { type ArchivePosition, type ImportSummary, parseArchiveLines } from '../../memory/archive.js';
import { boundedLines } from '../bounded-lines.js';
import { type CliIo, printJson } from '../io.js';
import { dbOption, resolveDb, withMemory } from '../memory-option.js';
import { excerpt } from '../render.js';
import { UsageError } from '../usage-error.js';

/** The longest line (one record) an import reads by default: 256 MiB. */
export const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

/**
 * `witness import FILE`: stores the records of a `witness export` file, all of them or none, reading the
 * file a line at a time (one transaction; memory use is bounded by the longest line, not the file).
 */
export function registerImport(program: Command, io: CliIo): void {
  program
    .command('import')
    .description(
      'store the records of a `witness export` file in the memory (all of them or, on error, none); every score is judged again against its observation',
    )
    .argument('<file.jsonl>', 'a file written by `witness export`')
    .option(
      '--max-line-bytes <n>',
      `the longest record (line) accepted, in bytes (default ${DEFAULT_MAX_LINE_BYTES}; memory use is bounded by it)`,
    )
    .addOption(dbOption())
    .option('--json', 'print the counts of records read as JSON')
    .action(async (file: string, options: Record<string, unknown>) => {
      const maxLineBytes = readMaxLineBytes(options.maxLineBytes);
      try {
        await access(file);
      } catch (error) {
        throw new UsageError(
          `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        );
      }
      const db = resolveDb(options, io.env);
      // A failed import must not leave behind an empty database it created (a typo in --db, a bad file).
      const createdHere = isSqliteFile(db) && !existsSync(db);
      try {
        await withMemory(db, async (memory) => {
          const stream = createReadStream(file);
          const position: ArchivePosition = { line: 0 };
          let summary: ImportSummary;
          try {
            const lines = boundedLines(stream, maxLineBytes, file);
            summary = await memory.importRecords(parseArchiveLines(lines, file, position));
          } catch (error) {
            throw atLine(error, file, position);
          } finally {
            stream.destroy();
          }
          if (options.json === true) printJson(io, summary);
          else {
            io.out(
              `imported into ${excerpt(memory.location.target, 300)}: conversations ${summary.conversation}, message pieces ${summary.message_piece}, observations ${summary.observation}, scores ${summary.score}, attack results ${summary.attack_result}\n`,
            );
          }
        });
      } catch (error) {
        if (createdHere) for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
        throw error;
      }
    });
}

/**
 * A refusal found while storing a record (a different record under its id, a reference to nothing, a
 * score its observation contradicts) names the line it came from; the parse's own errors already do.
 */
function atLine(error: unknown, file: string, position: ArchivePosition): unknown {
  if (!(error instanceof WitnessError) || position.line === 0 || error.message.startsWith(file)) return error;
  const message = /nothing was imported/.test(error.message)
    ? error.message
    : `${error.message}; nothing was imported`;
  return new InvalidRecordError(`${file} line ${position.line}: ${message}`);
}

function isSqliteFile(db: string): boolean {
  return db !== ':memory:' && !db.startsWith('file:') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(db);
}

function readMaxLineBytes(value: unknown): number {
  if (value === undefined) return DEFAULT_MAX_LINE_BYTES;
  const text = String(value);
  if (!/^[1-9][0-9]*$/.test(text) || Number(text) > DEFAULT_MAX_LINE_BYTES) {
    throw new UsageError(
      `--max-line-bytes takes a positive whole number of at most ${DEFAULT_MAX_LINE_BYTES}, got ${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}
