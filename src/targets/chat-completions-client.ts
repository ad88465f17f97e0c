import { InvalidOptionError, TargetError } from '../errors.js';
import type { JsonValue } from '../models/record.js';
import { checkTimeoutMs } from '../models/timeout.js';
import { describeNetworkError } from '../net/network-error.js';
import {
  nonNegativeInteger as nonNegative,
  positiveInteger as positive,
  TARGET_DEFAULTS,
} from './target-defaults.js';
import type { HttpExchangeEvent, TranscriptEvent } from './transcript.js';

/**
 * One POST to an OpenAI-compatible `/chat/completions`, with a per-request timeout, retries with
 * exponential backoff on 429, 5xx and network failures (honouring `Retry-After`, capped), and every try
 * recorded as an `http_exchange` with the API key redacted from headers and bodies. The key lives only in
 * this object's private field and the outgoing header; it is never logged, stored or put in an identifier.
 */

export interface ChatClientOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  requestTimeoutMs?: number | undefined;
  maxRetries?: number | undefined;
  retryBaseDelayMs?: number | undefined;
  maxRetryDelayMs?: number | undefined;
  /** Bytes of a response body kept in the transcript. */
  maxRecordedBodyBytes?: number | undefined;
}

export const REDACTED = '[redacted]';

export class ChatCompletionsClient {
  readonly url: string;
  readonly #apiKey: string | undefined;
  readonly limits: {
    requestTimeoutMs: number;
    maxRetries: number;
    retryBaseDelayMs: number;
    maxRetryDelayMs: number;
    maxRecordedBodyBytes: number;
  };

  constructor(options: ChatClientOptions) {
    let url: URL;
    try {
      url = new URL(options.baseUrl);
    } catch {
      throw new InvalidOptionError(
        `baseUrl must be an absolute http(s) URL, got ${JSON.stringify(options.baseUrl)}`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new InvalidOptionError(`baseUrl must use http or https, got ${url.protocol}`);
    }
    if (url.username !== '' || url.password !== '') {
      throw new InvalidOptionError(
        'baseUrl must not carry credentials; name an environment variable instead',
      );
    }
    this.url = `${url.href.replace(/\/+$/, '')}/chat/completions`;
    this.#apiKey = options.apiKey === '' ? undefined : options.apiKey;
    this.limits = {
      requestTimeoutMs: checkTimeoutMs(
        'requestTimeoutMs',
        options.requestTimeoutMs ?? TARGET_DEFAULTS.requestTimeoutMs,
      ),
      maxRetries: nonNegative('maxRetries', options.maxRetries ?? TARGET_DEFAULTS.maxRetries),
      retryBaseDelayMs: nonNegative(
        'retryBaseDelayMs',
        options.retryBaseDelayMs ?? TARGET_DEFAULTS.retryBaseDelayMs,
      ),
      maxRetryDelayMs: nonNegative(
        'maxRetryDelayMs',
        options.maxRetryDelayMs ?? TARGET_DEFAULTS.maxRetryDelayMs,
      ),
      maxRecordedBodyBytes: positive(
        'maxRecordedBodyBytes',
        options.maxRecordedBodyBytes ?? TARGET_DEFAULTS.maxRecordedBodyBytes,
      ),
    };
  }

  /**
   * Posts `body` and returns the parsed JSON response. Appends one `http_exchange` per try to
   * `transcript`. Throws {@link TargetError} when the tries are spent or the response is unusable, and the
   * signal's reason when aborted.
   */
  async post(body: JsonValue, transcript: TranscriptEvent[], signal?: AbortSignal): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.#apiKey !== undefined) headers.authorization = `Bearer ${this.#apiKey}`;
    const recordedHeaders = { ...headers };
    if (recordedHeaders.authorization !== undefined) recordedHeaders.authorization = `Bearer ${REDACTED}`;
    const payload = JSON.stringify(body);

    for (let attempt = 1; ; attempt++) {
      signal?.throwIfAborted();
      const started = performance.now();
      const timeout = AbortSignal.timeout(this.limits.requestTimeoutMs);
      const combined = signal === undefined ? timeout : AbortSignal.any([signal, timeout]);
      const exchange: HttpExchangeEvent = {
        kind: 'http_exchange',
        try: attempt,
        request: { method: 'POST', url: this.url, headers: recordedHeaders, body: this.redact(body) },
        response: null,
        durationMs: 0,
      };
      transcript.push(exchange);
      let retryAfterMs: number | undefined;
      let failure: string;
      try {
        const response = await fetch(this.url, { method: 'POST', headers, body: payload, signal: combined });
        const text = await response.text();
        exchange.response = { status: response.status, body: this.#recordBody(text) };
        exchange.durationMs = Math.round(performance.now() - started);
        if (response.ok) {
          try {
            return JSON.parse(text) as unknown;
          } catch {
            throw new TargetError(
              `the endpoint answered ${response.status} with a body that is not JSON`,
              transcript,
            );
          }
        }
        failure = `the endpoint answered HTTP ${response.status}`;
        if (response.status !== 429 && response.status < 500) throw new TargetError(failure, transcript);
        retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      } catch (error) {
        exchange.durationMs = Math.round(performance.now() - started);
        if (signal?.aborted) throw signal.reason;
        if (error instanceof TargetError) throw error;
        failure = timeout.aborted
          ? `the request timed out after ${this.limits.requestTimeoutMs} ms`
          : `the request failed: ${this.redactText(describeNetworkError(error))}`;
        exchange.error = failure;
      }
      if (attempt > this.limits.maxRetries) {
        throw new TargetError(`${failure} (gave up after ${attempt} tries)`, transcript);
      }
      const backoff = this.limits.retryBaseDelayMs * 2 ** (attempt - 1);
      await sleep(Math.min(retryAfterMs ?? backoff, this.limits.maxRetryDelayMs), signal);
    }
  }

  /** A copy of `value` with every occurrence of the API key replaced. */
  redact(value: JsonValue): JsonValue {
    if (this.#apiKey === undefined) return value;
    if (typeof value === 'string') return this.redactText(value);
    if (Array.isArray(value)) return value.map((item) => this.redact(item));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, JsonValue> = {};
      for (const [key, child] of Object.entries(value)) out[this.redactText(key)] = this.redact(child);
      return out;
    }
    return value;
  }

  redactText(text: string): string {
    return this.#apiKey === undefined ? text : text.split(this.#apiKey).join(REDACTED);
  }

  #recordBody(text: string): JsonValue {
    const cap = this.limits.maxRecordedBodyBytes;
    if (text.length <= cap) {
      try {
        return this.redact(JSON.parse(text) as JsonValue);
      } catch {
        return this.redactText(text);
      }
    }
    return `${this.redactText(text.slice(0, cap))}… (${text.length - cap} more characters not recorded)`;
  }
}

function parseRetryAfter(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
