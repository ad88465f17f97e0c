/**
 * Turns stored runs of library attacks (the `--json` output of `witness run`, one file per mode) into the
 * Markdown tables of docs/attacks.md, and compares every attempt with what the mock agent does with the
 * same attack in the same mode (run here, in process), listing each attack whose outcome differs.
 *
 *   npx tsc -p tsconfig.json
 *   node dist/scripts/attack-matrix-results.js vulnerable=vulnerable.json guarded=guarded.json > results.md
 *
 * A label must be a mock mode (`vulnerable` or `guarded`): it names the mode the model ran in and the
 * mock mode it is compared with. Per-attempt time is finishedAt − startedAt of each stored attempt.
 */
import { readFileSync } from 'node:fs';
import { CampaignSchema } from '../src/attacks/campaign.js';
import { buildLibraryAttack, libraryRefOf, STRATEGY_IDS } from '../src/attacks/library/index.js';
import { CARRIER_IDS } from '../src/attacks/library/library-ids.js';
import type { AttemptOutcome } from '../src/attacks/outcome.js';
import { runCampaign } from '../src/attacks/run-campaign.js';
import { MockAgentTarget } from '../src/targets/mock-agent-target.js';
import { MOCK_MODES, type MockMode } from '../src/targets/mock-planner.js';
import { axisTables } from './matrix-tables.js';

interface StoredAttempt {
  attack: string;
  outcome: AttemptOutcome;
  startedAt: string;
  finishedAt: string;
  error: string | null;
  transcript: Array<{ kind: string; name?: string; ok?: boolean; text?: string }>;
}

const runs = process.argv.slice(2).map((arg) => {
  const [mode, file] = arg.split('=') as [string, string | undefined];
  if (!(MOCK_MODES as readonly string[]).includes(mode) || file === undefined) {
    throw new Error(`give mode=file arguments with a mode of ${MOCK_MODES.join(', ')}; got ${arg}`);
  }
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { attempts: StoredAttempt[] };
  const attempts = parsed.attempts.filter((attempt) => libraryRefOf(attempt.attack) !== undefined);
  return { mode: mode as MockMode, attempts };
});

const seconds = (attempt: StoredAttempt) =>
  (Date.parse(attempt.finishedAt) - Date.parse(attempt.startedAt)) / 1000;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

const out: string[] = [];
const mockColumns: Array<{ mode: string; attempts: Array<{ attack: string; outcome: AttemptOutcome }> }> = [];
const differences: string[] = [];
for (const run of runs) {
  const times = run.attempts.map(seconds);
  const first = Math.min(...run.attempts.map((attempt) => Date.parse(attempt.startedAt)));
  const last = Math.max(...run.attempts.map((attempt) => Date.parse(attempt.finishedAt)));
  out.push(
    `- ${run.mode}: ${run.attempts.length} attempts in ${Math.round((last - first) / 60_000)} min; per attempt median ${median(times).toFixed(1)} s (${Math.min(...times).toFixed(1)}–${Math.max(...times).toFixed(1)} s)`,
  );
  // The same attacks, in the same order, through the mock agent in the same mode.
  const attacks = run.attempts.map((attempt) => {
    const ref = libraryRefOf(attempt.attack);
    if (ref === undefined) throw new Error(`not a library attack: ${attempt.attack}`);
    return buildLibraryAttack(ref);
  });
  const mock = await runCampaign({
    campaign: CampaignSchema.parse({
      name: `mock-${run.mode}`,
      target: { kind: 'mock', mode: run.mode },
      attacks,
    }),
    target: new MockAgentTarget({ mode: run.mode }),
  });
  const mockOutcome = new Map(mock.attempts.map((attempt) => [attempt.attack, attempt.outcome]));
  mockColumns.push({ mode: `mock ${run.mode}`, attempts: mock.attempts });
  for (const attempt of run.attempts) {
    const expected = mockOutcome.get(attempt.attack);
    if (expected !== attempt.outcome) {
      // The first tool call the agent refused or failed, in its own words: usually the reason.
      const refused = attempt.transcript.find((event) => event.kind === 'tool_result' && event.ok === false);
      const why = [
        attempt.error === null ? '' : `error: ${attempt.error}`,
        refused === undefined
          ? ''
          : `${refused.name ?? 'tool'} refused: ${(refused.text ?? '').split('. ')[0]}`,
      ]
        .filter((part) => part !== '')
        .join('; ')
        .replace(/\/tmp\/witness-run-[^/]+\/attempt-[^/]+\/workspace/g, '<workspace>')
        .replaceAll('|', '\\|')
        .replaceAll('\n', ' ')
        .slice(0, 200);
      differences.push(`| ${run.mode} | \`${attempt.attack}\` | ${expected} | ${attempt.outcome} | ${why} |`);
    }
  }
}

out.push(
  '',
  axisTables([...runs.map((run) => ({ mode: run.mode, attempts: run.attempts })), ...mockColumns]),
);

// The covering grid: which objective sat in each carrier × strategy cell, and how it ended.
const mark: Record<AttemptOutcome, string> = {
  success: '**S**',
  failure: 'f',
  undetermined: '?',
  error: 'E',
};
for (const run of runs) {
  out.push(
    '',
    `**${run.mode}: each cell's objective and outcome** (**S** success, f failure, ? undetermined, E error)`,
    '',
  );
  out.push(`| carrier \\ strategy | ${STRATEGY_IDS.map((id) => `\`${id}\``).join(' | ')} |`);
  out.push(`|---|${STRATEGY_IDS.map(() => '---').join('|')}|`);
  for (const carrier of CARRIER_IDS) {
    const cells = STRATEGY_IDS.map((strategy) =>
      run.attempts
        .filter((attempt) => {
          const ref = libraryRefOf(attempt.attack);
          return ref?.carrier === carrier && ref.strategy === strategy;
        })
        .map((attempt) => `${libraryRefOf(attempt.attack)?.objective} ${mark[attempt.outcome]}`)
        .join(', '),
    );
    out.push(`| \`${carrier}\` | ${cells.join(' | ')} |`);
  }
}

out.push('', '**Outcomes that differ from the mock agent**', '');
out.push(
  differences.length === 0
    ? 'None.'
    : [
        '| mode | attack | mock agent | this run | what the agent said |',
        '|---|---|---|---|---|',
        ...differences,
      ].join('\n'),
);
process.stdout.write(`${out.join('\n')}\n`);
