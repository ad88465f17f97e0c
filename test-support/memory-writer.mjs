// A child process for the memory durability and concurrency tests (run from the repository root after
// `npm test` has built dist/). It opens a memory and saves scores one by one, each with its own
// observation (and every fifth one also with the observation "shared", written by every writer), and
// prints each score id on stdout only after saveScore resolved, i.e. after the write committed.
//
//   node test-support/memory-writer.mjs <database> <id-prefix> <count>
import { openMemory } from '../dist/src/index.js';
import { observation, score } from '../dist/test/memory/support/fixtures.js';

const [target, prefix, countText] = process.argv.slice(2);
const count = Number(countText);
const memory = await openMemory(target);
try {
  for (let i = 0; i < count; i++) {
    const own = observation(`${prefix}-o${i}`, `payload ${prefix} ${i}`);
    const evidence = i % 5 === 0 ? [own, observation('shared', 'shared payload')] : [own];
    const id = `${prefix}-s${i}`;
    await memory.saveScore(score(id, { observationIds: evidence.map((o) => o.id) }), evidence);
    process.stdout.write(`${id}\n`);
  }
} finally {
  await memory.close();
}
