import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** What the numbers were measured on, printed above the table. */
export function describeMachine(base: string): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const fsType =
    spawnSync('findmnt', ['-n', '-o', 'FSTYPE', '-T', base], { encoding: 'utf8' }).stdout?.trim() ||
    'unknown';
  let memory = `${Math.round(os.totalmem() / (1 << 30))} GiB RAM`;
  try {
    const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    memory += `, load ${load}`;
  } catch {
    // Not Linux: no load average to show.
  }
  return `${os.availableParallelism()} cores (${cpu}), ${memory}, Node ${process.version}, ${base} on ${fsType}`;
}
