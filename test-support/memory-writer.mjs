// A child process for the memory durability and concurrency tests (run from the repository root after
// `npm test` has built dist/). It opens a memory, creates its own conversation "<prefix>-c", and then, one
// by one, appends a message (a read-then-write transaction) and saves a score about that message with its
// own observation (every fifth one also with the observation "shared", written by every writer). It
// prints each score id on stdout only after saveScore resolved, i.e. after the write committed.
//
//   node test-support/memory-writer.mjs <database> <id-prefix> <count>
import { openMemory } from '../dist/src/entry/memory.js';
import { observation, score } from '../dist/test/memory/support/fixtures.js';

const [target, prefix, countText] = process.argv.slice(2);
const count = Number(countText);
const memory = await openMemory(target);
try {
  const conversationId = `${prefix}-c`;
  await memory.createConversation({ id: conversationId });
  for (let i = 0; i < count; i++) {
    const pieces = await memory.appendMessage({
      conversationId,
      role: i % 2 === 0 ? 'user' : 'assistant',
      texts: [`turn ${i}`],
    });
    const own = observation(`${prefix}-o${i}`, `payload ${prefix} ${i}`);
    const evidence = i % 5 === 0 ? [own, observation('shared', 'shared payload')] : [own];
    const id = `${prefix}-s${i}`;
    const scorable = { scorableType: 'message', pieceIds: pieces.map((piece) => piece.id) };
    await memory.saveScore(score(id, { observationIds: evidence.map((o) => o.id), scorable }), evidence);
    process.stdout.write(`${id}\n`);
  }
} finally {
  await memory.close();
}
