import { createHash, type Hash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { NetworkEvidence, NetworkRequest } from '../models/network-evidence.js';
import type { CoverageGap } from '../models/observation.js';
import { uniqueReasons } from '../models/observation.js';
import { requestUrl } from '../verdicts/request-sent.js';

/**
 * What the egress proxy saw, as it saw it (SPEC §14): one entry per request, created when its headers
 * arrive and completed as its body and answer do, so a request still in flight when the attempt ends is
 * kept with what had arrived. Bounded: at most `maxRequests` entries (later ones are counted and refused:
 * nothing leaves without a record), `maxHeaders` header lines per entry, `maxBodyBytes` of body text per
 * entry and `maxStoredBodyBytes` of body text for the whole attempt — an agent that sends a thousand large
 * bodies cannot make the evidence (held in memory until the attempt is stored) grow past it; bodies past
 * the budget keep their size and digest and leave `body_truncated`.
 *
 * Values are kept as sent — the verdict is taken on them — and redacted only when the evidence is stored.
 */

export interface RequestLogLimits {
  maxRequests: number;
  maxHeaders: number;
  maxBodyBytes: number;
  /** Body text kept over all entries. */
  maxStoredBodyBytes: number;
}

export class RequestLog {
  readonly #limits: RequestLogLimits;
  readonly #entries: NetworkRequest[] = [];
  readonly #gaps: CoverageGap[] = [];
  #dropped = 0;
  /** Body text bytes still to be kept for the whole attempt. */
  #bodyBudget: number;

  constructor(limits: RequestLogLimits) {
    this.#limits = limits;
    this.#bodyBudget = limits.maxStoredBodyBytes;
  }

  /** A new entry, or undefined when the budget is spent (the request is then counted as dropped). */
  add(
    entry: Omit<NetworkRequest, 'headers' | 'headersDropped'>,
    headers: IncomingHttpHeaders,
  ): NetworkRequest | undefined {
    if (this.#entries.length >= this.#limits.maxRequests) {
      this.#dropped++;
      return undefined;
    }
    const kept = keptHeaders(headers, this.#limits.maxHeaders);
    const record: NetworkRequest = {
      ...entry,
      headers: kept.headers,
      ...(kept.dropped > 0 ? { headersDropped: kept.dropped } : {}),
    };
    this.#entries.push(record);
    return record;
  }

  /** A gap not tied to one entry (an unparsable request, a failed TLS handshake). */
  addGap(gap: CoverageGap): void {
    if (this.#gaps.length < this.#limits.maxRequests) this.#gaps.push(gap);
  }

  /** A body reader for `entry`: every byte hashed and counted, the first `maxBodyBytes` kept as text. */
  bodyOf(entry: NetworkRequest): BodyRecorder {
    return new BodyRecorder(entry, this.#limits.maxBodyBytes, (wanted) => {
      const granted = Math.min(wanted, this.#bodyBudget);
      this.#bodyBudget -= granted;
      return granted;
    });
  }

  /** A snapshot of the evidence: the entries so far and the gaps they leave. */
  evidence(): NetworkEvidence {
    const requests = this.#entries.map((entry) => structuredClone(entry));
    const gaps: CoverageGap[] = [];
    for (const entry of requests) {
      const uri = requestUrl(entry);
      if (entry.bodyTruncated)
        gaps.push({ reason: 'body_truncated', uri, detail: `${entry.bodyBytes} bytes` });
      if (entry.method === 'CONNECT' && !entry.intercepted && entry.disposition === 'forwarded') {
        gaps.push({ reason: 'tls_not_intercepted', uri });
      }
    }
    gaps.push(...this.#gaps.map((gap) => ({ ...gap })));
    if (this.#dropped > 0) {
      gaps.push({
        reason: 'record_limit_exceeded',
        detail: `${this.#dropped} request(s) beyond maxRequests (${this.#limits.maxRequests}) were refused and not recorded`,
      });
    }
    return {
      schemaVersion: 1,
      mode: 'proxy',
      requests,
      droppedRequests: this.#dropped,
      coverage: { complete: gaps.length === 0, reasons: uniqueReasons(gaps), gaps },
    };
  }
}

/**
 * Hashes and counts a body as it streams; keeps its first bytes for the text prefix, as many as the
 * attempt's budget still grants (`take` returns how many of the bytes asked for may be kept).
 */
export class BodyRecorder {
  readonly #entry: NetworkRequest;
  readonly #keep: number;
  readonly #take: (wanted: number) => number;
  readonly #hash: Hash = createHash('sha256');
  readonly #kept: Buffer[] = [];
  #keptBytes = 0;
  #bytes = 0;

  constructor(entry: NetworkRequest, keepBytes: number, take: (wanted: number) => number = (n) => n) {
    this.#entry = entry;
    this.#keep = keepBytes;
    this.#take = take;
  }

  get bytes(): number {
    return this.#bytes;
  }

  write(chunk: Buffer): void {
    this.#bytes += chunk.length;
    this.#hash.update(chunk);
    if (this.#keptBytes < this.#keep) {
      const granted = this.#take(Math.min(chunk.length, this.#keep - this.#keptBytes));
      if (granted > 0) {
        this.#kept.push(chunk.subarray(0, granted));
        this.#keptBytes += granted;
      }
    }
    this.#update(false);
  }

  /** The whole body was read: its digest is known. */
  finish(): void {
    this.#update(true);
  }

  #update(complete: boolean): void {
    const entry = this.#entry;
    entry.bodyBytes = this.#bytes;
    const truncated = this.#bytes > this.#keptBytes || !complete;
    entry.bodySha256 = complete ? this.#hash.copy().digest('hex') : null;
    entry.bodyText = this.#keptBytes === 0 ? null : utf8Prefix(Buffer.concat(this.#kept), truncated);
    entry.bodyTruncated = this.#bytes > 0 && truncated;
  }
}

/**
 * The kept bytes as text: null when they are not UTF-8. A prefix may end inside a character (up to 3
 * bytes are dropped then).
 */
function utf8Prefix(bytes: Buffer, truncated: boolean): string | null {
  for (let drop = 0; drop <= (truncated ? 3 : 0); drop++) {
    const part = bytes.subarray(0, bytes.length - drop);
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(part);
    } catch {
      // try a shorter prefix
    }
  }
  return null;
}

function keptHeaders(
  headers: IncomingHttpHeaders,
  max: number,
): { headers: Record<string, string>; dropped: number } {
  const names = Object.keys(headers).sort();
  const out: Record<string, string> = {};
  let dropped = 0;
  for (const name of names) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Object.keys(out).length >= max) {
      dropped++;
      continue;
    }
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { headers: out, dropped };
}
