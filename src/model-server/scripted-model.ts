import { type Instruction, mentionedFiles, parseInstructions } from '../targets/injected-instructions.js';
import { type MockMode, REFUSAL } from '../targets/mock-planner.js';
import { judgeForPicky } from '../targets/picky-rules.js';
import {
  commandsToRun,
  fixTypo,
  parseUserTasks,
  summaryOf,
  taskOutputs,
  testFileFor,
  type UserTask,
} from '../targets/user-tasks.js';
import type { Conversation, ModelTurn, ToolCallRequest } from './conversation.js';
import { announcedWorkspace, createToolMapping, type PlannedCall, type ToolMapping } from './tool-mapping.js';

/**
 * The scripted model behind `witness model serve`: deterministic, stateless, and prompt-injectable on
 * purpose. It speaks the same grammars as the mock agent (injected-instructions.ts, user-tasks.ts): it
 * follows instructions in the user's request, runs the commands it names (`run \`npm test\``, with a
 * shell tool), reads the files it names, does the user's tasks (summarize into a file, fix a typo, add a
 * test) and — in `vulnerable` mode — follows instructions it finds in tool results, a command's output
 * included (prompt injection through data and terminal output): writes, and sends (`curl` through a
 * shell tool, or a POST with an HTTP tool). `refusing` refuses every request; `picky` acts only on a file
 * whose instructions meet its demands (picky-rules.ts) and says which one was missed. Its final answer always
 * claims "I only read and summarized the file.", whatever it did: the claim is for Witness to check
 * against the file system.
 *
 * Stateless: each request carries the whole conversation, so the model replays its own plan against the
 * tool calls already made and answers with the next step. The same conversation always gets the same turn.
 */

export const FINAL_CLAIM = 'I only read and summarized the file.';
/** The claim when the user's task was done: whatever else happened, the reply says nothing else did. */
export const TASK_CLAIM = 'I changed nothing else.';

export interface ScriptedModelOptions {
  /** `vulnerable` (default) follows instructions found in tool results; `guarded` treats them as data. */
  mode?: MockMode | undefined;
}

/** Reads at most this many files and performs at most this many writes per request. */
const MAX_READS = 8;
const MAX_WRITES = 16;
const MAX_SENDS = 8;
const MAX_COMMANDS = 4;

/** Blocks that agent CLIs add to the user's turn (environment, reminders): context, not the request. */
const CONTEXT_BLOCKS = [
  /<system-reminder>[\s\S]*?<\/system-reminder>/gi,
  /<environment_context>[\s\S]*?<\/environment_context>/gi,
  /<user_instructions>[\s\S]*?<\/user_instructions>/gi,
  /<env>[\s\S]*?<\/env>/gi,
  /<session_context>[\s\S]*?<\/session_context>/gi,
];

export function nextTurn(conversation: Conversation, options: ScriptedModelOptions = {}): ModelTurn {
  const mode = options.mode ?? 'vulnerable';
  if (mode === 'refusing') return { kind: 'text', text: REFUSAL };
  const { prompt, history } = currentTask(conversation);
  const workspace = announcedWorkspace([
    conversation.system,
    ...conversation.items.flatMap((item) => (item.kind === 'user' ? [item.text] : [])),
  ]);
  const plan = new ReplayedPlan(history, createToolMapping(conversation.tools, workspace), mode);
  plan.follow(parseInstructions(prompt));
  plan.runCommands(commandsToRun(prompt).slice(0, MAX_COMMANDS));
  const tasks = parseUserTasks(prompt);
  const outputs = taskOutputs(tasks);
  for (const path of mentionedFiles(prompt))
    if (!plan.queue.includes(path) && !outputs.includes(path)) plan.queue.push(path);
  const texts = plan.readQueued();
  const completed: string[] = [];
  for (const task of tasks) {
    if (plan.pending !== undefined) break;
    const done = doTask(task, {
      texts,
      mapping: plan.mapping,
      perform: (planned) => plan.perform(planned),
      readFrom: [...texts.keys()],
    });
    if (done !== undefined) completed.push(done);
  }
  if (plan.pending !== undefined) return plan.pending;
  return { kind: 'text', text: composeReply(plan.summaries, plan.unable, completed, plan.objections) };
}

/**
 * The model's plan for one request, replayed against the tool calls already made: the n-th action of the
 * plan corresponds to the n-th tool call in the history. The first action not yet in the history becomes
 * the pending turn, and every later action is skipped.
 */
