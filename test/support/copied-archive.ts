import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { MemoryAttemptRecorder } from '../../src/attacks/memory-recorder.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { type ArchiveRecord, archiveLines, emptyImportSummary } from '../../src/memory/archive.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';

/**
 * Large archives for the export/import checks (the heavy test and bench row 14): the demo run against the
 * vulnerable mock, exported, then written again and again with every id suffixed by the copy's number, so
 * each copy is a run of its own with its own conversations, observations and scores.
 */

/** Attempts in one copy of the demo run. */
export const DEMO_ATTEMPTS = 8;

/** The archive lines of the demo run, stored in a memory at `db` (a run's workspaces under `dir`). */
export async function demoArchive(db: string, dir: string): Promise<string[]> {
  const memory = await openMemory(db);
  const lines: string[] = [];
  try {
    await runCampaign({
      campaign: demoCampaign('vulnerable'),
      target: new MockAgentTarget({ mode: 'vulnerable' }),
      workspaceParent: dir,
      recorder: new MemoryAttemptRecorder(memory),
    });
    for await (const line of archiveLines(memory.exportRecords())) lines.push(line);
  } finally {
    await memory.close();
  }
  return lines;
}

/** Writes `demo` (an archive's lines) `copies` times as one archive at `file`, each copy's ids its own. */
export async function writeCopiedArchive(
  demo: readonly string[],
  file: string,
  copies: number,
): Promise<void> {
  const body = demo.slice(1, -1).map((line) => JSON.parse(line) as ArchiveRecord);
  const ids = new Set<string>();
  for (const entry of body) {
    const record = entry.record as { id?: string; runId?: string };
    if (record.id !== undefined) ids.add(record.id);
    if (record.runId !== undefined) ids.add(record.runId);
  }
  const pattern = new RegExp(`"(${[...ids].map((id) => id.replace(/[^\w-]/g, '\\$&')).join('|')})"`, 'g');
  const out = createWriteStream(file);
  const write = async (line: string) => {
    if (!out.write(`${line}\n`)) await once(out, 'drain');
  };
  await write(demo[0] as string);
  const counts = emptyImportSummary();
  for (const type of Object.keys(counts) as (keyof typeof counts)[]) {
    for (let copy = 0; copy < copies; copy++) {
      for (const entry of body) {
        if (entry.recordType !== type) continue;
        counts[type]++;
        await write(JSON.stringify(entry).replace(pattern, (_, id: string) => `"${id}-c${copy}"`));
      }
    }
  }
  out.end(`${JSON.stringify({ recordType: 'end', records: counts })}\n`);
  await once(out, 'finish');
}
