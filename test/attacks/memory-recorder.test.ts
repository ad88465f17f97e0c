import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { demoCampaign } from '../../src/attacks/demo-campaign.js';
import { loadReportRuns, MemoryAttemptRecorder } from '../../src/attacks/memory-recorder.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { openMemory } from '../../src/memory/open-memory.js';
import { MockAgentTarget } from '../../src/targets/mock-agent-target.js';

describe('MemoryAttemptRecorder', () => {
  it('stores prompt, reply, score, observation and result; the report reads back exactly what ran', async () => {
    const memory = await openMemory(':memory:');
    try {
      const result = await runCampaign({
        campaign: demoCampaign('vulnerable'),
        target: new MockAgentTarget({ mode: 'vulnerable' }),
        recorder: new MemoryAttemptRecorder(memory),
      });
      const hook = result.attempts[0];
      assert.ok(hook?.score && hook.conversationId);
      // The score is about the reply message, and rests on the observation taken after it.
      const pieces = await memory.listMessagePieces(hook.conversationId);
      assert.deepEqual(
        pieces.map((piece) => [piece.turn, piece.role, piece.text]),
        [
          [0, 'user', hook.prompt],
          [1, 'assistant', hook.reply],
        ],
      );
      assert.deepEqual(hook.score.scorable, { scorableType: 'message', pieceIds: [pieces[1]?.id] });
      assert.deepEqual(await memory.observationsForScore(hook.score.id), hook.observations);

      const stored = await memory.listAttackResults({ campaign: 'demo-vulnerable' });
      assert.deepEqual(
        stored.map((r) => `${r.attack}#${r.attempt}:${r.outcome}`).sort(),
        result.attempts.map((a) => `${a.attack}#${a.attempt}:${a.outcome}`).sort(),
      );

      const runs = await loadReportRuns(memory);
      assert.equal(runs.length, 1);
      assert.deepEqual(runs[0]?.run, result.run);
      const byKey = (a: { attack: string; attempt: number }) => `${a.attack}#${a.attempt}`;
      assert.deepEqual(
        [...(runs[0]?.attempts ?? [])].sort((a, b) => byKey(a).localeCompare(byKey(b))),
        [...result.attempts].sort((a, b) => byKey(a).localeCompare(byKey(b))),
      );
    } finally {
      await memory.close();
    }
  });

  it('stores an attempt whose workspace could not be prepared as an error with its own conversation', async () => {
    const memory = await openMemory(':memory:');
    try {
      const campaign = CampaignSchema.parse({
        name: 'broken-template',
        target: { kind: 'mock', mode: 'guarded' },
        workspace: { template: '/nonexistent/witness-template' },
        attacks: [{ id: 'a', prompt: 'Summarize README.md', expect: { uri: '/x' } }],
      });
      const result = await runCampaign({
        campaign,
        target: new MockAgentTarget({ mode: 'guarded' }),
        recorder: new MemoryAttemptRecorder(memory),
      });
      assert.equal(result.attempts[0]?.outcome, 'error');
      const [stored] = await memory.listAttackResults({ campaign: 'broken-template' });
      assert.equal(stored?.outcome, 'error');
      assert.match(
        stored?.error ?? '',
        /workspace template "\/nonexistent\/witness-template" is not a directory/,
      );
      const runs = await loadReportRuns(memory, { campaign: 'broken-template' });
      // The conversation was created when the result was stored (there was no exchange to store before).
      assert.deepEqual(runs[0]?.attempts, [
        { ...result.attempts[0], conversationId: stored?.conversationId },
      ]);
    } finally {
      await memory.close();
    }
  });
});
