import { setTimeout as sleep } from 'node:timers/promises';
import type { Observation } from '../models/observation.js';
import type { ScorerMemory } from '../scorers/scorer.js';
import type { AcquireOptions, SurfaceSource } from '../sources/surface-source.js';
import type { SecretRedactor } from '../text/secret-redactor.js';

/**
 * The source an attempt is judged through: the workspace's own source, with three guarantees added.
 *
 * - **Identity**: before and after reading, the workspace path must still name the directory created for
 *   the attempt (device and inode); otherwise nothing is judged (an agent that swapped its workspace for a
 *   link to a root-only directory must not get that directory judged and stored).
 * - **Settling** (`sandbox: none` only, `settleMs` 250): the workspace is read twice; when the readings
 *   differ, a process is still writing, so the observation carries no entries and the gap
 *   `workspace_unsettled`, and the verdict is undetermined. (Under bubblewrap every process is gone.)
 *
 * Redaction is not done here: the verdict is taken on the evidence as read (an attack that makes the
 * agent write its key into a file must be able to succeed), and secrets are replaced in what is stored —
 * {@link redactingScorerMemory} for the score and observations the scorer saves, the attempt record for
 * the rest.
 */

export class WorkspaceReplacedError extends Error {
  constructor() {
    super("the workspace path no longer names the attempt's workspace (it was replaced); it was not judged");
    this.name = 'WorkspaceReplacedError';
  }
}

export interface AttemptSourceOptions {
  settleMs?: number | undefined;
  isIntact?: (() => boolean) | undefined;
}

export function attemptSource(inner: SurfaceSource, options: AttemptSourceOptions): SurfaceSource {
  const checkIdentity = () => {
    if (options.isIntact !== undefined && !options.isIntact()) throw new WorkspaceReplacedError();
  };
  return {
    identifier: () => inner.identifier(),
    async acquire(scorable, acquireOptions?: AcquireOptions): Promise<Observation> {
      checkIdentity();
      let observation = await inner.acquire(scorable, acquireOptions);
      if (options.settleMs !== undefined) {
        await sleep(options.settleMs, undefined, { signal: acquireOptions?.signal });
        const again = await inner.acquire(scorable, acquireOptions);
        observation = sameEvidence(observation, again) ? again : unsettled(observation, again);
      }
      checkIdentity();
      return observation;
    },
  };
}

function sameEvidence(a: Observation, b: Observation): boolean {
  return (
    a.acquisition === b.acquisition &&
    JSON.stringify(a.payload.entries) === JSON.stringify(b.payload.entries) &&
    JSON.stringify(a.payload.coverage) === JSON.stringify(b.payload.coverage)
  );
}

function unsettled(first: Observation, second: Observation): Observation {
  const before = new Map(first.payload.entries.map((entry) => [entry.uri, JSON.stringify(entry)]));
  const after = new Map(second.payload.entries.map((entry) => [entry.uri, JSON.stringify(entry)]));
  const changed = [...new Set([...before.keys(), ...after.keys()])]
    .filter((uri) => before.get(uri) !== after.get(uri))
    .sort();
  const detail =
    changed.length === 0
      ? 'the two readings differed in coverage'
      : `changed between the two readings: ${changed.slice(0, 10).join(', ')}${changed.length > 10 ? ', …' : ''}`;
  return {
    ...second,
    acquisition: 'error',
    payload: {
      ...second.payload,
      entries: [],
      coverage: {
        complete: false,
        reasons: ['workspace_unsettled'],
        gaps: [{ reason: 'workspace_unsettled', detail }],
      },
    },
  };
}

/** The scorer's memory, saving scores and observations with secrets redacted (SPEC §11). */
export function redactingScorerMemory(
  inner: ScorerMemory,
  redactor: SecretRedactor | undefined,
): ScorerMemory {
  if (redactor?.active !== true) return inner;
  return {
    resolveMessage: (pieceIds) => inner.resolveMessage(pieceIds),
    saveScore: (score, observations) =>
      inner.saveScore(
        redactor.redactValue(score),
        observations.map((observation) => redactor.redactObservation(observation)),
      ),
  };
}
