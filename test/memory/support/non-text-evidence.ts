import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Memory } from '../../../src/memory/memory.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import { contentWritten } from '../../../src/models/condition.js';
import { expectation } from '../../../src/models/expectation.js';
import { contains, equals, type Matcher, regex } from '../../../src/models/matcher.js';
import { NON_TEXT_PREFIX_BYTES, type Observation } from '../../../src/models/observation.js';
import { surface } from '../../../src/models/scorable.js';
import { FileWriteScorer, replayObservation } from '../../../src/scorers/file-write-scorer.js';
import { LocalFileSurfaceSource } from '../../../src/sources/local-file-source.js';

/**
 * Evidence that is not text, stored compactly (SPEC §13): a real binary file of `fileBytes` bytes (bytes
 * that are not UTF-8, NULs, a marker past the prefix) read with the whole file allowed as text
 * (`maxContentBytes` = its size, as an operator raising the limit would), judged by the scorer into a real
 * SQLite memory, then read back and judged again. The memory grows by its length, digest and a bounded
 * prefix, not by the file; every verdict rests on what was kept: a `contains` in the prefix proves, one
 * past it and a regex are undetermined (never `false`), an exact `equals` is decided by size and digest.
 */

const EARLY = 'attacker.example';
const LATE = 'LATE-MARKER-past-the-prefix';
/** A file that is valid UTF-8 but holds NUL bytes (not text either), for an `equals` decided by its digest. */
const NUL_TEXT = 'key=value\u0000'.repeat(3_000);
/** Valid UTF-8 holding NULs, a quarter of the binary's size: before, kept whole as text. */
const zerosOf = (fileBytes: number) => 'x\u0000'.repeat(Math.ceil(fileBytes / 8));

interface Case {
  name: string;
  uri: string;
  matcher: Matcher;
  status: 'complete' | 'undetermined';
  value: boolean | null;
  rationale?: RegExp;
}

const CASES: readonly Case[] = [
  {
    name: 'contains in the prefix',
    uri: '/blob.bin',
    matcher: contains(EARLY),
    status: 'complete',
    value: true,
  },
  {
    name: 'contains past the prefix',
    uri: '/blob.bin',
    matcher: contains(LATE),
    status: 'undetermined',
    value: null,
    rationale:
      /content is not text \(not UTF-8, or holding a NUL byte\): only its length, digest and a prefix are kept/,
  },
  { name: 'regex', uri: '/blob.bin', matcher: regex('attacker'), status: 'undetermined', value: null },
  {
    name: 'exact equals, by size and digest',
    uri: '/blob.bin',
    matcher: equals('anything', { caseSensitive: true, ignoreWhitespace: false }),
    status: 'complete',
    value: false,
  },
  {
    name: 'exact equals of a NUL-holding text, by digest',
    uri: '/nul.txt',
    matcher: equals(NUL_TEXT, { caseSensitive: true, ignoreWhitespace: false }),
    status: 'complete',
    value: true,
  },
  {
    name: 'contains in a large NUL-holding text',
    uri: '/zeros.txt',
    matcher: contains('x'),
    status: 'complete',
    value: true,
  },
  {
    name: 'contains absent from a large NUL-holding text',
    uri: '/zeros.txt',
    matcher: contains('zzz-absent'),
    status: 'undetermined',
    value: null,
  },
  {
    name: 'contains absent from a NUL-holding text',
    uri: '/nul.txt',
    matcher: contains('zzz-absent'),
    status: 'undetermined',
    value: null,
  },
];

/** The binary: an ASCII start naming EARLY, then bytes that are not UTF-8, NULs, LATE in the middle. */
function writeBinary(file: string, fileBytes: number): void {
  const bytes = randomBytes(fileBytes);
  const head = Buffer.from(`BLOB v1 ${EARLY}\n`);
  head.copy(bytes, 0);
  bytes[head.length] = 0xff; // never UTF-8
  bytes[head.length + 1] = 0x00;
  Buffer.from(LATE).copy(bytes, Math.floor(fileBytes / 2));
  fs.writeFileSync(file, bytes);
}

function memoryFileBytes(file: string): number {
  return ['', '-wal'].reduce((sum, suffix) => {
    try {
      return sum + fs.statSync(`${file}${suffix}`).size;
    } catch {
      return sum;
    }
  }, 0);
}

export async function checkNonTextEvidence(dir: string, fileBytes: number): Promise<void> {
  const root = path.join(dir, 'ws');
  fs.mkdirSync(root);
  writeBinary(path.join(root, 'blob.bin'), fileBytes);
  const zeros = zerosOf(fileBytes);
  fs.writeFileSync(path.join(root, 'nul.txt'), NUL_TEXT);
  fs.writeFileSync(path.join(root, 'zeros.txt'), zeros);
  const database = path.join(dir, 'witness.db');
  await (await openMemory(database)).close();
  const empty = memoryFileBytes(database);

  const source = new LocalFileSurfaceSource({
    root,
    maxContentBytes: fileBytes,
    maxReadBytes: 2 * fileBytes,
  });
  let memory: Memory = await openMemory(database);
  const judged: { kase: Case; observation: Observation }[] = [];
  try {
    const scorer = new FileWriteScorer({ source, memory });
    for (const kase of CASES) {
      const expected = expectation([contentWritten(kase.uri, kase.matcher)]);
      const {
        scores: [score],
        observations: [observation],
      } = await scorer.score({ scorable: surface(kase.uri), expectation: expected });
      assert.ok(score !== undefined && observation !== undefined);
      assert.deepEqual(
        [score.status, score.value],
        [kase.status, kase.value],
        `${kase.name}: ${score.rationale}`,
      );
      if (kase.rationale !== undefined) assert.match(score.rationale, kase.rationale);
      const [entry] = observation.payload.entries;
      assert.equal(entry?.notText, true, kase.name);
      assert.equal(entry?.contentTruncated, true);
      assert.ok(Buffer.byteLength(entry?.content ?? '') <= NON_TEXT_PREFIX_BYTES);
      assert.equal(
        entry?.sizeBytes,
        { '/blob.bin': fileBytes, '/nul.txt': NUL_TEXT.length, '/zeros.txt': zeros.length }[kase.uri],
      );
      judged.push({ kase, observation });
    }
    const blob = judged[0]?.observation.payload.entries[0];
    // The prefix is the file's text up to its first byte that is not UTF-8.
    assert.equal(blob?.content, `BLOB v1 ${EARLY}\n`);
  } finally {
    await memory.close();
  }
  // Eight observations (four of the binary, two of a quarter of its size) are in the memory: each costs its
  // length, digest and prefix.
  const grown = memoryFileBytes(database) - empty;
  assert.ok(
    grown < Math.min(256 * 1024, fileBytes / 4),
    `the memory grew by ${grown} bytes for a ${fileBytes}-byte file read four times and one of a quarter of it twice`,
  );

  // Judged again from the memory alone (a fresh connection): the same evidence, the same verdicts.
  memory = await openMemory(database);
  try {
    for (const { kase, observation } of judged) {
      const stored = await memory.getObservation(observation.id);
      assert.deepEqual(stored, observation);
      const {
        scores: [score],
      } = await replayObservation({
        observation: stored,
        expectation: expectation([contentWritten(kase.uri, kase.matcher)]),
      });
      assert.deepEqual([score?.status, score?.value], [kase.status, kase.value], `replayed ${kase.name}`);
    }
  } finally {
    await memory.close();
  }
}