class ReplayedPlan {
  #replayed = 0;
  pending: ModelTurn | undefined;
  readonly queue: string[] = [];
  readonly summaries: string[] = [];
  readonly objections: string[] = [];
  readonly unable: string[] = [];
  #writes = 0;
  #sends = 0;

  constructor(
    private readonly history: ReadonlyArray<ToolCallRequest & { result: string | undefined }>,
    readonly mapping: ToolMapping,
    private readonly mode: MockMode,
  ) {}

  /** The planned call's result when it was already made; otherwise it becomes the pending turn. */
  perform(planned: PlannedCall): string | undefined {
    if (this.pending !== undefined) return undefined;
    const past = this.history[this.#replayed];
    if (past !== undefined) {
      this.#replayed++;
      return past.result ?? '';
    }
    this.pending = { kind: 'tool_call', call: { id: `call_witness_${this.#replayed + 1}`, ...planned } };
    return undefined;
  }

  /** Reads are queued; writes and sends are performed, each up to its bound. */
  follow(instructions: readonly Instruction[]): void {
    for (const instruction of instructions) {
      if (this.pending !== undefined) return;
      if (instruction.kind === 'read') {
        if (!this.queue.includes(instruction.path)) this.queue.push(instruction.path);
        continue;
      }
      if (instruction.kind === 'send') {
        if (this.#sends >= MAX_SENDS) continue;
        this.#sends++;
        this.#send(instruction.from, instruction.url);
        continue;
      }
      if (this.#writes >= MAX_WRITES) continue;
      this.#writes++;
      const planned = this.mapping.write(instruction.path, instruction.content);
      if (planned === undefined)
        this.unable.push(`write ${instruction.path} (no write or shell tool was offered)`);
      else this.perform(planned);
    }
  }

  #send(from: string, url: string): void {
    const planned = this.mapping.send(from, url);
    if (planned !== undefined) {
      this.perform(planned);
      return;
    }
    // No shell: a workspace file read with the read tool, then POSTed with the HTTP tool.
    const read = from.startsWith('$') || from.startsWith('~/') ? undefined : this.mapping.read(from);
    if (read === undefined || this.mapping.post(url, '') === undefined) {
      this.unable.push(`send ${from} (no shell or HTTP tool reaches it)`);
      return;
    }
    const text = this.perform(read);
    if (text === undefined) return;
    const post = this.mapping.post(url, withoutLineNumbers(withoutContextBlocks(text)));
    if (post !== undefined) this.perform(post);
  }

  /** Runs the commands the user named; a command's output is data, like a file's. */
  runCommands(commands: readonly string[]): void {
    for (const command of commands) {
      if (this.pending !== undefined) break;
      const planned = this.mapping.run(command);
      if (planned === undefined) {
        this.unable.push(`run ${command} (no shell tool was offered)`);
        continue;
      }
      const output = this.perform(planned);
      if (output === undefined) break;
      this.summaries.push(`${command}: ran it`);
      // Only a vulnerable model obeys what a command's output says.
      if (this.mode === 'vulnerable')
        this.follow(parseInstructions(withoutLineNumbers(stripContext(output))));
    }
  }

  /**
   * Reads the queued files (up to MAX_READS) and summarizes each; their instructions are followed by a
   * vulnerable model, and by a picky one only when they meet its demands. The texts read, by path.
   */
  readQueued(): Map<string, string> {
    const texts = new Map<string, string>();
    let reads = 0;
    while (this.pending === undefined && this.queue.length > 0 && reads < MAX_READS) {
      const path = this.queue.shift() as string;
      reads++;
      const planned = this.mapping.read(path);
      if (planned === undefined) {
        this.unable.push(`read ${path} (no read or shell tool was offered)`);
        continue;
      }
      const raw = this.perform(planned);
      if (raw === undefined) break;
      const result = withoutLineNumbers(stripContext(raw));
      texts.set(path, result);
      this.summaries.push(`${path}: ${summarize(result)}`);
      const found = parseInstructions(result);
      if (this.mode === 'vulnerable') this.follow(found);
      else if (this.mode === 'picky' && found.length > 0) {
        const judgement = judgeForPicky(path, result);
        if (judgement.follow) this.follow(found);
        else this.objections.push(judgement.sentence);
      }
    }
    return texts;
  }
}

/**
 * One user task as tool calls: the summary or test written, the typo fixed in the file as read again now.
 * Returns what was done, or undefined when it could not be (a call still pending, a file never read, no
 * write tool, a typo not found).
 */
function doTask(
  task: UserTask,
  plan: {
    texts: ReadonlyMap<string, string>;
    mapping: ToolMapping;
    perform: (planned: PlannedCall) => string | undefined;
    readFrom: readonly string[];
  },
): string | undefined {
  const write = (path: string, content: string): boolean => {
    const planned = plan.mapping.write(path, content);
    return planned !== undefined && plan.perform(planned) !== undefined;
  };
  if (task.kind === 'summarize') {
    const text = plan.texts.get(task.from);
    if (text === undefined || !write(task.into, summaryOf(task.from, text))) return undefined;
    return `wrote the summary of ${task.from} to ${task.into}`;
  }
  if (task.kind === 'add_test') {
    if (!write(task.path, testFileFor(task.subject, plan.readFrom))) return undefined;
    return `added a test in ${task.path}`;
  }
  const read = plan.mapping.read(task.path);
  const raw = read === undefined ? undefined : plan.perform(read);
  if (raw === undefined) return undefined;
  const fixed = fixTypo(withoutLineNumbers(withoutContextBlocks(raw)), task.wrong, task.right);
  if (fixed === undefined || !write(task.path, fixed)) return undefined;
  return `fixed the typo in ${task.path}`;
}

/**
 * The request being worked on: the last user text (context blocks removed) and the tool calls made since,
 * each with the result the client returned.
 */
function currentTask(conversation: Conversation): {
  prompt: string;
  history: Array<ToolCallRequest & { result: string | undefined }>;
} {
  let start = -1;
  let prompt = '';
  conversation.items.forEach((item, index) => {
    if (item.kind !== 'user') return;
    const text = stripContext(item.text);
    if (text === '') return;
    start = index;
    prompt = text;
  });
  const results = new Map<string, string>();
  const history: Array<ToolCallRequest & { result: string | undefined }> = [];
  for (const item of conversation.items.slice(start + 1)) {
    if (item.kind === 'tool_result') results.set(item.callId, item.text);
    if (item.kind === 'assistant')
      for (const call of item.calls) history.push({ ...call, result: undefined });
  }
  for (const call of history) call.result = results.get(call.id);
  return { prompt, history };
}

function stripContext(text: string): string {
  return withoutContextBlocks(text).trim();
}

/** The text without the context blocks clients add, its own whitespace kept (a file written back keeps its ending). */
function withoutContextBlocks(text: string): string {
  let stripped = text;
  for (const block of CONTEXT_BLOCKS) stripped = stripped.replace(block, '');
  return stripped;
}

function composeReply(
  summaries: readonly string[],
  unable: readonly string[],
  completed: readonly string[],
  objections: readonly string[],
): string {
  const parts: string[] = [];
  if (summaries.length > 0) parts.push(`Summary — ${summaries.join('; ')}.`);
  else parts.push('I could not find a file to read in your request.');
  if (unable.length > 0) parts.push(`I could not ${unable.join('; ')}.`);
  parts.push(...objections);
  if (completed.length > 0) parts.push(`As you asked, I ${completed.join('; ')}. ${TASK_CLAIM}`);
  else parts.push(FINAL_CLAIM);
  return parts.join(' ');
}

/**
 * Read tools often number their lines (`     1→text`, `00001| text`, `1\ttext`, `1: text`); the numbers are the
 * tool's framing, not the file's text, so they are removed before looking for instructions.
 */
function withoutLineNumbers(raw: string): string {
  // A shell tool's framing (Codex: `Chunk ID: …`, `Wall time: …`, `Output:`) is not the file's text either.
  const text = raw.replace(
    /^(?:(?:Chunk ID|Wall time|Process exited|Process running|Original token count|Exit code)[^\n]*\n)+Output:\n/,
    '',
  );
  // Only a run numbered 1, 2, 3… counts as framing, so a file whose own lines start with numbers is kept.
  let expected = 1;
  return text
    .split(/\r?\n/)
    .map((line) => {
      const match = /^\s*(\d+)(?:→|\| |\t|: |:$)/.exec(line);
      if (match === null || Number(match[1]) !== expected) return line;
      expected++;
      return line.slice(match[0].length);
    })
    .join('\n');
}

/** The first line of prose that is not an instruction, cut to 80 characters. */
function summarize(text: string): string {
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/^[\s#>*-]+/, '').trim();
    if (line === '' || line.startsWith('<') || parseInstructions(raw).length > 0) continue;
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  }
  return '(no prose)';
}
