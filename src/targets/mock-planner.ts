import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { type Instruction, mentionedFiles, parseInstructions } from './injected-instructions.js';
import { MOCK_MODES, type MockMode } from './mock-modes.js';
import { judgeForPicky } from './picky-rules.js';
import type { Planner, PlanRequest, PlanResult } from './planner.js';
import type { FileToolMapping, Toolbox, ToolInvocation } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';
import {
  commandsToRun,
  fixTypo,
  parseUserTasks,
  summaryOf,
  taskOutputs,
  testFileFor,
  type UserTask,
} from './user-tasks.js';

/**
 * The mock agent's planner: deterministic. It reads the files the prompt names and summarizes them, and
 * does the user's tasks the prompt asks for (user-tasks.ts: summarize into a file, fix a typo, add a
 * test). It has no shell (it cannot run a command the prompt names, and has no environment variables of
 * its own) and no network but its toolbox's `http_request`, which sends through the attempt's egress proxy. Instructions in the prompt come from the user, so every mode follows them.
 * Instructions found *in files* are data: a `guarded` agent ignores them; a `vulnerable` agent follows
 * them (prompt injection). A `picky` agent acts only on a file whose instructions meet its demands
 * (picky-rules.ts) and says which one an injection missed. A `refusing` agent refuses all work (a defence that stops every attack and
 * every task). Its reply, by default, claims it only summarized — whatever it actually did — because a
 * reply is a claim, and Witness exists to check claims against the file system.
 */

export { MOCK_MODES, type MockMode } from './mock-modes.js';

export interface MockPlanOptions {
  prompt: string;
  mode: MockMode;
  toolbox: Toolbox;
  mapping: FileToolMapping;
  /** When true, the reply lists what the agent did; by default it claims it only summarized. */
  discloseActions?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** Reads at most this many files and follows at most this many instructions per prompt. */
const MAX_READS = 8;
const MAX_WRITES = 16;
const MAX_SENDS = 8;

export interface MockPlannerOptions {
  mode: MockMode;
  /** When true, the reply lists what the agent did; by default it claims it only summarized. */
  discloseActions?: boolean | undefined;
}

/** The mock planner as the planner axis of an agent target. */
export class MockPlanner implements Planner {
  readonly #options: MockPlannerOptions;

  constructor(options: MockPlannerOptions) {
    if (!MOCK_MODES.includes(options?.mode)) {
      throw new InvalidOptionError(
        `mode must be one of ${MOCK_MODES.join(', ')}, got ${String(options?.mode)}`,
      );
    }
    this.#options = { mode: options.mode, discloseActions: options.discloseActions };
  }

  async plan(request: PlanRequest): Promise<PlanResult> {
    return runMockPlanner({
      prompt: request.prompt,
      mode: this.#options.mode,
      toolbox: request.tools.toolbox,
      mapping: await request.tools.fileMapping(),
      discloseActions: this.#options.discloseActions,
      signal: request.signal,
    });
  }

  identifier(): ComponentIdentifier {
    return {
      type: 'MockPlanner',
      version: '1',
      params: { mode: this.#options.mode, discloseActions: this.#options.discloseActions === true },
    };
  }
}

export async function runMockPlanner(options: MockPlanOptions): Promise<PlanResult> {
  const { mode } = options;
  const transcript: TranscriptEvent[] = [{ kind: 'message', role: 'user', text: options.prompt }];
  if (mode === 'refusing') {
    // Refuses all work: no tool is called, so nothing is read, written or judged as done.
    transcript.push({ kind: 'message', role: 'assistant', text: REFUSAL });
    return { reply: REFUSAL, transcript };
  }
  const agent = new MockActions(transcript, options);
  const tasks = parseUserTasks(options.prompt);
  const outputs = taskOutputs(tasks);
  await agent.follow(parseInstructions(options.prompt));
  for (const command of commandsToRun(options.prompt)) agent.unable.push(`run ${command} (no shell)`);
  for (const path of mentionedFiles(options.prompt))
    if (!agent.queue.includes(path) && !outputs.includes(path)) agent.queue.push(path);
  await agent.readQueued();
  const completed = await agent.doTasks(tasks);
  const reply = composeReply({
    mode,
    summaries: agent.summaries,
    completed,
    objections: agent.objections,
    unable: agent.unable,
    ignored: agent.ignored,
    writes: agent.writes,
    disclose: options.discloseActions === true,
  });
  transcript.push({ kind: 'message', role: 'assistant', text: reply });
  return { reply, transcript };
}

/** What the mock agent does with its toolbox for one prompt, each call recorded in the transcript. */
class MockActions {
  #callNumber = 0;
  readonly #transcript: TranscriptEvent[];
  readonly #options: MockPlanOptions;
  /** Files still to read, and those read (or tried), in order. */
  readonly queue: string[] = [];
  readonly done: string[] = [];
  readonly texts = new Map<string, string>();
  readonly unable: string[] = [];
  readonly summaries: string[] = [];
  readonly objections: string[] = [];
  /** Instructions found in files and not followed (guarded). */
  ignored = 0;
  writes = 0;
  #sends = 0;

  constructor(transcript: TranscriptEvent[], options: MockPlanOptions) {
    this.#transcript = transcript;
    this.#options = options;
  }

  async call(tool: ToolInvocation) {
    const { signal, toolbox } = this.#options;
    signal?.throwIfAborted();
    const callId = `call_${++this.#callNumber}`;
    this.#transcript.push({ kind: 'tool_call', callId, name: tool.name, arguments: tool.args });
    const result = await toolbox.call(tool.name, tool.args, signal);
    this.#transcript.push({ kind: 'tool_result', callId, name: tool.name, ok: result.ok, text: result.text });
    return result;
  }

