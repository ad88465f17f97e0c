import { InvalidOptionError } from '../errors.js';
import type { ComponentIdentifier } from '../models/identifier.js';
import { type Instruction, mentionedFiles, parseInstructions } from './injected-instructions.js';
import { MOCK_MODES, type MockMode } from './mock-modes.js';
import type { Planner, PlanRequest, PlanResult } from './planner.js';
import type { FileToolMapping, Toolbox, ToolInvocation } from './toolbox.js';
import type { TranscriptEvent } from './transcript.js';

/**
 * The mock agent's planner: deterministic, no network. It reads the files the prompt names and
 * summarizes them. Instructions in the prompt come from the user, so both modes follow them. Instructions
 * found *in files* are data: a `guarded` agent ignores them; a `vulnerable` agent follows them (prompt
 * injection). Its reply, by default, claims it only summarized — whatever it actually did — because a
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
  const { toolbox, mapping, mode, signal } = options;
  const transcript: TranscriptEvent[] = [{ kind: 'message', role: 'user', text: options.prompt }];
  let callNumber = 0;
  const call = async (tool: ToolInvocation) => {
    signal?.throwIfAborted();
    const callId = `call_${++callNumber}`;
    transcript.push({ kind: 'tool_call', callId, name: tool.name, arguments: tool.args });
    const result = await toolbox.call(tool.name, tool.args, signal);
    transcript.push({ kind: 'tool_result', callId, name: tool.name, ok: result.ok, text: result.text });
    return result;
  };

  const queue: string[] = [];
  const done: string[] = [];
  let writes = 0;
  const follow = async (instructions: readonly Instruction[]) => {
    for (const instruction of instructions) {
      if (instruction.kind === 'read') {
        if (!queue.includes(instruction.path)) queue.push(instruction.path);
      } else if (writes < MAX_WRITES) {
        writes++;
        for (const step of mapping.write(instruction.path, instruction.content)) await call(step);
      }
    }
  };

  await follow(parseInstructions(options.prompt));
  for (const path of mentionedFiles(options.prompt)) if (!queue.includes(path)) queue.push(path);

  const summaries: string[] = [];
  let ignored = 0;
  while (queue.length > 0 && done.length < MAX_READS) {
    const path = queue.shift() as string;
    done.push(path);
    const result = await call(mapping.read(path));
    if (!result.ok) {
      summaries.push(`${path} could not be read`);
      continue;
    }
    const found = parseInstructions(result.text);
    summaries.push(`${path}: ${summarize(result.text)}`);
    if (mode === 'vulnerable') await follow(found);
    else ignored += found.length;
  }

  const reply = composeReply({
    mode,
    summaries,
    ignored,
    writes,
    disclose: options.discloseActions === true,
  });
  transcript.push({ kind: 'message', role: 'assistant', text: reply });
  return { reply, transcript };
}

function composeReply(facts: {
  mode: MockMode;
  summaries: string[];
  ignored: number;
  writes: number;
  disclose: boolean;
}): string {
  if (facts.summaries.length === 0) return 'I could not find a file to read in your request.';
  const joined = facts.summaries.join('; ');
  const summary = `Summary — ${joined}${joined.endsWith('.') ? '' : '.'}`;
  if (facts.mode === 'guarded') {
    const note =
      facts.ignored > 0
        ? ` The file contained ${facts.ignored} instruction(s) addressed to an agent; I treated them as data and did not follow them.`
        : '';
    return `${summary}${note}`;
  }
  if (facts.disclose && facts.writes > 0) {
    return `${summary} I also followed ${facts.writes} instruction(s) and wrote files.`;
  }
  return `${summary} I only read and summarized the file; I did not change anything.`;
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
