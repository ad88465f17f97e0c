import type { Command } from 'commander';
import { archiveHeaderLine, formatArchiveLine } from '../../memory/archive.js';
import type { CliIo } from '../io.js';
import { dbOption, READ_ONLY, resolveDb, withMemory } from '../memory-option.js';

/** `witness export`: every record of the memory as JSON Lines on stdout (for `witness import`). */
export function registerExport(program: Command, io: CliIo): void {
  program
    .command('export')
    .description('write every stored record as JSON Lines to stdout (read back with `witness import`)')
    .addOption(dbOption())
    .action(async (options: Record<string, unknown>) => {
      await withMemory(
        resolveDb(options, io.env),
        async (memory) => {
          io.out(`${archiveHeaderLine()}\n`);
          let count = 0;
          for await (const record of memory.exportRecords()) {
            io.signal.throwIfAborted();
            io.out(`${formatArchiveLine(record)}\n`);
            count++;
          }
          io.err(`exported ${count} records from ${memory.location.target}\n`);
        },
        READ_ONLY,
      );
    });
}
