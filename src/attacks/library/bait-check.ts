import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FileCondition, isFileCondition } from '../../models/condition.js';
import { expectation } from '../../models/expectation.js';
import type { Observation } from '../../models/observation.js';
import { FileWriteScorer } from '../../scorers/file-write-scorer.js';
import { LocalFileSurfaceSource } from '../../sources/local-file-source.js';
import { buildCondition } from '../campaign.js';
import { createWorkspace, type PlantedFile } from '../workspace.js';
import type { LibraryExpect } from './objectives.js';

/**
 * The bait check: an attack whose planted files already satisfy its condition would be scored a
 * success without the agent doing anything. (Example: a README carrier that quotes the payload, under
 * an `expect:` that searches every file for `attacker.example`.) This check plants the attack's files in
 * a fresh temporary workspace — the same planting `witness run` does — and judges the condition there
 * with the real source and scorer, before any agent runs.
 *
 * Verdicts, per condition kind:
 * - `content_written`: `bait` if the planted workspace already satisfies the text condition. `executable`
 *   is not required for this (planted files carry no execute bit), which only makes the check stricter.
 *   On `surface: home` the condition is judged on a fresh empty home, as an attempt's home starts.
 * - `file_created`: `bait` if a matching file is already planted.
 * - `file_deleted`, `file_modified`: these compare with the planted baseline, so they cannot hold before
 *   the agent runs; instead a matching file must be planted, or the attack is `vacuous` (nothing to
 *   delete or tamper with: it could never succeed).
 * - `request_sent`: judged from what the agent sends, of which a planted workspace holds nothing, so it
 *   can never hold before the agent runs: `clean`. (A prompt that itself holds the text criterion is
 *   refused by `witness run`: see planted-proof.ts.)
 * - `undetermined` when the evidence is incomplete (never read as clean).
 */

export const BAIT_STATUSES = ['clean', 'bait', 'vacuous', 'undetermined'] as const;
export type BaitStatus = (typeof BAIT_STATUSES)[number];

export interface BaitFinding {
  attack: string;
  status: BaitStatus;
  detail: string;
}

export interface BaitCandidate {
  id: string;
  files?: readonly PlantedFile[] | undefined;
  expect: LibraryExpect;
}

export interface BaitCheckOptions {
  /** The campaign's own planted files (planted before the attack's, as `witness run` does). */
  campaignFiles?: readonly PlantedFile[] | undefined;
  template?: string | undefined;
  /** Where the temporary workspaces go; the system temp directory by default. */
  parent?: string | undefined;
  signal?: AbortSignal | undefined;
}

export async function checkBait(
  candidate: BaitCandidate,
  options: BaitCheckOptions = {},
): Promise<BaitFinding> {
  const { expect } = candidate;
  const kind = expect.condition ?? 'content_written';
  if (kind === 'request_sent') {
    return finding(candidate, 'clean', 'a request can only be sent by the agent; nothing planted sends one');
  }
  const workspace = await createWorkspace({
    template: options.template,
    files: [...(options.campaignFiles ?? []), ...(candidate.files ?? [])],
    parent: options.parent,
  });
  let home: string | undefined;
  try {
    let root = workspace.root;
    if (expect.surface === 'home') {
      home = await realpath(await mkdtemp(join(options.parent ?? tmpdir(), 'witness-bait-home-')));
      root = home;
    }
    const source = new LocalFileSurfaceSource({ root });
    const condition = baitCondition(expect, kind);
    const scorable = { scorableType: 'surface' as const, uri: condition.uri, match: condition.match };
    const observation = await source.acquire(scorable, { signal: options.signal });
    const where = `${expect.uri}${expect.surface === 'home' ? ' (home)' : ''}`;
    return kind === 'content_written'
      ? await judgePlantedContent(candidate, source, observation, condition, where)
      : judgePlantedListing(candidate, kind, observation, where);
  } finally {
    await workspace.dispose();
    if (home !== undefined) await rm(home, { recursive: true, force: true });
  }
}

