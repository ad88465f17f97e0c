import { type Stats, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { MemoryAttemptRecorder } from '../../src/attacks/memory-recorder.js';
import { type CampaignResult, runCampaign } from '../../src/attacks/run-campaign.js';
import type { Memory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { CommandTarget } from '../../src/targets/command-target.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';
import type { Target, TargetRequest, TargetResponse } from '../../src/targets/target.js';

/** Shared fixtures of the viewer tests: memories holding real campaign runs. */

/** Script tags, an event handler, a right-to-left override, ANSI colour and a terminal title (OSC). */
export const HOSTILE_TEXT =
  '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">\u202Egpj.sh\u001b[31mRED\u001b]0;title\u0007';

/** The demo campaign against the mock agent in one mode, stored in `memory`. */
export async function storeDemoRun(memory: Memory, mode: 'vulnerable' | 'guarded'): Promise<CampaignResult> {
  return runCampaign({
    campaign: demoCampaign(mode),
    target: new MockAgentTarget({ mode }),
    recorder: new MemoryAttemptRecorder(memory),
  });
}

/** The demo campaign against the vulnerable and then the guarded mock agent, stored in `memory`. */
export async function storeDemoRuns(
  memory: Memory,
): Promise<{ vulnerable: CampaignResult; guarded: CampaignResult }> {
  const recorder = new MemoryAttemptRecorder(memory);
  const vulnerable = await runCampaign({
    campaign: demoCampaign('vulnerable'),
    target: new MockAgentTarget({ mode: 'vulnerable' }),
    recorder,
  });
  const guarded = await runCampaign({
    campaign: demoCampaign('guarded'),
    target: new MockAgentTarget({ mode: 'guarded' }),
    recorder,
  });
  return { vulnerable, guarded };
}

/**
 * A run whose campaign name, description, prompt, reply, file name and file content are all hostile: the
 * agent (a shell script) writes the payload into a file named like markup and replies with it.
 */
export async function storeHostileRun(memory: Memory): Promise<CampaignResult> {
  return runCampaign({
    campaign: CampaignSchema.parse({
      name: `hostile ${HOSTILE_TEXT}`,
      description: HOSTILE_TEXT,
      target: { kind: 'command', command: '/bin/sh' },
      attacks: [
        {
          id: 'markup-everywhere',
          prompt: `Write this: ${HOSTILE_TEXT}`,
          expect: { uri: '/out/*', match: 'glob', contains: 'script' },
        },
      ],
    }),
    target: new CommandTarget({
      command: '/bin/sh',
      args: [
        '-c',
        'mkdir out && printf "%s" "$1" > "out/<img src=x onerror=window.__pwned=3>.html" && printf "%s" "$1"',
        'agent',
        HOSTILE_TEXT,
      ],
    }),
    recorder: new MemoryAttemptRecorder(memory),
  });
}

/** Builds a SQLite memory file with `store`, then closes it (a clean close removes its -wal file). */
export async function buildMemoryFile(path: string, store: (memory: Memory) => Promise<void>): Promise<void> {
  const memory = await openMemory(path);
  try {
    await store(memory);
  } finally {
    await memory.close();
  }
}

/** What a write would change: the file's size and times, and the names in its directory. */
export async function fileState(
  path: string,
  dir: string,
): Promise<{ stat: Pick<Stats, 'size' | 'mtimeMs' | 'ctimeMs'>; names: string[] }> {
  const stat = statSync(path);
  return {
    stat: { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs },
    names: (await readdir(dir)).sort(),
  };
}

/**
 * A mock agent that waits before each attempt until the test lets it go, so a test can watch a run while
 * it is in progress.
 */
export class GatedTarget implements Target {
  readonly #inner = new MockAgentTarget({ mode: 'vulnerable' });
  readonly #waiting: Array<() => void> = [];
  readonly #arrived: Array<() => void> = [];

  identifier() {
    return this.#inner.identifier();
  }

  async send(request: TargetRequest): Promise<TargetResponse> {
    await new Promise<void>((resolve) => {
      this.#waiting.push(resolve);
      this.#arrived.shift()?.();
    });
    return this.#inner.send(request);
  }

  /** Lets the next waiting attempt run (waits for it to arrive first). */
  async release(): Promise<void> {
    if (this.#waiting.length === 0) await new Promise<void>((resolve) => this.#arrived.push(resolve));
    this.#waiting.shift()?.();
  }
}
