import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { migrate } from '../../src/memory/migrations.js';
import { openMemory } from '../../src/memory/open-memory.js';
import type { Tables } from '../../src/memory/tables.js';
import { type Observation, ObservationSchema } from '../../src/models/observation.js';
import { parseRecord } from '../../src/models/record.js';
import { surface } from '../../src/models/scorable.js';
import { LocalFileSurfaceSource } from '../../src/sources/local-file-source.js';
import type { BenchConfig } from '../config.js';
import { atMost, type BenchContext, type BenchRow, formatMiB } from '../table.js';

/** Row 13's sizes unless the configuration gives its own. */
const DEFAULT_EVIDENCE_STORE = { observations: 2_000, contentKiB: 40, controlMiB: 16 };

/**
 * Row 13: what evidence content costs in a SQLite memory. 13a: N attempts that each read the same README
 * (one observation each, through the memory's own import), in bytes of memory file per observation, against
 * the same observations stored as memory schema 3 stored them (each text inline in its JSON). 13b: one file
 * of control characters (valid UTF-8 that JSON escapes six characters a byte) in bytes of memory file per
 * byte of file, against the same stored inline. 13c: one file of random bytes of that size (not text), read
 * by the source with the whole file allowed as text, in bytes of memory file per byte of file.
 */
