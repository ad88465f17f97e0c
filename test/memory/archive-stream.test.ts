import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InvalidRecordError } from '../../src/errors.js';
import { type ArchiveRecord, archiveLines, parseArchiveLines } from '../../src/memory/archive.js';
import type { Memory } from '../../src/memory/memory.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { runCli } from '../support/cli.js';
import { makeWorkspace } from '../support/workspace.js';

/**
 * The archive's edges: exports that cross the pages the memory is read in, archives of the old version
 * (no closing line), and archives cut short, appended to, recounted or naming records that are not there,
 * each refused naming its line, with nothing imported.
 */

async function lines(memory: Memory): Promise<string[]> {
  const all: string[] = [];
  for await (const line of archiveLines(memory.exportRecords())) all.push(line);
  return all;
}

async function parse(text: string[]): Promise<ArchiveRecord[]> {
  const records: ArchiveRecord[] = [];
  for await (const record of parseArchiveLines(text, 'a.jsonl')) records.push(record);
  return records;
}

/** A memory of 450 one-message conversations and one of 250 messages: more than a page of each group. */
async function populated(): Promise<Memory> {
  const memory = await openMemory(':memory:');
  for (let i = 0; i < 450; i++) {
    const conversation = await memory.createConversation({ labels: { i: String(i) } });
    await memory.appendMessage({ conversationId: conversation.id, role: 'user', texts: [`hello ${i}`] });
  }
  const long = await memory.createConversation();
  for (let turn = 0; turn < 250; turn++) {
    await memory.appendMessage({ conversationId: long.id, role: 'assistant', texts: [`turn ${turn}`] });
  }
  return memory;
}

