import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { ImmutableRecordError, InvalidRecordError } from '../../../src/errors.js';
import type { ArchiveRecord } from '../../../src/memory/archive.js';
import { INLINE_CONTENT_MAX_BYTES } from '../../../src/memory/evidence-contents.js';
import type { Memory } from '../../../src/memory/memory.js';
import { migrate } from '../../../src/memory/migrations.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import type { Tables } from '../../../src/memory/tables.js';
import { type Observation, ObservationSchema } from '../../../src/models/observation.js';
import { parseRecord } from '../../../src/models/record.js';
import { judgeContentWritten } from '../../../src/verdicts/content-written.js';
import type { TestBackend, TestDatabase } from './backends.js';
import { observation, score, TEST_SOURCE } from './fixtures.js';
import { freshMemoryForEachTest, withFreshMemory } from './fresh-memory.js';

/**
 * Evidence content stored once per distinct content, as bytes (memory schema 4): what a red team's
 * hundred thousand attempts that all read the same file cost, what a file of control characters costs,
 * and that neither a forged record nor an edit behind Witness's back changes what an observation reads
 * back as. Run once per backend.
 */

const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
/** A 40 KB README every attempt reads. */
const README = `# Project\n${'Summarize me, but do not run anything. '.repeat(1050)}\nEND-OF-README\n`;

const count = async (database: TestDatabase, statement: string): Promise<number> =>
  Number(Object.values((await database.query(statement))[0] ?? {})[0] ?? 0);

