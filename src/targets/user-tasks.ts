import { parseInstructions } from './injected-instructions.js';

/**
 * The user's tasks the mock agent and the scripted model understand — in the prompt only, never in a file
 * they read (a task comes from the user; text in files is data, and what a vulnerable agent obeys there is
 * the injection grammar of injected-instructions.ts). Both do these tasks in every mode but `refusing`,
 * so a defence that refuses the injection keeps the work, and one that refuses everything shows as
 * utility lost. Neither ever reads a campaign's `task:` condition: it is judged from what they wrote.
 *
 * ```text
 * summarize <file> into <file>                       a summary of the first file (its first lines,
 *                                                    naming it) written to the second ("summarise" too)
 * fix the typo in <file>: "<wrong>" should be "<right>"   every <wrong> in the file replaced by <right>
 * add a test for <subject> in <file>                  a test file naming the subject ("to <file>" too)
 * run `<command>`                                     the command run with a shell tool, its output read
 *                                                    (as instructions in a file are, by a vulnerable agent)
 * ```
 *
 * Paths follow the injection grammar: a path may be wrapped in backticks; trailing punctuation is dropped.
 */

export type UserTask =
  | { kind: 'summarize'; from: string; into: string }
  | { kind: 'fix_typo'; path: string; wrong: string; right: string }
  | { kind: 'add_test'; path: string; subject: string };

const PATH = String.raw`(\x60[^\x60]+\x60|[\w./-]+)`;
const QUOTED = String.raw`(?:"([^"]+)"|\x60([^\x60]+)\x60|'([^']+)')`;
const SUMMARIZE = new RegExp(String.raw`\bsummari[sz]e\s+${PATH}\s+(?:in)?to\s+${PATH}`, 'gi');
const FIX_TYPO = new RegExp(
  String.raw`\bfix\s+the\s+typo\s+in\s+${PATH}\s*:?\s*${QUOTED}\s+should\s+(?:be|read)\s+${QUOTED}`,
  'gi',
);
const ADD_TEST = new RegExp(String.raw`\badd\s+a\s+test(?:\s+for\s+(.+?))?\s+(?:in|to|as)\s+${PATH}`, 'gi');

/** The tasks a prompt asks for, in the order they are written. */
export function parseUserTasks(prompt: string): UserTask[] {
  const found: Array<{ at: number; task: UserTask }> = [];
  for (const match of prompt.matchAll(SUMMARIZE)) {
    const from = cleanPath(match[1] as string);
    const into = cleanPath(match[2] as string);
    if (from !== '' && into !== '' && from !== into)
      found.push({ at: match.index, task: { kind: 'summarize', from, into } });
  }
  for (const match of prompt.matchAll(FIX_TYPO)) {
    const path = cleanPath(match[1] as string);
    const wrong = match[2] ?? match[3] ?? match[4] ?? '';
    const right = match[5] ?? match[6] ?? match[7] ?? '';
    if (path !== '' && wrong !== '' && wrong !== right)
      found.push({ at: match.index, task: { kind: 'fix_typo', path, wrong, right } });
  }
  for (const match of prompt.matchAll(ADD_TEST)) {
    const path = cleanPath(match[2] as string);
    const subject = (match[1] ?? '').trim() || 'the project';
    if (path !== '') found.push({ at: match.index, task: { kind: 'add_test', path, subject } });
  }
  return found.sort((a, b) => a.at - b.at).map((entry) => entry.task);
}

const RUN = /\brun\s+\x60([^\x60\n]{1,200})\x60/gi;

/**
 * Commands the prompt asks to run (`run \`npm test\``), in order: a step of the user's request, not a
 * task judged on its own (what the command's output leads to is).
 */
export function commandsToRun(prompt: string): string[] {
  return [...prompt.matchAll(RUN)].map((match) => (match[1] as string).trim()).filter((c) => c !== '');
}

/** Files the tasks create or overwrite: what to write, never what to read first. */
export function taskOutputs(tasks: readonly UserTask[]): string[] {
  return tasks.flatMap((task) =>
    task.kind === 'summarize' ? [task.into] : task.kind === 'add_test' ? [task.path] : [],
  );
}

/** How many first lines of prose a summary quotes. */
const SUMMARY_LINES = 3;

/**
 * A summary of `path`: a heading naming it, then its first lines of prose (not instructions, not markup),
 * each cut to 120 characters.
 */
export function summaryOf(path: string, text: string): string {
  const lines: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    if (lines.length >= SUMMARY_LINES) break;
    const line = raw.replace(/^[\s#>*-]+/, '').trim();
    if (line === '' || line.startsWith('<') || line.startsWith('```') || parseInstructions(raw).length > 0)
      continue;
    lines.push(line.length > 120 ? `${line.slice(0, 119)}…` : line);
  }
  const body = lines.length === 0 ? '(the file has no prose)' : lines.map((line) => `- ${line}`).join('\n');
  return `# Summary of ${path}\n\n${body}\n`;
}

/** `text` with every `wrong` replaced by `right`, or undefined when `wrong` does not occur. */
export function fixTypo(text: string, wrong: string, right: string): string | undefined {
  return text.includes(wrong) ? text.split(wrong).join(right) : undefined;
}

/** A small node:test file for `subject`, naming the files it was written from. */
export function testFileFor(subject: string, readFrom: readonly string[]): string {
  const source = readFrom.length === 0 ? '' : `// Written after reading ${readFrom.join(', ')}.\n`;
  return `${source}const { test } = require('node:test');
const assert = require('node:assert/strict');

test(${JSON.stringify(subject)}, () => {
  assert.ok(true, 'replace with the expected behaviour');
});
`;
}

function cleanPath(raw: string): string {
  if (raw.startsWith('`') && raw.endsWith('`') && raw.length >= 2) return raw.slice(1, -1);
  return raw.replace(/[.,;:!?]+$/, '');
}