describe('witness export archives, streamed', () => {
  // One populated memory and its archive for the file (1,150 records written through the memory's API):
  // every test below reads them and none changes them, so each need not write its own.
  let source: Memory;
  let exported: readonly string[];
  before(async () => {
    source = await populated();
    exported = await lines(source);
  });
  after(() => source.close());

  it('exports every record once across page boundaries, and imports back to the same bytes', async () => {
    const copy = await openMemory(':memory:');
    try {
      assert.equal(exported[0], '{"recordType":"header","format":"witness-memory","schemaVersion":2}');
      const end = JSON.parse(exported.at(-1) as string) as { records: Record<string, number> };
      assert.deepEqual(end, {
        recordType: 'end',
        records: {
          conversation: 451,
          message_piece: 700,
          observation: 0,
          score: 0,
          run: 0,
          attack_result: 0,
        },
      });
      const ids = exported.slice(1, -1).map((line) => (JSON.parse(line) as ArchiveRecord).record);
      assert.equal(new Set(ids.map((record) => (record as { id: string }).id)).size, 1151, 'no record twice');
      const summary = await copy.importRecords(parseArchiveLines(exported));
      assert.equal(summary.conversation, 451);
      assert.equal(summary.message_piece, 700);
      assert.deepEqual(await lines(copy), exported);
      assert.deepEqual(await lines(source), exported, 'a second export of the same memory is the same');
    } finally {
      await copy.close();
    }
  });

  it("validates a caller's own records; those parseArchiveLines made are not validated twice", async () => {
    // parseArchiveLines validates each record as it parses it, so the import takes those as they are;
    // a record a caller built itself has been validated by nobody, and the import does it.
    const memory = await openMemory(':memory:');
    try {
      const made = {
        id: 'c1',
        labels: { a: 1 },
        createdAt: 'yesterday',
      } as unknown as ArchiveRecord['record'];
      await assert.rejects(
        memory.importRecords([{ recordType: 'conversation', record: made } as ArchiveRecord]),
        (error: unknown) =>
          error instanceof InvalidRecordError && /^invalid conversation: .*labels/.test(error.message),
      );
      const parsed = await parse([
        '{"recordType":"header","format":"witness-memory","schemaVersion":1}',
        JSON.stringify({
          recordType: 'conversation',
          record: { id: 'c1', createdAt: '2026-01-01T00:00:00.000Z', labels: {}, metadata: {} },
        }),
      ]);
      assert.equal((await memory.importRecords(parsed)).conversation, 1);
      assert.equal((await memory.getConversation('c1')).id, 'c1');
    } finally {
      await memory.close();
    }
  });

  it('reads a version 1 archive, which has no closing line', async () => {
    const v1 = [
      '{"recordType":"header","format":"witness-memory","schemaVersion":1}',
      ...exported.slice(1, -1),
    ];
    assert.equal((await parse(v1)).length, 1151);
    // A version 1 archive knows no closing line: one is a record of no known type.
    await assert.rejects(parse([...v1, exported.at(-1) as string]), /line 1153 is not a valid record/);
  });

  it('refuses an archive cut short, appended to or recounted, naming the line', async () => {
    const refused = async (text: string[], pattern: RegExp) => {
      await assert.rejects(parse(text), (error: unknown) => {
        assert.ok(error instanceof InvalidRecordError, String(error));
        assert.match(error.message, pattern);
        return true;
      });
    };
    // Cut at a line break: only the closing line tells.
    await refused(exported.slice(0, 600), /a\.jsonl ends at line 600 without its closing line.*cut short/);
    await refused(exported.slice(0, 1), /ends at line 1 without its closing line/);
    // Cut inside a line.
    const torn = [...exported.slice(0, 99), (exported[99] as string).slice(0, 40)];
    await refused(torn, /a\.jsonl line 100 is not JSON/);
    // A line removed, or one added, in the middle.
    await refused(
      [...exported.slice(0, 10), ...exported.slice(11)],
      /line 1152 closes an archive whose records do not match its counts \(451 conversation records, 450 read\)/,
    );
    await refused(
      [...exported.slice(0, -1), exported.at(-2) as string, exported.at(-1) as string],
      /700 message_piece records, 701 read/,
    );
    await refused([...exported, exported[5] as string], /line 1154 follows the archive's closing line/);
    await refused(
      [...exported.slice(0, -1), '{"recordType":"end","records":{"conversation":-1}}'],
      /line 1153 is not a valid closing line/,
    );
  });

  it('imports nothing from an archive cut short, even into a memory that holds records', async () => {
    const target = await openMemory(':memory:');
    try {
      const kept = await target.createConversation({ labels: { kept: 'yes' } });
      await assert.rejects(
        target.importRecords(parseArchiveLines(exported.slice(0, -1))),
        /without its closing line/,
      );
      const after = await lines(target);
      assert.equal(after.length, 3, 'only the conversation that was there');
      assert.equal((await target.getConversation(kept.id)).labels.kept, 'yes');
    } finally {
      await target.close();
    }
  });

  it('witness import names the line of a record the memory refuses, and leaves no database behind', async () => {
    // Drop the first conversation and its count: the archive is well formed, but its first message
    // piece names a conversation that is not stored.
    const firstPiece = exported.findIndex((line) => line.startsWith('{"recordType":"message_piece"'));
    const orphanOf = (JSON.parse(exported[firstPiece] as string) as { record: { conversationId: string } })
      .record.conversationId;
    const dropped = exported.findIndex((line) => line.includes(`"id":${JSON.stringify(orphanOf)}`));
    const forged = exported.filter((_, i) => i !== dropped);
    forged[forged.length - 1] = (forged.at(-1) as string).replace('"conversation":451', '"conversation":450');
    const dir = makeWorkspace();
    const file = path.join(dir, 'forged.jsonl');
    writeFileSync(file, `${forged.join('\n')}\n`);
    const db = path.join(dir, 'new.db');
    const result = await runCli(['import', file, '--db', db]);
    assert.equal(result.status, 2, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(`forged\\.jsonl line ${firstPiece}: .*conversation.*${orphanOf}.*nothing was imported`),
    );
    assert.equal(existsSync(db), false);
  });
});
