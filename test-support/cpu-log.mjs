// The CPU time of each test file, for finding what makes the lane slow: with WITNESS_TEST_CPU_LOG=<file>,
// every process of a lane appends one line per test and one per test file it ran, as tab-separated
// `file  test  self-ms  children-ms  wall-ms` (test empty on the file's line). Self is this process's user + system time while the file's suite
// ran (a shard runs its files one after another, so the file's own work); children is the user + system
// time of the child processes the file started and waited for (getrusage's RUSAGE_CHILDREN, read from
// /proc/self/stat, so Linux only: elsewhere it reads 0). Without the variable, nothing is measured.
import { appendFileSync, readFileSync } from 'node:fs';

const LOG = process.env.WITNESS_TEST_CPU_LOG;
/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on every Linux Node.js runs on). */
const TICKS_PER_SECOND = 100;

function childrenMs() {
  try {
    // Fields after the parenthesised command name; cutime and cstime are fields 16 and 17 of the line.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

let started = false;

/**
 * Where a file's measurement starts (undefined when not measuring). The first call of a process also logs
 * what the process spent before its first test file's tests (start-up: loading node and every module its
 * test files import), as `(start-up)` with the entry module's name (`process.argv[1]`) as its test.
 */
export function cpuMark() {
  if (LOG === undefined || LOG === '') return undefined;
  if (!started) {
    started = true;
    const cpu = process.cpuUsage();
    const self = Math.round((cpu.user + cpu.system) / 1000);
    const wall = Math.round(performance.now());
    appendFileSync(
      LOG,
      `(start-up)\t${process.argv[1] ?? ''}\t${self}\t${Math.round(childrenMs())}\t${wall}\n`,
    );
  }
  return { cpu: process.cpuUsage(), children: childrenMs(), wall: performance.now() };
}

/** Appends a test's line, or with test '' the file's, to the log (nothing when not measuring). */
export function noteCpu(file, test, start) {
  if (start === undefined) return;
  const cpu = process.cpuUsage(start.cpu);
  const self = Math.round((cpu.user + cpu.system) / 1000);
  const children = Math.round(childrenMs() - start.children);
  const wall = Math.round(performance.now() - start.wall);
  appendFileSync(LOG, `${file}\t${test.replaceAll(/\s+/g, ' ')}\t${self}\t${children}\t${wall}\n`);
}