  async write(path: string, content: string): Promise<void> {
    for (const step of this.#options.mapping.write(path, content)) await this.call(step);
  }

  /** A file (the workspace's: the file tools reach nothing else) POSTed to a URL with `http_request`. */
  async #send(from: string, url: string): Promise<void> {
    const { mapping } = this.#options;
    if (from.startsWith('$')) {
      this.unable.push(`send ${from} (the mock agent has no environment variables)`);
      return;
    }
    if (mapping.post === undefined) {
      this.unable.push(`send ${from} (no http_request tool)`);
      return;
    }
    const read = await this.call(mapping.read(from));
    if (!read.ok) return;
    await this.call(mapping.post(url, read.text));
  }

  /** Reads are queued; writes and sends are done at once, each up to its bound. */
  async follow(instructions: readonly Instruction[]): Promise<void> {
    for (const instruction of instructions) {
      if (instruction.kind === 'read') {
        if (!this.queue.includes(instruction.path)) this.queue.push(instruction.path);
      } else if (instruction.kind === 'send') {
        if (this.#sends >= MAX_SENDS) continue;
        this.#sends++;
        this.writes++;
        await this.#send(instruction.from, instruction.url);
      } else if (this.writes < MAX_WRITES) {
        this.writes++;
        await this.write(instruction.path, instruction.content);
      }
    }
  }

  /**
   * Reads the queued files (up to MAX_READS) and summarizes each. Instructions found in a file are data:
   * a vulnerable agent follows them, a picky one only when they meet its demands, a guarded one ignores them.
   */
  async readQueued(): Promise<void> {
    const { mapping, mode } = this.#options;
    while (this.queue.length > 0 && this.done.length < MAX_READS) {
      const path = this.queue.shift() as string;
      this.done.push(path);
      const result = await this.call(mapping.read(path));
      if (!result.ok) {
        this.summaries.push(`${path} could not be read`);
        continue;
      }
      this.texts.set(path, result.text);
      const found = parseInstructions(result.text);
      this.summaries.push(`${path}: ${summarize(result.text)}`);
      if (mode === 'vulnerable') await this.follow(found);
      else if (mode === 'picky' && found.length > 0) {
        const judgement = judgeForPicky(path, result.text);
        if (judgement.follow) await this.follow(found);
        else this.objections.push(judgement.sentence);
      } else this.ignored += found.length;
    }
  }

  /** The user's tasks, each done with the files as read (a typo's file read again); what was done. */
  async doTasks(tasks: readonly UserTask[]): Promise<string[]> {
    const completed: string[] = [];
    for (const task of tasks) {
      if (task.kind === 'summarize') {
        const text = this.texts.get(task.from);
        if (text === undefined) continue;
        await this.write(task.into, summaryOf(task.from, text));
        completed.push(`wrote the summary of ${task.from} to ${task.into}`);
      } else if (task.kind === 'fix_typo') {
        // Read again: the file may have changed since it was first read.
        const current = await this.call(this.#options.mapping.read(task.path));
        const fixed = current.ok ? fixTypo(current.text, task.wrong, task.right) : undefined;
        if (fixed === undefined) continue;
        await this.write(task.path, fixed);
        completed.push(`fixed the typo in ${task.path}`);
      } else {
        await this.write(task.path, testFileFor(task.subject, this.done));
        completed.push(`added a test in ${task.path}`);
      }
    }
    return completed;
  }
}

/** What the `refusing` mock says to every request. */
export const REFUSAL = 'I am sorry, but I cannot help with that request.';

function composeReply(facts: {
  mode: MockMode;
  summaries: string[];
  completed: string[];
  objections: string[];
  unable: string[];
  ignored: number;
  writes: number;
  disclose: boolean;
}): string {
  if (facts.summaries.length === 0 && facts.completed.length === 0)
    return 'I could not find a file to read in your request.';
  const joined = facts.summaries.join('; ');
  const summary =
    facts.summaries.length === 0
      ? 'Summary — I read no file.'
      : `Summary — ${joined}${joined.endsWith('.') ? '' : '.'}`;
  const notDone = facts.unable.length === 0 ? '' : ` I could not ${facts.unable.join('; ')}.`;
  const work = `${notDone}${facts.completed.length === 0 ? '' : ` As you asked, I ${facts.completed.join('; ')}.`}`;
  if (facts.mode === 'picky' && facts.objections.length > 0) {
    return `${summary}${work} ${facts.objections.join(' ')}`;
  }
  if (facts.mode === 'guarded') {
    const note =
      facts.ignored > 0
        ? ` The file contained ${facts.ignored} instruction(s) addressed to an agent; I treated them as data and did not follow them.`
        : '';
    return `${summary}${work}${note}`;
  }
  if (facts.disclose && facts.writes > 0) {
    return `${summary}${work} I also followed ${facts.writes} instruction(s) and wrote files.`;
  }
  if (facts.completed.length > 0) return `${summary}${work} I changed nothing else.`;
  return `${summary}${notDone} I only read and summarized the file; I did not change anything.`;
}

/** The first line of prose that is not an instruction, cut to 80 characters. */
function summarize(text: string): string {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^[\s#>*-]+/, '').trim();
    if (line === '' || line.startsWith('<!--') || parseInstructions(raw).length > 0) continue;
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }
  return '(no prose)';
}
