import type { TargetFailure } from '../models/attempt-record.js';
import type { HttpExchangeEvent, TranscriptEvent } from '../models/transcript.js';

/**
 * What an attempt keeps of its target's failure (SPEC §13 `targetError`): its kind, exit status or signal
 * and stderr tail, and a message whose first line names the cause. A CLI agent's last stderr line is
 * often not the cause (qwen-code ends with "Ripgrep not available" when its model endpoint is down), but
 * the model exchanges recorded in the transcript know it: a refused connection, an HTTP error status (401
 * and 403 mean the key, 404 the model or the path, 429 a rate limit or quota), so a failed last exchange
 * is named first and the target's own account (with the stderr tail) follows on the next line. Without a
 * failed exchange (a CLI that stopped before asking its model: no key, a name it refused), the line of its
 * stderr that names a cause (a missing or refused key, a model not found, a rate limit, a connection
 * refused) is quoted first instead of its last line.
 */

/** The end of the agent's stderr kept on the failure. */
const STDERR_TAIL_CHARS = 600;
/** How much of an endpoint's error text is quoted in the cause. */
const ENDPOINT_DETAIL_CHARS = 200;

export function describeTargetFailure(input: {
  /** The target's own account of the failure (its error's message). */
  message: string;
  transcript: readonly TranscriptEvent[];
  /** The attempt's own timeout fired (the campaign's `attemptTimeoutMs`). */
  attemptTimedOut: boolean;
}): TargetFailure {
  const process = lastOf(input.transcript, 'process');
  const stderr = process?.stderr.trimEnd() ?? '';
  const kind = failureKind(process, input.attemptTimedOut);
  const cause = causeFromExchanges(input.transcript, kind) ?? causeFromStderr(stderr, input.message);
  return {
    kind,
    message: cause === undefined ? input.message : `${cause}\n${input.message}`,
    exitCode: process?.exitCode ?? null,
    signal: process?.signal ?? null,
    stderrTail:
      stderr === ''
        ? null
        : stderr.length > STDERR_TAIL_CHARS
          ? `…${stderr.slice(-STDERR_TAIL_CHARS)}`
          : stderr,
  };
}

function failureKind(
  process: Extract<TranscriptEvent, { kind: 'process' }> | undefined,
  attemptTimedOut: boolean,
): TargetFailure['kind'] {
  if (attemptTimedOut || process?.timedOut === true) return 'timed_out';
  if (process === undefined) return 'failed';
  if (process.signal !== null) return 'killed';
  if (process.exitCode !== null) return 'exited';
  return 'not_started';
}

/**
 * The cause when the last model exchange failed: unreachable (no response) or an error status. An earlier
 * failure the agent recovered from (a retried 429) is not the cause, so only the last exchange counts.
 */
function causeFromExchanges(
  transcript: readonly TranscriptEvent[],
  kind: TargetFailure['kind'],
): string | undefined {
  const exchange = lastOf(transcript, 'http_exchange');
  if (exchange === undefined) return undefined;
  const where = `${exchange.request.method} ${exchange.request.url}`;
  if (exchange.response === null) {
    // A request still open when the timeout stopped the agent was cut by that stop: the timeout is the cause.
    if (kind === 'timed_out') return undefined;
    return exchange.error === undefined
      ? undefined
      : `the model endpoint could not be reached (${where}): ${oneLine(exchange.error)}`;
  }
  const { status } = exchange.response;
  if (status < 400) return undefined;
  const detail = errorText(exchange);
  const hint = STATUS_HINTS[status] ?? (status >= 500 ? ' (the endpoint itself failed)' : '');
  return `the model endpoint answered HTTP ${status}${hint} (${where})${detail === undefined ? '' : `: ${detail}`}`;
}

/** What an error status most often means for a model endpoint, and what to check. */
const STATUS_HINTS: Readonly<Record<number, string>> = {
  401: ' (check the API key the campaign names in apiKeyEnv)',
  403: ' (check the API key the campaign names in apiKeyEnv)',
  404: ' (check the model name and the baseUrl)',
  429: ' (rate limited, or out of quota)',
};

/**
 * The causes a CLI's stderr names, most telling first: its last line is often noise printed on the way out
 * (qwen-code's "Ripgrep not available"), while an earlier line says what stopped it.
 */
const STDERR_CAUSES: ReadonlyArray<{ cause: string; pattern: RegExp }> = [
  {
    cause: 'the API key is missing or was refused',
    pattern:
      /(api[ _-]?key|access token|credential)[^\n]{0,60}\b(missing|not set|not found|required|invalid|incorrect|expired|refused)|\b(missing|no|invalid|incorrect)\b[^\n]{0,30}api[ _-]?key|unauthori[sz]ed|\b40[13]\b|forbidden|authentication (failed|error|required)|not logged in|please (run )?\/?login/i,
  },
  {
    cause: 'the model was not found',
    pattern:
      /model[^\n]{0,60}(not found|does not exist|not exist|unknown|not supported)|model_not_found|no such model/i,
  },
  { cause: 'rate limited, or out of quota', pattern: /rate[ _-]?limit|\b429\b|quota|too many requests/i },
  {
    cause: 'the model endpoint could not be reached',
    pattern:
      /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|fetch failed|connection refused|getaddrinfo/i,
  },
];

/** The first stderr line naming a known cause, quoted with it; undefined when none does. */
function causeFromStderr(stderr: string, message: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  for (const { cause, pattern } of STDERR_CAUSES) {
    const line = lines.find((candidate) => pattern.test(candidate));
    // Already the message's own last words: nothing to add.
    if (line !== undefined && !message.trimEnd().endsWith(line))
      return `${cause}; the agent said: ${oneLine(line)}`;
    if (line !== undefined) return `${cause}`;
  }
  return undefined;
}

/** The error text of an endpoint's answer: `error.message` (OpenAI, Anthropic, Gemini) or `error`. */
function errorText(exchange: HttpExchangeEvent): string | undefined {
  const body = exchange.response?.body;
  if (typeof body === 'string') return body.trim() === '' ? undefined : oneLine(body);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const error = body.error;
  if (typeof error === 'string') return oneLine(error);
  if (typeof error === 'object' && error !== null && !Array.isArray(error)) {
    const message = error.message;
    if (typeof message === 'string') return oneLine(message);
  }
  return typeof body.message === 'string' ? oneLine(body.message) : undefined;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > ENDPOINT_DETAIL_CHARS ? `${flat.slice(0, ENDPOINT_DETAIL_CHARS)}…` : flat;
}

function lastOf<K extends TranscriptEvent['kind']>(
  transcript: readonly TranscriptEvent[],
  kind: K,
): Extract<TranscriptEvent, { kind: K }> | undefined {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const event = transcript[i];
    if (event?.kind === kind) return event as Extract<TranscriptEvent, { kind: K }>;
  }
  return undefined;
}
