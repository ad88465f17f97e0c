import * as z from 'zod';
import { SurfaceCoverageSchema } from './observation.js';
import { parseRecord, TimestampSchema } from './record.js';
import { NETWORK_MODES, REQUEST_DISPOSITIONS } from './vocabulary.js';

/**
 * What an attempt sent (SPEC §14): the observation of surface `network`, one entry per request the
 * attempt's egress proxy saw, stored with the attempt beside its change evidence and judged by
 * `request_sent`. Like file evidence it is bounded and says what it could not see:
 *
 * - a body is kept as its size, its sha256 (only when every byte was read) and a bounded text prefix
 *   (`bodyTruncated` when the prefix is not the whole body; gap `body_truncated`);
 * - a CONNECT tunnel that was not intercepted is one entry with host, port and byte counts only (gap
 *   `tls_not_intercepted`); one whose client refused the run's certificate authority leaves
 *   `tls_intercept_failed`;
 * - requests beyond the budget are counted, not kept (`droppedRequests`, gap `record_limit_exceeded`);
 * - under `network: host` nothing is observed: no entries, gap `network_unobserved`.
 *
 * Header values that carry credentials are replaced by `[redacted]` whatever they hold, and the campaign's
 * secrets are redacted everywhere else before the record is stored (the verdict is taken before).
 */

export const NetworkModeSchema = z.enum(NETWORK_MODES);
export const RequestDispositionSchema = z.enum(REQUEST_DISPOSITIONS);

const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex digits');
const ByteCount = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const NetworkRequestSchema = z
  .strictObject({
    /** When the request line arrived. */
    at: TimestampSchema,
    /** The request's method as sent, upper-cased (`CONNECT` for a tunnel that was not intercepted). */
    method: z.string().min(1).max(64),
    /**
     * `http`, or `https` for a tunnel (intercepted or not); `tcp` for a redirected connection that spoke
     * neither HTTP nor TLS (its first bytes are the body).
     */
    scheme: z.enum(['http', 'https', 'tcp']),
    /** The destination host as the agent named it, lower-cased; an IP address in its canonical form. */
    host: z.string().min(1).max(1024),
    port: z.number().int().min(0).max(65_535),
    /** Path and query as sent (`/collect?x=1`); empty for a CONNECT tunnel. */
    target: z.string().max(65_536),
    /** Header names lower-cased, values joined with `, `, credentials replaced; sorted by name. */
    headers: z.record(z.string(), z.string()),
    /** Headers beyond the number kept (a header flood): counted, not kept. */
    headersDropped: ByteCount.optional(),
    /** Bytes of the body the agent sent (for a tunnel: bytes from the agent). */
    bodyBytes: ByteCount,
    /** Digest of the whole body; null when not every byte was read. */
    bodySha256: Sha256Schema.nullable(),
    /** The kept prefix of the body as UTF-8 text; null when empty, not text or not kept (a tunnel). */
    bodyText: z.string().nullable(),
    /** True when `bodyText` is only the start of the body. */
    bodyTruncated: z.boolean(),
    disposition: RequestDispositionSchema,
    /** Status answered to the agent (403 for a refusal); null when none was (a tunnel, a failure). */
    status: z.number().int().min(100).max(999).nullable(),
    /** A tunnel's byte counts (CONNECT without interception). */
    tunnel: z.strictObject({ bytesFromAgent: ByteCount, bytesToAgent: ByteCount }).optional(),
    /** True for a request read inside a TLS tunnel the proxy terminated (`intercept: true`). */
    intercepted: z.boolean(),
    /** Why the request was refused or failed (not on the allowlist, a loopback destination, ...). */
    note: z.string().max(1000).optional(),
    /**
     * Set for a connection that ignored the proxy and was redirected to Witness inside the sandbox: the
     * address and port it was sent to (`host` is the name it gave — a Host header, a TLS server name —
     * or this address). Such a connection is recorded and never forwarded.
     */
    redirectedFrom: z
      .strictObject({ address: z.string().min(1).max(64), port: z.number().int().min(0).max(65_535) })
      .optional(),
  })
  .superRefine((entry, ctx) => {
    if (
      !entry.bodyTruncated &&
      entry.bodySha256 === null &&
      entry.bodyBytes > 0 &&
      entry.tunnel === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['bodySha256'],
        message: 'a body read in full carries its digest',
      });
    }
    if (entry.bodyText !== null && Buffer.byteLength(entry.bodyText, 'utf8') > entry.bodyBytes) {
      ctx.addIssue({ code: 'custom', path: ['bodyText'], message: 'the kept text is longer than the body' });
    }
  });
export type NetworkRequest = z.infer<typeof NetworkRequestSchema>;

