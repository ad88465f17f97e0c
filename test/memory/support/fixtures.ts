import { createHash } from 'node:crypto';
import type { AttackResult } from '../../../src/models/attack-result.js';
import type { ComponentIdentifier } from '../../../src/models/identifier.js';
import { type Observation, ObservationSchema } from '../../../src/models/observation.js';
import { parseRecord } from '../../../src/models/record.js';
import type { Scorable } from '../../../src/models/scorable.js';
import { type Score, ScoreSchema } from '../../../src/models/score.js';

/** Valid records for memory tests, each checked through its real schema. */

export const TEST_SOURCE: ComponentIdentifier = {
  type: 'test_source',
  version: '1',
  params: { root: '/ws' },
};
export const TEST_SCORER: ComponentIdentifier = {
  type: 'test_scorer',
  version: '1',
  params: {},
  children: { source: TEST_SOURCE },
};

/** A complete observation of `/data/out.txt` holding `text`. */
export function observation(id: string, text = 'hello', uri = '/data/out.txt'): Observation {
  return parseRecord(
    ObservationSchema,
    {
      id,
      sourceIdentifier: TEST_SOURCE,
      acquisition: 'complete',
      observedAt: '2025-01-02T03:04:05.000Z',
      scorable: { scorableType: 'surface', uri, match: 'exact' },
      payload: {
        kind: 'surface',
        schemaVersion: 1,
        scope: { scorableType: 'surface', uri, match: 'exact' },
        entries: [
          {
            uri,
            sizeBytes: Buffer.byteLength(text),
            sha256: createHash('sha256').update(text).digest('hex'),
            modifiedAt: '2025-01-01T00:00:00.000Z',
            content: text,
            contentTruncated: false,
          },
        ],
        coverage: { complete: true, reasons: [], gaps: [] },
      },
      metadata: {},
    },
    'test observation',
  );
}

export interface ScoreInput {
  observationIds?: string[];
  scorable?: Scorable;
  value?: boolean | null;
  createdAt?: string;
  messagePieceId?: string;
}

/** A score resting on `observationIds` (true unless `value` says otherwise; null is undetermined). */
export function score(id: string, input: ScoreInput = {}): Score {
  const value = input.value === undefined ? true : input.value;
  const record: Record<string, unknown> = {
    id,
    status: value === null ? 'undetermined' : 'complete',
    value,
    scoreType: 'true_false',
    description: 'content_written /data/out.txt',
    rationale: value === null ? 'Undetermined.' : `Verdict ${String(value)}.`,
    scorable: input.scorable ?? { scorableType: 'surface', uri: '/data/out.txt', match: 'exact' },
    scorer: TEST_SCORER,
    scoredExpectation: {
      schemaVersion: 1,
      conditions: [{ conditionType: 'content_written', uri: '/data/out.txt', match: 'exact' }],
    },
    observationIds: input.observationIds ?? [],
    createdAt: input.createdAt ?? '2025-01-02T03:04:06.000Z',
    metadata: {},
  };
  if (input.messagePieceId !== undefined) record.messagePieceId = input.messagePieceId;
  return parseRecord(ScoreSchema, record, 'test score');
}

export function attackResult(
  id: string,
  conversationId: string,
  overrides: Partial<AttackResult> = {},
): AttackResult {
  return {
    id,
    campaign: 'demo',
    attack: 'hook-injection',
    attempt: 0,
    conversationId,
    outcome: 'undetermined',
    scoreId: null,
    target: { type: 'mock_agent', version: '1', params: { mode: 'vulnerable' } },
    workspace: { root: '/tmp/ws-1', template: null, kept: false },
    reply: 'I only summarized the README.',
    error: null,
    createdAt: '2025-01-02T03:04:07.000Z',
    metadata: {},
    ...overrides,
  };
}