export function evidenceContentsSuite(backend: TestBackend): void {
  describe(`evidence contents on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the evidence content tests on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    let database: TestDatabase;
    let memory: Memory;
    freshMemoryForEachTest(backend, (fresh) => {
      ({ database, memory } = fresh);
    });

    async function storeObservations(records: readonly Observation[], into = memory): Promise<void> {
      for (const [i, record] of records.entries()) {
        await into.saveScore(score(`s-${i}`, { observationIds: [record.id] }), [record]);
      }
    }

    it('stores a content every attempt saw once, and reads each observation back whole', async () => {
      const records = Array.from({ length: 60 }, (_, i) => observation(`o-${i}`, README));
      await storeObservations(records);
      assert.equal(await count(database, 'select count(*) from evidence_contents'), 1);
      assert.equal(
        await count(database, 'select sum(length(bytes)) from evidence_contents'),
        Buffer.byteLength(README),
      );
      assert.equal(await count(database, 'select count(*) from observation_contents'), 60);
      // Each observation's own row no longer holds the text.
      const perRow = await count(database, 'select max(length(record_json)) from observations');
      assert.ok(perRow < 2_000, `an observation row holds ${perRow} characters`);
      for (const record of records) assert.deepEqual(await memory.getObservation(record.id), record);
      assert.deepEqual(await memory.observationsForScore('s-7'), [records[7]]);
      if (backend.name === 'sqlite') {
        // 60 copies inline would be 2.4 MB; once, it is the text and 60 small rows.
        const bytes = await count(
          database,
          'select page_count * page_size from pragma_page_count(), pragma_page_size()',
        );
        assert.ok(bytes < 400_000, `the memory file holds ${bytes} bytes`);
      }
    });

    it('judges a stored observation again offline exactly as the one taken', async () => {
      await storeObservations([observation('o-judge', README)]);
      const stored = await memory.getObservation('o-judge');
      const condition = {
        conditionType: 'content_written' as const,
        uri: '/data/out.txt',
        match: 'exact' as const,
        matcher: {
          matcherType: 'contains' as const,
          value: 'END-OF-README',
          caseSensitive: true,
          ignoreWhitespace: false,
        },
      };
      const judged = judgeContentWritten(stored, condition);
      assert.equal(judged.value, true, judged.rationale);
      assert.deepEqual(judged, judgeContentWritten(observation('o-judge', README), condition));
    });

    it('stores a file of control characters as its bytes, not as six-character JSON escapes', async () => {
      // Valid UTF-8 that JSON writes as \u0001 per byte: 1 MB became 6 MB of stored JSON.
      const control = '\u0001'.repeat(1_000_000);
      await storeObservations([observation('o-binary', control)]);
      const json = await count(database, 'select sum(length(record_json)) from observations');
      assert.ok(json < 2_000, `the observation row holds ${json} characters`);
      assert.equal(await count(database, 'select sum(length(bytes)) from evidence_contents'), 1_000_000);
      if (backend.name === 'sqlite') {
        const bytes = await count(
          database,
          'select page_count * page_size from pragma_page_count(), pragma_page_size()',
        );
        assert.ok(bytes < 1_300_000, `a 1 MB file cost ${bytes} bytes of memory`);
      }
      assert.deepEqual(await memory.getObservation('o-binary'), observation('o-binary', control));
    });

    it('keys a content by its own digest: a forged record claiming an honest file digest changes nothing', async () => {
      // The forger's text has the honest text's length and claims its digest (the entry's sha256 is
      // not checked against the text by the schema). Keyed by that claim, the honest attempt's evidence
      // stored afterwards would read back as the forger's text.
      const honest = `${'h'.repeat(600)}\n`;
      const forged = observation('o-forged', `${'f'.repeat(600)}\n`);
      const claim = parseRecord(
        ObservationSchema,
        {
          ...forged,
          payload: {
            ...forged.payload,
            entries: [{ ...(forged.payload.entries[0] as object), sha256: sha(honest) }],
          },
        },
        'forged observation',
      );
      await memory.importRecords([{ recordType: 'observation', record: claim, messagePieceIds: [] }]);
      await storeObservations([observation('o-honest', honest)]);
      assert.equal((await memory.getObservation('o-honest')).payload.entries[0]?.content, honest);
      assert.deepEqual(await memory.getObservation('o-forged'), claim);
      assert.equal(await count(database, 'select count(*) from evidence_contents'), 2);
    });

    it('refuses to change or delete stored content, and reads content edited behind its back as an error', async () => {
      await storeObservations([observation('o-1', README)]);
      const key = sha(README);
      await assert.rejects(
        database.exec(`update evidence_contents set sha256 = '${'0'.repeat(64)}'`),
        /witness_immutable/,
      );
      await assert.rejects(database.exec('delete from evidence_contents'), /witness_immutable/);
      await assert.rejects(database.exec('delete from observation_contents'), /witness_immutable/);
      // Another client that drops the guard and rewrites the bytes (same length: only the digest tells):
      await database.exec(
        backend.name === 'sqlite'
          ? 'drop trigger evidence_contents_no_update'
          : 'drop trigger evidence_contents_immutable on evidence_contents',
      );
      const forged = Buffer.from(README.replace('Summarize', 'Run rm -r'), 'utf8').toString('hex');
      await database.exec(
        backend.name === 'sqlite'
          ? `update evidence_contents set bytes = x'${forged}' where sha256 = '${key}'`
          : `update evidence_contents set bytes = '\\x${forged}'::bytea where sha256 = '${key}'`,
      );
      await assert.rejects(memory.getObservation('o-1'), InvalidRecordError);
    });

    it('stores an identical observation again as a no-op and a different one under its id as an error', async () => {
      await storeObservations([observation('o-1', README)]);
      await memory.importRecords([
        { recordType: 'observation', record: observation('o-1', README), messagePieceIds: [] },
      ]);
      await assert.rejects(
        memory.importRecords([
          { recordType: 'observation', record: observation('o-1', `${README}!`), messagePieceIds: [] },
        ]),
        ImmutableRecordError,
      );
      assert.deepEqual(await memory.getObservation('o-1'), observation('o-1', README));
    });

    it('keeps short texts, texts with an unpaired surrogate and a leading BOM exactly as they were', async () => {
      const short = 'x'.repeat(INLINE_CONTENT_MAX_BYTES - 1);
      const bom = `\uFEFF${'b'.repeat(400)}`;
      const lone = `\uD800${'s'.repeat(400)}`;
      const records = [observation('o-short', short), observation('o-bom', bom), loneSurrogate(lone)];
      await storeObservations(records);
      assert.equal(await count(database, 'select count(*) from evidence_contents'), 1);
      for (const record of records) assert.deepEqual(await memory.getObservation(record.id), record);
    });

    it('exports observations whole and imports them stored once', async () => {
      await storeObservations(Array.from({ length: 5 }, (_, i) => observation(`o-${i}`, README)));
      const exported: ArchiveRecord[] = [];
      for await (const record of memory.exportRecords()) exported.push(record);
      const observations = exported.filter((record) => record.recordType === 'observation');
      assert.equal(observations.length, 5);
      for (const record of observations) assert.equal(record.record.payload.entries[0]?.content, README);
      await withFreshMemory(backend, async ({ database: copy, memory: target }) => {
        await target.importRecords(exported);
        assert.equal(await count(copy, 'select count(*) from evidence_contents'), 1);
        const again: ArchiveRecord[] = [];
        for await (const record of target.exportRecords()) again.push(record);
        assert.equal(JSON.stringify(again), JSON.stringify(exported));
      });
    });

    it('opens a memory of schema 3 with texts inline, reads them as they were, and stores new ones apart', async () => {
      // A database written at schema 3 by hand, then opened: not a fresh memory, so not withFreshMemory.
      const old = await backend.fresh();
      let reopened: Memory | undefined;
      try {
        const db =
          backend.name === 'sqlite'
            ? new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(old.target) }) })
            : new Kysely<Tables>({
                dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: old.target, max: 1 }) }),
              });
        try {
          await migrate(db, backend.name, () => '2025-01-01T00:00:00.000Z', 3);
          const inline = observation('o-old', README);
          await db
            .insertInto('observations')
            .values({
              id: inline.id,
              source_hash: 'x',
              acquisition: inline.acquisition,
              uri: inline.scorable.uri,
              match: inline.scorable.match,
              observed_at: inline.observedAt,
              record_json: JSON.stringify(inline),
            })
            .execute();
        } finally {
          await db.destroy();
        }
        reopened = await openMemory(old.target);
        assert.deepEqual(await reopened.getObservation('o-old'), observation('o-old', README));
        await storeObservations([observation('o-new', README)], reopened);
        assert.equal(await count(old, 'select count(*) from evidence_contents'), 1);
        assert.deepEqual(await reopened.getObservation('o-new'), observation('o-new', README));
        const exported: ArchiveRecord[] = [];
        for await (const record of reopened.exportRecords()) exported.push(record);
        assert.deepEqual(
          exported.filter((record) => record.recordType === 'observation').map((record) => record.record),
          [observation('o-new', README), observation('o-old', README)].sort((a, b) => (a.id < b.id ? -1 : 1)),
        );
      } finally {
        await reopened?.close();
        await old.cleanup();
      }
    });
  });
}

/** An observation whose text holds an unpaired surrogate (only a forged or hand-made record can). */
function loneSurrogate(text: string): Observation {
  const uri = '/data/out.txt';
  return parseRecord(
    ObservationSchema,
    {
      id: 'o-lone',
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
            sha256: sha(text),
            modifiedAt: '2025-01-01T00:00:00.000Z',
            content: text,
            contentTruncated: false,
          },
        ],
        coverage: { complete: true, reasons: [], gaps: [] },
      },
      metadata: {},
    },
    'observation with an unpaired surrogate',
  );
}
