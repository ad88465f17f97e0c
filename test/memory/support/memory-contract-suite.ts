import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ImmutableRecordError,
  InvalidRecordError,
  InvalidReferenceError,
  NotFoundError,
} from '../../../src/errors.js';
import type { ArchiveRecord } from '../../../src/memory/archive.js';
import type { Memory } from '../../../src/memory/memory.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import type { MessagePiece } from '../../../src/models/conversation.js';
import type { TestBackend, TestDatabase } from './backends.js';
import { attackResult, observation, score } from './fixtures.js';
import { freshMemoryForEachTest, withFreshMemory } from './fresh-memory.js';

/** The one contract every Memory backend keeps (SPEC §7), run once per backend. */

/** The suite for one backend: the normal lane runs SQLite, the heavy lane PostgreSQL. */
export function memoryContractSuite(backend: TestBackend): void {
  describe(`memory contract on ${backend.name}`, () => {
    if (backend.skip !== undefined) {
      it(`runs the contract suite on ${backend.name}`, { skip: backend.skip }, () => {});
      return;
    }
    let database: TestDatabase;
    let memory: Memory;
    freshMemoryForEachTest(backend, (fresh) => {
      ({ database, memory } = fresh);
    });

    /** A conversation of a user prompt (turn 0, two pieces) and an assistant reply (turn 1). */
    async function conversationWithReply(): Promise<{ prompt: MessagePiece[]; reply: MessagePiece[] }> {
      await memory.createConversation({ id: 'c1', createdAt: '2025-01-01T00:00:00.000Z' });
      const prompt = await memory.appendMessage({
        conversationId: 'c1',
        role: 'user',
        texts: ['Summarize README.md', 'and nothing else'],
        createdAt: '2025-01-01T00:00:01.000Z',
      });
      const reply = await memory.appendMessage({
        conversationId: 'c1',
        role: 'assistant',
        texts: ['Done: it is a README.'],
        labels: { claim: 'summary-only' },
        createdAt: '2025-01-01T00:00:02.000Z',
      });
      return { prompt, reply };
    }

    describe('conversations and message pieces', () => {
      it('appends messages at successive turns and reads them back in order', async () => {
        const { prompt, reply } = await conversationWithReply();
        assert.deepEqual(
          prompt.map(({ turn, sequence, role }) => ({ turn, sequence, role })),
          [
            { turn: 0, sequence: 0, role: 'user' },
            { turn: 0, sequence: 1, role: 'user' },
          ],
        );
        assert.deepEqual(reply[0], {
          id: reply[0]?.id,
          conversationId: 'c1',
          turn: 1,
          sequence: 0,
          role: 'assistant',
          text: 'Done: it is a README.',
          labels: { claim: 'summary-only' },
          createdAt: '2025-01-01T00:00:02.000Z',
        });
        assert.deepEqual(await memory.listMessagePieces('c1'), [...prompt, ...reply]);
        assert.deepEqual(await memory.getMessagePiece(reply[0]?.id as string), reply[0]);
        assert.deepEqual(await memory.getConversation('c1'), {
          id: 'c1',
          createdAt: '2025-01-01T00:00:00.000Z',
          labels: {},
          metadata: {},
        });
      });

      it('puts concurrent appends to one conversation on distinct, contiguous turns', async () => {
        await memory.createConversation({ id: 'c1' });
        // PostgreSQL: a second client (its own connection pool); SQLite: one memory per file per process.
        const second = backend.name === 'postgres' ? await openMemory(database.target) : memory;
        try {
          await Promise.all(
            Array.from({ length: 30 }, (_, i) =>
              (i % 2 === 0 ? memory : second).appendMessage({
                conversationId: 'c1',
                role: 'user',
                texts: [`message ${i}`],
              }),
            ),
          );
        } finally {
          if (second !== memory) await second.close();
        }
        const turns = (await memory.listMessagePieces('c1')).map((piece) => piece.turn);
        assert.deepEqual(
          turns,
          Array.from({ length: 30 }, (_, i) => i),
        );
      });

      it('refuses a message for a conversation that is not stored', async () => {
        await assert.rejects(
          memory.appendMessage({ conversationId: 'nope', role: 'user', texts: ['hi'] }),
          NotFoundError,
        );
        await assert.rejects(
          memory.addMessagePiece({
            id: 'p1',
            conversationId: 'nope',
            turn: 0,
            sequence: 0,
            role: 'user',
            text: 'hi',
            labels: {},
            createdAt: '2025-01-01T00:00:00.000Z',
          }),
          InvalidReferenceError,
        );
      });

      it('stores explicit pieces idempotently and refuses a second role in one turn or a changed piece', async () => {
        await memory.createConversation({ id: 'c1' });
        const piece: MessagePiece = {
          id: 'p1',
          conversationId: 'c1',
          turn: 0,
          sequence: 0,
          role: 'user',
          text: 'hi',
          labels: {},
          createdAt: '2025-01-01T00:00:00.000Z',
        };
        await memory.addMessagePiece(piece);
        await memory.addMessagePiece(piece);
        await assert.rejects(memory.addMessagePiece({ ...piece, text: 'changed' }), ImmutableRecordError);
        await assert.rejects(
          memory.addMessagePiece({ ...piece, id: 'p2', sequence: 1, role: 'assistant' }),
          InvalidReferenceError,
        );
        await assert.rejects(memory.addMessagePiece({ ...piece, id: 'p3' }), ImmutableRecordError);
        assert.deepEqual(await memory.listMessagePieces('c1'), [piece]);
      });

      it('validates records on write', async () => {
        await assert.rejects(
          memory.createConversation({ id: 'c1', createdAt: 'yesterday' }),
          InvalidRecordError,
        );
        await assert.rejects(memory.getConversation('c1'), NotFoundError);
      });

      it('validates records on read: a row edited behind its back is an error, not data', async () => {
        await memory.createConversation({ id: 'c1' });
        await database.exec(`update conversations set record_json = '{"id":"c1"}' where id = 'c1'`);
        await assert.rejects(memory.getConversation('c1'), InvalidRecordError);
      });
    });

    describe('resolveMessage', () => {
      it('resolves the pieces of one message, in sequence order, with the later-turn flag', async () => {
        const { prompt, reply } = await conversationWithReply();
        const ids = prompt.map((piece) => piece.id);
        assert.deepEqual(await memory.resolveMessage([ids[1] as string]), {
          conversationId: 'c1',
          turn: 0,
          pieceIds: ids,
          hasLaterTurn: true,
        });
        assert.deepEqual(await memory.resolveMessage([reply[0]?.id as string]), {
          conversationId: 'c1',
          turn: 1,
          pieceIds: [reply[0]?.id],
          hasLaterTurn: false,
        });
      });

      it('throws for a piece id that is not stored', async () => {
        await conversationWithReply();
        await assert.rejects(memory.resolveMessage(['missing']), (error: unknown) => {
          assert.ok(error instanceof NotFoundError);
          assert.match(error.message, /"missing" is not stored/);
          return true;
        });
      });

      it('throws for pieces of different turns or different conversations', async () => {
        const { prompt, reply } = await conversationWithReply();
        await assert.rejects(
          memory.resolveMessage([prompt[0]?.id as string, reply[0]?.id as string]),
          /different turns/,
        );
        await memory.createConversation({ id: 'c2' });
        const [other] = await memory.appendMessage({ conversationId: 'c2', role: 'user', texts: ['x'] });
        await assert.rejects(
          memory.resolveMessage([prompt[0]?.id as string, other?.id as string]),
          (error: unknown) =>
            error instanceof InvalidReferenceError && /different conversations/.test(error.message),
        );
      });
    });

    describe('scores and observations', () => {
      it('stores a score with its observation and reads both back whole', async () => {
        const evidence = observation('o1');
        const verdict = score('s1', { observationIds: ['o1'] });
        await memory.saveScore(verdict, [evidence]);
        assert.deepEqual(await memory.getScore('s1'), verdict);
        assert.deepEqual(await memory.getObservation('o1'), evidence);
        assert.deepEqual(await memory.observationsForScore('s1'), [evidence]);
        assert.deepEqual(await memory.listScores(), [verdict]);
      });

      it('keeps the order of observationIds and links one observation to many scores', async () => {
        await memory.saveScore(score('s1', { observationIds: ['o2', 'o1'] }), [
          observation('o1'),
          observation('o2', 'other'),
        ]);
        await memory.saveScore(score('s2', { observationIds: ['o1'], value: false }), [observation('o1')]);
        assert.deepEqual(
          (await memory.observationsForScore('s1')).map((o) => o.id),
          ['o2', 'o1'],
        );
        assert.deepEqual(
          (await memory.listScores({ observationId: 'o1' })).map((s) => s.id),
          ['s1', 's2'],
        );
        assert.deepEqual(
          (await memory.listScores({ observationId: 'o2' })).map((s) => s.id),
          ['s1'],
        );
      });

      it('stores an identical observation twice as a no-op and a different one under the same id as an error', async () => {
        await memory.saveScore(score('s1', { observationIds: ['o1'] }), [observation('o1')]);
        await memory.saveScore(score('s1', { observationIds: ['o1'] }), [observation('o1')]);
        await assert.rejects(
          memory.saveScore(score('s2', { observationIds: ['o1'] }), [observation('o1', 'tampered')]),
          ImmutableRecordError,
        );
        assert.deepEqual(await memory.getObservation('o1'), observation('o1'));
        await assert.rejects(memory.getScore('s2'), NotFoundError);
        await assert.rejects(
          memory.saveScore(score('s1', { observationIds: ['o1'], value: false }), []),
          ImmutableRecordError,
        );
      });

      it('writes a score and its observation in one transaction: a failure stores neither', async () => {
        const broken = score('s1', {
          observationIds: ['o1'],
          scorable: { scorableType: 'message', pieceIds: ['not-stored'] },
        });
        await assert.rejects(memory.saveScore(broken, [observation('o1')]), InvalidReferenceError);
        await assert.rejects(memory.getObservation('o1'), NotFoundError);
        await assert.rejects(memory.getScore('s1'), NotFoundError);
      });

      it('refuses a score resting on an observation that is not stored, or given one it does not name', async () => {
        await assert.rejects(
          memory.saveScore(score('s1', { observationIds: ['o1'] }), []),
          /rests on observation "o1", which is not stored/,
        );
        await assert.rejects(
          memory.saveScore(score('s1', { observationIds: [] }), [observation('o1')]),
          InvalidReferenceError,
        );
      });

      it('validates a score and its observations before writing', async () => {
        const invalid = { ...score('s1'), value: null };
        await assert.rejects(memory.saveScore(invalid, []), InvalidRecordError);
        await assert.rejects(memory.getScore('s1'), NotFoundError);
      });

      it('links the observations of a message score to the message, and lists scores by conversation', async () => {
        const { reply } = await conversationWithReply();
        const pieceIds = reply.map((piece) => piece.id);
        await memory.saveScore(
          score('s1', { observationIds: ['o1'], scorable: { scorableType: 'message', pieceIds } }),
          [observation('o1')],
        );
        await memory.saveScore(score('s2', { observationIds: ['o2'] }), [observation('o2')]);
        assert.deepEqual(await memory.messagePiecesForObservation('o1'), pieceIds);
        assert.deepEqual(await memory.messagePiecesForObservation('o2'), []);
        assert.deepEqual(
          (await memory.listScores({ conversationId: 'c1' })).map((s) => s.id),
          ['s1'],
        );
      });

      it('filters and limits scores, oldest first', async () => {
        await memory.saveScore(score('b', { value: null, createdAt: '2025-01-01T00:00:02.000Z' }), []);
        await memory.saveScore(score('a', { createdAt: '2025-01-01T00:00:03.000Z' }), []);
        await memory.saveScore(score('c', { value: false, createdAt: '2025-01-01T00:00:01.000Z' }), []);
        assert.deepEqual(
          (await memory.listScores()).map((s) => s.id),
          ['c', 'b', 'a'],
        );
        assert.deepEqual(
          (await memory.listScores({ status: 'undetermined' })).map((s) => s.id),
          ['b'],
        );
        assert.deepEqual(
          (await memory.listScores({ limit: 2 })).map((s) => s.id),
          ['c', 'b'],
        );
      });

      it('throws NotFoundError for unknown ids', async () => {
        await assert.rejects(memory.getScore('nope'), NotFoundError);
        await assert.rejects(memory.getObservation('nope'), NotFoundError);
        await assert.rejects(memory.observationsForScore('nope'), NotFoundError);
        await assert.rejects(memory.getMessagePiece('nope'), NotFoundError);
        await assert.rejects(memory.getAttackResult('nope'), NotFoundError);
      });
    });

    describe('immutability enforced by the database itself', () => {
      async function storeEvidence(): Promise<{ referenced: string; unreferenced: string }> {
        const { prompt, reply } = await conversationWithReply();
        const referenced = reply[0]?.id as string;
        await memory.saveScore(
          score('s1', {
            observationIds: ['o1'],
            scorable: { scorableType: 'message', pieceIds: [referenced] },
          }),
          [observation('o1')],
        );
        return { referenced, unreferenced: prompt[0]?.id as string };
      }

      const refusals = [
        `update observations set record_json = '{}' where id = 'o1'`,
        `delete from observations where id = 'o1'`,
        `update scores set value = 0 where id = 's1'`,
        `delete from scores where id = 's1'`,
        `update score_observations set observation_id = 'o2' where score_id = 's1'`,
        `delete from score_observations where score_id = 's1'`,
        `delete from observation_message_pieces where observation_id = 'o1'`,
        `delete from score_message_pieces where score_id = 's1'`,
      ];
      for (const statement of refusals) {
        it(`refuses raw SQL: ${statement}`, async () => {
          await storeEvidence();
          await assert.rejects(database.exec(statement), /witness_immutable/);
          assert.deepEqual(await memory.getObservation('o1'), observation('o1'));
          assert.equal((await memory.getScore('s1')).value, true);
        });
      }

      it('refuses to change or delete a message piece an observation or a score refers to', async () => {
        const { referenced } = await storeEvidence();
        await assert.rejects(
          database.exec(`update message_pieces set record_json = '{}' where id = '${referenced}'`),
          /witness_immutable/,
        );
        await assert.rejects(
          database.exec(`delete from message_pieces where id = '${referenced}'`),
          /witness_immutable/,
        );
        assert.equal((await memory.getMessagePiece(referenced)).text, 'Done: it is a README.');
      });

      it('lets an unreferenced message piece change (the rule protects evidence, not every row)', async () => {
        const { unreferenced } = await storeEvidence();
        await database.exec(
          `update message_pieces set created_at = '2030-01-01T00:00:00.000Z' where id = '${unreferenced}'`,
        );
        const rows = await database.query(
          `select created_at from message_pieces where id = '${unreferenced}'`,
        );
        assert.deepEqual(rows, [{ created_at: '2030-01-01T00:00:00.000Z' }]);
      });

      if (backend.name === 'postgres') {
        it('refuses TRUNCATE of evidence tables', async () => {
          await storeEvidence();
          await assert.rejects(database.exec('truncate observations cascade'), /witness_immutable/);
          assert.deepEqual(await memory.getObservation('o1'), observation('o1'));
        });
      }
    });

    describe('attack results', () => {
      it('stores, reads and filters attack results', async () => {
        await conversationWithReply();
        await memory.saveScore(score('s-true', { observationIds: ['o1'] }), [observation('o1')]);
        const success = attackResult('r1', 'c1', { outcome: 'success', scoreId: 's-true' });
        const failed = attackResult('r2', 'c1', {
          outcome: 'error',
          error: 'target timed out after 30000 ms',
          attack: 'other',
          createdAt: '2025-01-02T03:04:08.000Z',
        });
        await memory.saveAttackResult(success);
        await memory.saveAttackResult(failed);
        await memory.saveAttackResult(success);
        assert.deepEqual(await memory.getAttackResult('r1'), success);
        assert.deepEqual(await memory.listAttackResults(), [success, failed]);
        assert.deepEqual(await memory.listAttackResults({ outcome: 'error' }), [failed]);
        assert.deepEqual(await memory.listAttackResults({ campaign: 'demo', attack: 'hook-injection' }), [
          success,
        ]);
      });

      it('refuses an outcome that contradicts its score (undetermined is never a failure)', async () => {
        await conversationWithReply();
        await memory.saveScore(score('s-null', { value: null }), []);
        await assert.rejects(
          memory.saveAttackResult(attackResult('r1', 'c1', { outcome: 'failure', scoreId: 's-null' })),
          /outcome "failure" but its score "s-null" says "undetermined"/,
        );
        await memory.saveAttackResult(
          attackResult('r2', 'c1', { outcome: 'undetermined', scoreId: 's-null' }),
        );
      });

      it('refuses an attack result whose conversation or score is not stored', async () => {
        await assert.rejects(memory.saveAttackResult(attackResult('r1', 'nope')), InvalidReferenceError);
        await conversationWithReply();
        await assert.rejects(
          memory.saveAttackResult(attackResult('r1', 'c1', { outcome: 'success', scoreId: 'nope' })),
          InvalidReferenceError,
        );
        await assert.rejects(
          memory.saveAttackResult(attackResult('r1', 'c1', { outcome: 'success', scoreId: null })),
          InvalidRecordError,
        );
      });
    });

    describe('export and import', () => {
      it('exports every record and imports them into an empty database unchanged', async () => {
        const { reply } = await conversationWithReply();
        await memory.saveScore(
          score('s1', {
            observationIds: ['o1'],
            scorable: { scorableType: 'message', pieceIds: [reply[0]?.id as string] },
          }),
          [observation('o1')],
        );
        await memory.saveAttackResult(attackResult('r1', 'c1', { outcome: 'success', scoreId: 's1' }));
        const exported: ArchiveRecord[] = [];
        for await (const record of memory.exportRecords()) exported.push(record);
        assert.deepEqual(
          exported.map((record) => record.recordType),
          [
            'conversation',
            'message_piece',
            'message_piece',
            'message_piece',
            'observation',
            'score',
            'attack_result',
          ],
        );

        await withFreshMemory(backend, async ({ memory: target }) => {
          assert.deepEqual(await target.importRecords(exported), {
            conversation: 1,
            message_piece: 3,
            observation: 1,
            score: 1,
            run: 0,
            attack_result: 1,
          });
          await target.importRecords(exported);
          const again = [];
          for await (const record of target.exportRecords()) again.push(record);
          assert.equal(JSON.stringify(again), JSON.stringify(exported));
          assert.deepEqual(await target.messagePiecesForObservation('o1'), [reply[0]?.id]);
        });
      });

      it('refuses to import a stored observation with different message links', async () => {
        const { prompt, reply } = await conversationWithReply();
        await memory.saveScore(
          score('s1', {
            observationIds: ['o1'],
            scorable: { scorableType: 'message', pieceIds: [reply[0]?.id as string] },
          }),
          [observation('o1')],
        );
        await memory.importRecords([
          { recordType: 'observation', record: observation('o1'), messagePieceIds: [reply[0]?.id as string] },
        ]);
        await assert.rejects(
          memory.importRecords([
            {
              recordType: 'observation',
              record: observation('o1'),
              messagePieceIds: [prompt[0]?.id as string],
            },
          ]),
          (error: unknown) =>
            error instanceof ImmutableRecordError && /linked to message pieces/.test(error.message),
        );
        assert.deepEqual(await memory.messagePiecesForObservation('o1'), [reply[0]?.id]);
      });

      it('imports all records or none', async () => {
        await memory.createConversation({ id: 'c1' });
        const records: ArchiveRecord[] = [];
        for await (const record of memory.exportRecords()) records.push(record);
        const bad = score('s1', { observationIds: ['missing'] });
        await withFreshMemory(backend, async ({ memory: target }) => {
          await assert.rejects(
            target.importRecords([...records, { recordType: 'score', record: bad }]),
            InvalidReferenceError,
          );
          await assert.rejects(target.getConversation('c1'), NotFoundError);
        });
      });
    });
  });
}
