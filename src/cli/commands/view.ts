import { spawn } from 'node:child_process';
import type { Command } from 'commander';
import type { CliIo } from '../io.js';
import { dbOption, resolveDb } from '../memory-option.js';
import { UsageError } from '../usage-error.js';

export function registerView(program: Command, io: CliIo): void {
  program
    .command('view')
    .description(
      'browse stored runs in a local, read-only web viewer on 127.0.0.1 (runs, attempts, evidence, comparisons; live while a run is stored)',
    )
    .option('--port <n>', 'port on 127.0.0.1 (default: a free port)')
    .option('--open', 'open the viewer in the default browser')
    .addOption(dbOption())
    .action(async (options: Record<string, unknown>) => {
      const port = options.port === undefined ? 0 : readPort(options.port);
      const db = resolveDb(options, io.env);
      const [{ openMemoryReader }, { startViewServer }] = await Promise.all([
        import('../../memory/memory-reader.js'),
        import('../../view/view-server.js'),
      ]);
      const reader = await openMemoryReader(db);
      try {
        let viewer: Awaited<ReturnType<typeof startViewServer>>;
        try {
          viewer = await startViewServer({ reader, port });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
            throw new UsageError(
              `port ${port} on 127.0.0.1 is in use: choose another --port, or omit it for a free one`,
            );
          }
          throw error;
        }
        io.out(`${viewer.url}\n`);
        io.err(
          `witness view: ${reader.location.backend} ${reader.location.target}, read-only; press Ctrl-C to stop\n`,
        );
        if (options.open === true) openBrowser(viewer.url, io);
        try {
          await new Promise<void>((resolve) => {
            if (io.signal.aborted) resolve();
            else io.signal.addEventListener('abort', () => resolve(), { once: true });
          });
        } finally {
          await viewer.close();
        }
      } finally {
        await reader.close();
      }
    });
}

function readPort(raw: unknown): number {
  const text = String(raw);
  if (!/^[0-9]{1,5}$/.test(text) || Number(text) > 65_535) {
    throw new UsageError(`--port takes a number from 0 to 65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** Hands the URL to the desktop's opener; failing to open is reported, never fatal (the URL is printed). */
function openBrowser(url: string, io: CliIo): void {
  const opener =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer.exe' : 'xdg-open';
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', (error) =>
      io.err(`could not open a browser (${error.message}); open ${url} yourself\n`),
    );
    child.unref();
  } catch (error) {
    io.err(`could not open a browser (${(error as Error).message}); open ${url} yourself\n`);
  }
}
