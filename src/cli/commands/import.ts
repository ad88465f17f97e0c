import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { type ImportSummary, parseArchiveLines } from '../../memory/archive.js';
import { type CliIo, printJson } from '../io.js';
import { dbOption, resolveDb, withMemory } from '../memory-option.js';
import { UsageError } from '../usage-error.js';

/** `witness import FILE`: stores the records of a `witness export` file, all of them or none. */
export function registerImport(program: Command, io: CliIo): void {
  program
    .command('import')
    .description(
      'store the records of a `witness export` file in the memory (all of them or, on error, none)',
    )
    .argument('<file.jsonl>', 'a file written by `witness export`')
    .addOption(dbOption())
    .option('--json', 'print the counts of records read as JSON')
    .action(async (file: string, options: Record<string, unknown>) => {
      try {
        await access(file);
      } catch (error) {
        throw new UsageError(
          `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
        );
      }
      await withMemory(resolveDb(options, io.env), async (memory) => {
        const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
        // Iterate from now on: readline drops lines emitted before its iterator exists, and the import's
        // transaction (a PostgreSQL round trip) begins before the first record is asked for.
        const iterator = lines[Symbol.asyncIterator]();
        let summary: ImportSummary;
        try {
          summary = await memory.importRecords(
            parseArchiveLines({ [Symbol.asyncIterator]: () => iterator }, file),
          );
        } finally {
          lines.close();
        }
        if (options.json === true) printJson(io, summary);
        else {
          io.out(
            `imported into ${memory.location.target}: conversations ${summary.conversation}, message pieces ${summary.message_piece}, observations ${summary.observation}, scores ${summary.score}, attack results ${summary.attack_result}\n`,
          );
        }
      });
    });
}