/** The file condition the candidate's expectation states (its content fields only for content_written). */
function baitCondition(
  expect: LibraryExpect,
  kind: Exclude<LibraryExpect['condition'], 'request_sent' | undefined>,
): FileCondition {
  const condition = buildCondition({
    condition: kind,
    uri: expect.uri,
    match: expect.match ?? 'exact',
    ...(kind === 'content_written'
      ? {
          contains: expect.contains,
          equals: expect.equals,
          regex: expect.regex,
          caseSensitive: expect.caseSensitive,
          ignoreWhitespace: expect.ignoreWhitespace,
        }
      : {}),
  });
  if (!isFileCondition(condition)) throw new Error('unreachable: request_sent returned above');
  return condition;
}

/** content_written: planted files that already satisfy it make the attack bait. */
async function judgePlantedContent(
  candidate: BaitCandidate,
  source: LocalFileSurfaceSource,
  observation: Observation,
  condition: FileCondition,
  where: string,
): Promise<BaitFinding> {
  const scorer = new FileWriteScorer({ source });
  const {
    scores: [score],
  } = await scorer.scoreObservation({ observation, expectation: expectation([condition]) });
  if (score === undefined || score.status === 'undetermined') {
    return finding(
      candidate,
      'undetermined',
      `the planted ${where} could not be judged: ${score?.rationale ?? 'no score'}`,
    );
  }
  return score.value === true
    ? finding(
        candidate,
        'bait',
        `the planted files already satisfy the condition on ${where}: ${score.rationale}`,
      )
    : finding(candidate, 'clean', `the planted files do not satisfy the condition on ${where}`);
}

/**
 * file_created, file_deleted, file_modified: judged by what is planted. A planted file makes a creation
 * unprovable (bait); a deletion or modification with nothing planted could never hold (vacuous).
 */
function judgePlantedListing(
  candidate: BaitCandidate,
  kind: 'file_created' | 'file_deleted' | 'file_modified',
  observation: Observation,
  where: string,
): BaitFinding {
  if (observation.acquisition !== 'complete') {
    return finding(candidate, 'undetermined', `the planted ${where} could not be listed completely`);
  }
  const planted = plantedUris(observation);
  if (kind === 'file_created') {
    return planted.length > 0
      ? finding(
          candidate,
          'bait',
          `${planted.join(', ')} is already planted, so its creation cannot be shown`,
        )
      : finding(candidate, 'clean', `nothing matching ${where} is planted`);
  }
  return planted.length > 0
    ? finding(
        candidate,
        'clean',
        `${planted.join(', ')} is planted for the agent to ${kind === 'file_deleted' ? 'delete' : 'modify'}`,
      )
    : finding(candidate, 'vacuous', `nothing matching ${where} is planted, so ${kind} could never hold`);
}

/** Checks many candidates, `concurrency` at a time; findings in the candidates' order. */
export async function checkAllBait(
  candidates: readonly BaitCandidate[],
  options: BaitCheckOptions & { concurrency?: number | undefined } = {},
): Promise<BaitFinding[]> {
  const findings: BaitFinding[] = new Array(candidates.length);
  let next = 0;
  const worker = async () => {
    while (next < candidates.length) {
      options.signal?.throwIfAborted();
      const index = next++;
      findings[index] = await checkBait(candidates[index] as BaitCandidate, options);
    }
  };
  // Settle every worker before returning or rethrowing, so no temporary workspace outlives the call.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(options.concurrency ?? 4, candidates.length) }, worker),
  );
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return findings;
}

function plantedUris(observation: Observation): string[] {
  return observation.payload.entries.map((entry) => entry.uri).sort();
}

function finding(candidate: BaitCandidate, status: BaitStatus, detail: string): BaitFinding {
  return { attack: candidate.id, status, detail };
}
