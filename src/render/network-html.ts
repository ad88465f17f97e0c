import type { BlockedConnection, NetworkEvidence, NetworkRequest } from '../models/network-evidence.js';
import { countRequests } from '../models/network-evidence.js';
import { requestUrl } from '../verdicts/request-sent.js';
import { type EvidenceLimits, gapItem } from './evidence-html.js';
import { html, type SafeHtml, text } from './html.js';

/**
 * What an attempt sent (SPEC §14), as the report's card and the viewer's attempt page both show it: under
 * `network: proxy` each request the egress proxy saw — method, destination, path, body size, what the proxy
 * did with it (forwarded, refused, failed) and an excerpt of the body's text — then the requests counted but
 * not kept, the destinations a program that ignored the proxy tried and could not reach (blocked: nothing
 * left the sandbox), and the gaps; under `network: host` that nothing was observed, under `none` that nothing could be
 * sent. Every field but the counts is the agent's choice, so each is cut to a bound and made inert.
 */
export function networkHtml(evidence: NetworkEvidence | undefined, limits: EvidenceLimits): SafeHtml | '' {
  if (evidence === undefined) return '';
  const gaps = evidence.coverage.gaps.map((gap) => gapItem(gap.reason, gap.uri, gap.detail, limits));
  const gapList =
    gaps.length === 0 ? '' : html`<p>Gaps (why the record is incomplete):</p><ul class="gaps">${gaps}</ul>`;
  if (evidence.mode === 'none') {
    return html`<section class="network"><h2>Network</h2><p>None (<code>network: none</code>): the agent had no network to send anything through.</p>${gapList}</section>`;
  }
  if (evidence.mode === 'host') {
    return html`<section class="network"><h2>Network</h2><p class="note">Not observed (<code>network: host</code>): the agent shared the host's network, so what it sent is unknown.</p>${gapList}</section>`;
  }
  const { sent, refused } = countRequests(evidence);
  const shown = evidence.requests.slice(0, limits.changes);
  const notListed = evidence.requests.length - shown.length;
  const rows = shown.map((request, index) => requestRow(request, index + 1, limits));
  return html`<section class="network"><h2>Network <small>(${requestCountWords(sent, refused)})</small></h2>${
    rows.length === 0
      ? html`<p>The agent sent no request through the attempt's egress proxy.</p>`
      : html`<table class="requests"><thead><tr><th class="num">#</th><th>request</th><th class="num">body bytes</th><th>proxy</th><th>body (excerpt)</th></tr></thead><tbody>${rows}</tbody></table>`
  }${notListed > 0 ? html`<p class="note">${notListed} more kept requests are not listed here.</p>` : ''}${
    evidence.droppedRequests > 0
      ? html`<p class="note">${evidence.droppedRequests} more requests were seen but not kept (beyond the record's bound).</p>`
      : ''
  }${blockedHtml(evidence, limits)}${gapList}</section>`;
}

/**
 * The destinations a program that ignores the proxy variables tried (`blocked`): it found no route out,
 * so nothing it meant to send left the sandbox, but the attempt to reach them is evidence too (a raw
 * `fetch` to the attacker's host shows here, never as a request sent). Host names are the agent's choice:
 * bounded and inert like every other field.
 */
function blockedHtml(evidence: NetworkEvidence, limits: EvidenceLimits): SafeHtml | '' {
  const blocked = evidence.blocked ?? [];
  const dropped = evidence.droppedBlocked ?? 0;
  if (blocked.length === 0 && dropped === 0) return '';
  const shown = blocked.slice(0, limits.changes);
  const items = shown.map((entry) => blockedItem(entry, limits));
  const more = blocked.length - shown.length + dropped;
  return html`<div class="blocked"><p>Blocked (ignored the proxy, found no route out; nothing was sent): ${blocked.length + dropped} destination${
    blocked.length + dropped === 1 ? '' : 's'
  }</p><ul class="blocked">${items}</ul>${
    more > 0 ? html`<p class="note">${more} more blocked destinations are not listed here.</p>` : ''
  }</div>`;
}

function blockedItem(entry: BlockedConnection, limits: EvidenceLimits): SafeHtml {
  if (entry.via === 'udp') {
    const address = entry.host.includes(':') ? `[${entry.host}]` : entry.host;
    return html`<li><code>${text(`${address}:${entry.port}`, { maxChars: limits.lineChars })}</code> <span class="muted">(UDP, ${entry.datagrams} datagram${
      entry.datagrams === 1 ? '' : 's'
    }, ${entry.bytes} bytes, dropped)</span></li>`;
  }
  return html`<li><code>${text(entry.host, { maxChars: limits.lineChars })}</code> <span class="muted">(name looked up${
    entry.lookups === 1 ? '' : html` ×${entry.lookups}`
  })</span></li>`;
}

/** `3 requests, 1 refused`: the counts of {@link countRequests} in words. */
export function requestCountWords(sent: number, refused: number): string {
  return `${sent} request${sent === 1 ? '' : 's'}${refused === 0 ? '' : `, ${refused} refused`}`;
}

function requestRow(request: NetworkRequest, index: number, limits: EvidenceLimits): SafeHtml {
  const line = (value: string) => text(value, { maxChars: limits.lineChars });
  const bytes =
    request.tunnel === undefined
      ? html`${request.bodyBytes}`
      : html`${request.tunnel.bytesFromAgent} <span class="muted">(through the tunnel)</span>`;
  const proxy = html`<span class="disposition ${request.disposition}">${request.disposition}</span>${
    request.status === null ? '' : html` ${request.status}`
  }${request.intercepted ? html` <span class="muted">(TLS intercepted)</span>` : ''}${
    request.note === undefined ? '' : html`<br><span class="muted">${line(request.note)}</span>`
  }`;
  const body =
    request.bodyText === null || request.bodyText === ''
      ? html`<span class="muted">${request.bodyBytes === 0 ? 'empty' : 'not kept as text'}</span>`
      : html`<pre>${text(request.bodyText, { maxChars: limits.contentChars, multiline: true })}</pre>${
          request.bodyTruncated ? html`<p class="note">only the start of the body was kept</p>` : ''
        }`;
  return html`<tr class="${request.disposition}"><td class="num">${index}</td><td><code class="method">${text(request.method, { maxChars: 16 })}</code> <code>${line(requestUrl(request))}</code></td><td class="num">${bytes}</td><td>${proxy}</td><td>${body}</td></tr>`;
}
