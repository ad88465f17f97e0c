import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

/**
 * Runs a CLI in this process (`node campaign-child.js <path of cli/main.js> <cli args…>`) and, at exit,
 * writes this process's peak resident memory (VmHWM, which covers every thread) to stderr as
 * `PEAK_RSS_KIB <n>`. Taking the CLI's path lets the same harness time another build (a baseline).
 */

process.on('exit', () => {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const peak = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 'NaN';
  process.stderr.write(`\nPEAK_RSS_KIB ${peak}\n`);
});
process.argv.splice(1, 1);
await import(pathToFileURL(process.argv[1] as string).href);
