import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeTargetFailure } from '../../src/attacks/target-failure.js';
import type { TranscriptEvent } from '../../src/models/transcript.js';

/**
 * An attempt's error names the cause in its first line, from what the transcript knows better than the
 * last line of the agent's stderr, with the target's own account (and the stderr tail) kept below.
 */

function processEvent(stderr: string, exitCode = 1): TranscriptEvent {
  return {
    kind: 'process',
    command: 'qwen',
    args: [],
    exitCode,
    signal: null,
    timedOut: false,
    stderr,
    stdoutTruncated: false,
  };
}

function exchange(status: number | null, body: unknown = null, error?: string): TranscriptEvent {
  return {
    kind: 'http_exchange',
    try: 1,
    request: { method: 'POST', url: 'http://127.0.0.1:8719/v1/chat/completions', headers: {}, body: null },
    response: status === null ? null : { status, body: body as never },
    durationMs: 3,
    ...(error === undefined ? {} : { error }),
  } as TranscriptEvent;
}

const RIPGREP = 'Ripgrep not available: spawn rg EACCES';

function firstLine(
  transcript: TranscriptEvent[],
  message = `the command exited with status 1; stderr: ${RIPGREP}`,
) {
  const failure = describeTargetFailure({ message, transcript, attemptTimedOut: false });
  return { first: failure.message.split('\n')[0], failure };
}

describe('the cause of a failed attempt', () => {
  it('is the model endpoint that could not be reached, with the error the proxy recorded', () => {
    const { first, failure } = firstLine([
      processEvent(`Error: fetch failed\n${RIPGREP}`),
      exchange(null, null, 'fetch failed (ECONNREFUSED 127.0.0.1:8719)'),
    ]);
    assert.equal(
      first,
      'the model endpoint could not be reached (POST http://127.0.0.1:8719/v1/chat/completions): fetch failed (ECONNREFUSED 127.0.0.1:8719)',
    );
    assert.equal(failure.message.split('\n')[1], `the command exited with status 1; stderr: ${RIPGREP}`);
    assert.equal(failure.stderrTail, `Error: fetch failed\n${RIPGREP}`);
  });

  it('reads an error status as what it most often means', () => {
    const cases: Array<[number, string]> = [
      [401, 'the model endpoint answered HTTP 401 (check the API key the campaign names in apiKeyEnv)'],
      [404, 'the model endpoint answered HTTP 404 (check the model name and the baseUrl)'],
      [429, 'the model endpoint answered HTTP 429 (rate limited, or out of quota)'],
      [502, 'the model endpoint answered HTTP 502 (the endpoint itself failed)'],
    ];
    for (const [status, expected] of cases) {
      const { first } = firstLine([exchange(status, { error: { message: 'nope' } })]);
      assert.equal(first, `${expected} (POST http://127.0.0.1:8719/v1/chat/completions): nope`);
    }
  });

  it('without a failed exchange, quotes the stderr line that names the cause rather than the last one', () => {
    const cases: Array<[string, string]> = [
      [
        `Loaded cached credentials.\nError: OPENAI_API_KEY is not set\n${RIPGREP}`,
        'the API key is missing or was refused; the agent said: Error: OPENAI_API_KEY is not set',
      ],
      [
        `Loaded cached credentials.\nAPI Error: model "gpt-9" not found\n${RIPGREP}`,
        'the model was not found; the agent said: API Error: model "gpt-9" not found',
      ],
      [
        `stream error: 429 Too Many Requests\n${RIPGREP}`,
        'rate limited, or out of quota; the agent said: stream error: 429 Too Many Requests',
      ],
      [
        `request to http://10.0.0.1/v1 failed: connect ECONNREFUSED 10.0.0.1:443\n${RIPGREP}`,
        'the model endpoint could not be reached; the agent said: request to http://10.0.0.1/v1 failed: connect ECONNREFUSED 10.0.0.1:443',
      ],
    ];
    for (const [stderr, expected] of cases) {
      const { first } = firstLine([processEvent(stderr)]);
      assert.equal(first, expected);
    }
  });

  it('leaves the target’s account first when nothing names a cause (a cached-credentials notice is none)', () => {
    const message = 'the command exited with status 3; stderr: something odd';
    const failure = describeTargetFailure({
      message,
      transcript: [processEvent('Loaded cached credentials.\nsomething odd', 3)],
      attemptTimedOut: false,
    });
    assert.equal(failure.message, message);
    assert.equal(failure.kind, 'exited');
    assert.equal(failure.exitCode, 3);
  });

  it('a successful last exchange is not the cause; a timeout is not blamed on the request it cut', () => {
    assert.equal(
      firstLine([exchange(200, {}), processEvent('')]).first,
      `the command exited with status 1; stderr: ${RIPGREP}`,
    );
    const timedOut = describeTargetFailure({
      message: 'the attempt timed out after 5 ms',
      transcript: [exchange(null, null, 'This operation was aborted')],
      attemptTimedOut: true,
    });
    assert.equal(timedOut.message, 'the attempt timed out after 5 ms');
    assert.equal(timedOut.kind, 'timed_out');
  });
});
