import type { Command } from 'commander';
import { archiveLines } from '../../memory/archive.js';
import type { CliIo } from '../io.js';
import { dbOption, READ_ONLY, resolveDb, withMemory } from '../memory-option.js';

/** Lines written before waiting for stdout to take them (a pipe or file holds far more than this). */
const LINES_PER_DRAIN = 64;

/**
 * `witness export`: every record of the memory as JSON Lines on stdout (for `witness import`), written as
 * it is read: the memory is read a page at a time and each line waits for stdout to have room, so an
 * export of any size holds a page of records, however slowly its reader takes them.
 */
export function registerExport(program: Command, io: CliIo): void {
  program
    .command('export')
    .description('write every stored record as JSON Lines to stdout (read back with `witness import`)')
    .addOption(dbOption())
    .action(async (options: Record<string, unknown>) => {
      await withMemory(
        resolveDb(options, io.env),
        async (memory) => {
          let lines = 0;
          for await (const line of archiveLines(memory.exportRecords())) {
            io.signal.throwIfAborted();
            io.out(`${line}\n`);
            lines++;
            if (lines % LINES_PER_DRAIN === 0 && io.drain !== undefined) await io.drain();
          }
          // Header and closing line are not records.
          io.err(`exported ${lines - 2} records from ${memory.location.target}\n`);
        },
        READ_ONLY,
      );
    });
}
