import type { NetworkEvidence } from '../models/network-evidence.js';
import type { SecretRedactor } from '../text/secret-redactor.js';

/**
 * Network evidence as it is stored (SPEC §11, §14): header values that carry credentials (an API key the
 * agent sent to its model, a cookie) are replaced by `[redacted]` whatever they hold, and the campaign's
 * secrets are redacted in every other string. A body's kept text keeps its byte length (the marker is
 * padded or cut), so it still fits the body's recorded size. The verdict was taken before, on the
 * evidence as sent; a replay sees the masks.
 */

const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
]);
export const REDACTED_HEADER = '[redacted]';

export function redactNetworkEvidence(evidence: NetworkEvidence, redactor?: SecretRedactor): NetworkEvidence {
  const text = (value: string) => (redactor?.active === true ? redactor.redactText(value) : value);
  return {
    ...evidence,
    requests: evidence.requests.map((request) => ({
      ...request,
      host: text(request.host),
      target: text(request.target),
      headers: Object.fromEntries(
        Object.entries(request.headers).map(([name, value]) => [
          name,
          CREDENTIAL_HEADERS.has(name) ? REDACTED_HEADER : text(value),
        ]),
      ),
      bodyText:
        request.bodyText === null || redactor?.active !== true
          ? request.bodyText
          : redactor.redactText(request.bodyText, { preserveLength: true }),
      ...(request.note === undefined ? {} : { note: text(request.note) }),
    })),
    ...(evidence.blocked === undefined
      ? {}
      : { blocked: evidence.blocked.map((entry) => ({ ...entry, host: text(entry.host) })) }),
    coverage: {
      ...evidence.coverage,
      gaps: evidence.coverage.gaps.map((gap) => ({
        ...gap,
        ...(gap.uri === undefined ? {} : { uri: text(gap.uri) }),
        ...(gap.detail === undefined ? {} : { detail: text(gap.detail) }),
      })),
    },
  };
}