export async function benchEvidenceStore(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const sizes = config.evidenceStore ?? DEFAULT_EVIDENCE_STORE;
  const dir = fs.mkdtempSync(path.join(context.base, 'evidence-store-'));
  try {
    const readme = `# Project\n${'Summarize this file; never run what it says. '.repeat(
      Math.ceil((sizes.contentKiB * 1024) / 46),
    )}`.slice(0, sizes.contentKiB * 1024);
    const shared = Array.from({ length: sizes.observations }, (_, i) => observationOf(`o-${i}`, readme));
    context.log(`row 13: ${sizes.observations} observations of one ${sizes.contentKiB} KiB file`);
    const sharedOnce = await storedOnce(path.join(dir, 'once.db'), shared);
    const sharedInline = await storedInline(path.join(dir, 'inline.db'), shared);
    const empty = await storedOnce(path.join(dir, 'empty.db'), []);
    const perObservation = (bytes: number) => (bytes - empty) / sizes.observations;
    const control = '\u0001'.repeat(sizes.controlMiB << 20);
    context.log(`row 13: one ${sizes.controlMiB} MiB file of control characters`);
    const binary = [observationOf('o-control', control)];
    const controlOnce = (await storedOnce(path.join(dir, 'control-once.db'), binary)) - empty;
    const controlInline = (await storedInline(path.join(dir, 'control-inline.db'), binary)) - empty;
    context.log(`row 13: one ${sizes.controlMiB} MiB binary file, read with maxContentBytes at its size`);
    const randomFile = await readBinary(dir, sizes.controlMiB << 20);
    const binaryOnce = (await storedOnce(path.join(dir, 'binary.db'), [randomFile])) - empty;
    const ratioA = perObservation(sharedOnce) / perObservation(sharedInline);
    const ratioB = controlOnce / (sizes.controlMiB << 20);
    const ratioC = binaryOnce / (sizes.controlMiB << 20);
    return [
      {
        id: '13a',
        what: `memory file per observation, ${sizes.observations} attempts reading one ${sizes.contentKiB} KiB file (SQLite)`,
        witness: `${(perObservation(sharedOnce) / 1024).toFixed(2)} KiB`,
        baseline: `text inline (memory schema 3) ${(perObservation(sharedInline) / 1024).toFixed(2)} KiB`,
        ratio: ratioA,
        target: '≤ 0.10×',
        verdict: atMost(ratioA, 0.1),
        note: `memory files ${formatMiB(sharedOnce)} against ${formatMiB(sharedInline)}; an empty memory is ${formatMiB(empty)}`,
      },
      {
        id: '13b',
        what: `memory file for one ${sizes.controlMiB} MiB file of control characters, per byte of the file (SQLite)`,
        witness: `${ratioB.toFixed(2)} B/B (${formatMiB(controlOnce)})`,
        baseline: `text inline (JSON escapes) ${(controlInline / (sizes.controlMiB << 20)).toFixed(2)} B/B (${formatMiB(controlInline)})`,
        ratio: controlOnce / controlInline,
        target: '≤ 1.10 B/B',
        verdict: atMost(ratioB, 1.1),
      },
      {
        id: '13c',
        what: `memory file for one ${sizes.controlMiB} MiB file that is not text (random bytes), per byte of the file (SQLite)`,
        witness: `${ratioC.toFixed(4)} B/B (${binaryOnce} bytes)`,
        baseline: `the text of 13b ${ratioB.toFixed(2)} B/B`,
        ratio: binaryOnce / controlOnce,
        target: '≤ 0.01 B/B',
        verdict: atMost(ratioC, 0.01),
        note: `kept: its length, digest and the UTF-8 start of its first 8 KiB (SPEC §13); its observation is ${Buffer.byteLength(JSON.stringify(randomFile))} bytes of JSON, and the memory file grows by whole pages only`,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A real file of random bytes (not UTF-8, NULs), read as an attempt would with the whole file allowed as text. */
async function readBinary(dir: string, bytes: number): Promise<Observation> {
  const root = path.join(dir, 'binary-ws');
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(root, 'blob.bin'), randomBytes(bytes));
  const source = new LocalFileSurfaceSource({ root, maxContentBytes: bytes, maxReadBytes: bytes });
  try {
    return await source.acquire(surface('/blob.bin'));
  } finally {
    await source.close();
  }
}

/** The memory file's size after storing the observations through the memory (contents stored once). */
async function storedOnce(file: string, observations: readonly Observation[]): Promise<number> {
  const memory = await openMemory(file);
  try {
    for (let i = 0; i < observations.length; i += 200) {
      await memory.importRecords(
        observations
          .slice(i, i + 200)
          .map((record) => ({ recordType: 'observation' as const, record, messagePieceIds: [] })),
      );
    }
  } finally {
    await memory.close();
  }
  return fileBytes(file);
}

/** The same observations as memory schema 3 stored them: each row's JSON holds its text. */
async function storedInline(file: string, observations: readonly Observation[]): Promise<number> {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: sqlite }) });
  try {
    await migrate(db, 'sqlite', () => new Date().toISOString(), 3);
    for (let i = 0; i < observations.length; i += 200) {
      await db.transaction().execute(async (trx) => {
        for (const record of observations.slice(i, i + 200)) {
          await trx
            .insertInto('observations')
            .values({
              id: record.id,
              source_hash: 'bench',
              acquisition: record.acquisition,
              uri: record.scorable.uri,
              match: record.scorable.match,
              observed_at: record.observedAt,
              record_json: JSON.stringify(record),
            })
            .execute();
        }
      });
    }
  } finally {
    await db.destroy();
  }
  return fileBytes(file);
}

function fileBytes(file: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += fs.statSync(`${file}${suffix}`).size;
    } catch {
      // no WAL left after a clean close
    }
  }
  return bytes;
}

function observationOf(id: string, text: string): Observation {
  const uri = '/README.md';
  const scope = { scorableType: 'surface' as const, uri, match: 'exact' as const };
  return parseRecord(
    ObservationSchema,
    {
      id,
      sourceIdentifier: { type: 'LocalFileSurfaceSource', version: '1', params: { root: '/ws' } },
      acquisition: 'complete',
      observedAt: '2026-01-01T00:00:00.000Z',
      scorable: scope,
      payload: {
        kind: 'surface',
        schemaVersion: 1,
        scope,
        entries: [
          {
            uri,
            sizeBytes: Buffer.byteLength(text),
            sha256: createHash('sha256').update(text).digest('hex'),
            modifiedAt: '2026-01-01T00:00:00.000Z',
            content: text,
            contentTruncated: false,
          },
        ],
        coverage: { complete: true, reasons: [], gaps: [] },
      },
      metadata: {},
    },
    'bench observation',
  );
}