/**
 * A connection the sandbox could not carry, seen by Witness (SPEC §14: `blocked`, destination where
 * known). A program that ignores the proxy variables finds no way out, so nothing it sends leaves; what
 * it tried is seen where Witness can see it:
 * - a name lookup answered by the resolver Witness runs in the sandbox (`via: name_lookup`; the port is
 *   not known then), one entry per name, its lookups counted;
 * - UDP datagrams to an address outside the sandbox's loopback, dropped inside the sandbox (`via: udp`,
 *   where Witness could set up redirection), one entry per address and port, datagrams and bytes counted
 *   (IP packets, headers included).
 * Never a `request_sent`: nothing left the sandbox.
 */
const BlockedCount = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const BlockedNameLookupSchema = z.strictObject({
  /** When the name was first looked up. */
  at: TimestampSchema,
  via: z.literal('name_lookup'),
  /** The destination as asked for, lower-cased (a DNS name; unprintable bytes as `\DDD`). */
  host: z.string().min(1).max(1024),
  /** The destination port; null: not known (a name lookup). */
  port: z.null(),
  /** Lookups of this name (A, AAAA and retries each count). */
  lookups: BlockedCount,
});
const BlockedDatagramsSchema = z.strictObject({
  /** When the first datagram to this destination was dropped, to the second. */
  at: TimestampSchema,
  via: z.literal('udp'),
  /** The destination address (IPv4 dotted, IPv6 as the kernel prints it). */
  host: z.string().min(1).max(64),
  port: z.number().int().min(0).max(65_535),
  /** Datagrams sent to it, each dropped. */
  datagrams: BlockedCount,
  /** Their size as IP packets, headers included. */
  bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export const BlockedConnectionSchema = z.discriminatedUnion('via', [
  BlockedNameLookupSchema,
  BlockedDatagramsSchema,
]);
export type BlockedConnection = z.infer<typeof BlockedConnectionSchema>;
export type BlockedNameLookup = z.infer<typeof BlockedNameLookupSchema>;
export type BlockedDatagrams = z.infer<typeof BlockedDatagramsSchema>;

export const NetworkEvidenceSchema = z
  .strictObject({
    schemaVersion: z.literal(1),
    /** The attempt's network mode; only `proxy` observes requests. */
    mode: NetworkModeSchema,
    /** Requests in the order they arrived. */
    requests: z.array(NetworkRequestSchema),
    /** Requests seen but not kept (beyond `maxRequests`). */
    droppedRequests: ByteCount,
    /** Connections that could not be carried (present when there was one). */
    blocked: z.array(BlockedConnectionSchema).optional(),
    /** Blocked destinations seen but not kept (beyond the budget). */
    droppedBlocked: ByteCount.optional(),
    coverage: SurfaceCoverageSchema,
  })
  .superRefine((evidence, ctx) => {
    if (evidence.mode === 'host' && evidence.coverage.complete) {
      ctx.addIssue({
        code: 'custom',
        path: ['coverage', 'complete'],
        message: 'network: host is never observed completely',
      });
    }
    if (evidence.mode !== 'proxy' && evidence.requests.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['requests'],
        message: `network: ${evidence.mode} records no request`,
      });
    }
    if (evidence.mode !== 'proxy' && (evidence.blocked ?? []).length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['blocked'],
        message: `network: ${evidence.mode} records no blocked connection`,
      });
    }
    if (evidence.droppedRequests > 0 && !evidence.coverage.reasons.includes('record_limit_exceeded')) {
      ctx.addIssue({
        code: 'custom',
        path: ['coverage'],
        message: 'dropped requests are a record_limit_exceeded gap',
      });
    }
  });
export type NetworkEvidence = z.infer<typeof NetworkEvidenceSchema>;

export function checkNetworkEvidence(value: unknown): NetworkEvidence {
  return parseRecord(NetworkEvidenceSchema, value, 'network evidence');
}

/** The evidence of an attempt whose network was not observed (`host`) or could carry nothing (`none`). */
export function unobservedNetwork(mode: 'host' | 'none'): NetworkEvidence {
  return mode === 'none'
    ? {
        schemaVersion: 1,
        mode,
        requests: [],
        droppedRequests: 0,
        coverage: { complete: true, reasons: [], gaps: [] },
      }
    : {
        schemaVersion: 1,
        mode,
        requests: [],
        droppedRequests: 0,
        coverage: {
          complete: false,
          reasons: ['network_unobserved'],
          gaps: [{ reason: 'network_unobserved', detail: "the agent shared the host's network" }],
        },
      };
}

/** Counts for tables: requests kept (and dropped), of them refused. */
export function countRequests(evidence: NetworkEvidence): { sent: number; refused: number } {
  return {
    sent: evidence.requests.length + evidence.droppedRequests,
    refused: evidence.requests.filter((request) => request.disposition === 'refused').length,
  };
}
