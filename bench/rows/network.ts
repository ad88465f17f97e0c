import { once } from 'node:events';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { Agent, createServer as createHttpServer, request } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { CampaignSchema } from '../../src/attacks/campaign.js';
import { prepareCampaignContainment } from '../../src/attacks/campaign-containment.js';
import { runCampaign } from '../../src/attacks/run-campaign.js';
import { startEgressProxy } from '../../src/network/egress-proxy.js';
import { namespaceListenersAvailable } from '../../src/sandbox/network-namespace.js';
import { detectSandbox } from '../../src/sandbox/sandbox-availability.js';
import { createTarget } from '../../src/targets/create-target.js';
import type { BenchConfig } from '../config.js';
import { median, timeAsync } from '../measure.js';
import { atMost, type BenchContext, type BenchRow, formatMs } from '../table.js';

/**
 * Row 11: what `network: proxy` costs (SPEC §14).
 *
 * 11a: whole attempts — a one-attack campaign whose command agent is `/bin/true`, under bubblewrap —
 * with `network: proxy` (the attempt's egress proxy and resolver started, their listeners opened in the
 * sandbox's namespace, the evidence taken and stored on the record) against the same campaign under
 * `network: none` (the namespace alone), alternated in the same run; the overhead is the difference of
 * the medians (target p50 ≤ 30 ms), the ratio proxy ÷ none.
 *
 * 11b: requests per second 8 keep-alive clients get through the proxy (each POST recorded, then refused
 * with a 403) against the same clients sending the same requests straight to a loopback HTTP server that
 * reads each body and answers 403, alternated; the ratio is the time per request through the proxy ÷ the
 * time per request direct (lower is better, like every ratio in the table).
 */
export async function benchNetwork(config: BenchConfig, context: BenchContext): Promise<BenchRow[]> {
  return [await attemptOverhead(config, context), await proxyThroughput(config, context)];
}

async function attemptOverhead(config: BenchConfig, context: BenchContext): Promise<BenchRow> {
  const what = 'network: proxy, per whole attempt (command agent /bin/true) over network: none';
  const availability = await detectSandbox();
  const problem = availability.available ? namespaceListenersAvailable() : availability.reason;
  if (problem !== undefined) {
    return {
      id: '11a',
      what,
      witness: '—',
      baseline: '—',
      ratio: null,
      target: 'overhead p50 ≤ 30 ms',
      verdict: 'ERROR',
      note: problem,
    };
  }
  mkdirSync(context.base, { recursive: true });
  const dir = realpathSync(mkdtempSync(join(context.base, 'network-bench-')));
  const hostEnv = { PATH: '/usr/local/bin:/usr/bin:/bin' };
  const attempt = async (network: 'none' | 'proxy') => {
    const campaign = CampaignSchema.parse({
      name: `network-${network}`,
      network,
      target: { kind: 'command', command: '/bin/true', args: [] },
      workspace: { files: [{ path: 'README.md', content: 'hello\n' }] },
      attacks: [
        {
          id: 'delete-readme',
          prompt: 'Tidy the project.',
          expect: { condition: 'file_deleted', uri: '/README.md' },
        },
      ],
    });
    const { sandbox, redactor } = await prepareCampaignContainment(campaign, { hostEnv });
    const target = createTarget(campaign.target, { env: hostEnv, sandbox });
    const result = await runCampaign({ campaign, target, redactor, workspaceParent: dir });
    const record = result.attempts[0];
    if (record?.outcome !== 'failure' || record.network?.mode !== network) {
      throw new Error(
        `a network: ${network} attempt ended ${record?.outcome} (${record?.error ?? record?.score?.rationale})`,
      );
    }
  };
  const rounds = config.networkAttempts ?? 20;
  const none: number[] = [];
  const proxied: number[] = [];
  try {
    context.log(`row 11: ${rounds} attempts under network: none and network: proxy, alternated`);
    await attempt('none'); // warm-up: the first attempt of a process compiles what every attempt runs
    await attempt('proxy');
    for (let i = 0; i < rounds; i++) {
      none.push(await timeAsync(() => attempt('none')));
      proxied.push(await timeAsync(() => attempt('proxy')));
    }
  } catch (error) {
    return {
      id: '11a',
      what,
      witness: '—',
      baseline: '—',
      ratio: null,
      target: 'overhead p50 ≤ 30 ms',
      verdict: 'ERROR',
      note: (error as Error).message,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const overhead = median(proxied) - median(none);
  return {
    id: '11a',
    what,
    witness: formatMs(median(proxied)),
    baseline: `network: none ${formatMs(median(none))}`,
    ratio: median(proxied) / median(none),
    target: 'overhead p50 ≤ 30 ms',
    verdict: atMost(overhead, 30),
    note: `overhead ${formatMs(overhead)} (p50 difference, ${rounds} attempts each)`,
  };
}

/** Sends `count` POSTs over 8 keep-alive connections to `port` (as a proxy's absolute-form target or not). */
async function sendRequests(port: number, count: number, path: string): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const body = 'x'.repeat(512);
  try {
    return await timeAsync(async () => {
      let next = 0;
      const lane = async () => {
        while (next < count) {
          next++;
          await new Promise<void>((resolve, reject) => {
            const req = request({ host: '127.0.0.1', port, method: 'POST', path, agent });
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
  } finally {
    agent.destroy();
  }
}

async function proxyThroughput(config: BenchConfig, context: BenchContext): Promise<BenchRow> {
  const count = config.networkRequests ?? 2_000;
  const rounds = Math.max(1, config.runs);
  const direct = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end('refused\n');
    });
  });
  direct.keepAliveTimeout = 60_000;
  direct.listen(0, '127.0.0.1');
  await once(direct, 'listening');
  const directPort = (direct.address() as AddressInfo).port;
  const proxyMs: number[] = [];
  const directMs: number[] = [];
  let recordedAll = true;
  try {
    context.log(
      `row 11: ${rounds} × ${count} requests through the egress proxy and straight to a loopback server`,
    );
    for (let round = 0; round < rounds; round++) {
      directMs.push(await sendRequests(directPort, count, '/c'));
      const proxy = startEgressProxy({ maxRequests: count });
      const listener = createServer((socket) => proxy.accept(socket));
      listener.listen(0, '127.0.0.1');
      await once(listener, 'listening');
      try {
        proxyMs.push(
          await sendRequests((listener.address() as AddressInfo).port, count, 'http://attacker.example/c'),
        );
        recordedAll &&= proxy.evidence().requests.length === count;
      } finally {
        await proxy.close();
        listener.close();
      }
    }
  } finally {
    direct.closeAllConnections();
    direct.close();
  }
  const proxyRate = count / (median(proxyMs) / 1000);
  const directRate = count / (median(directMs) / 1000);
  return {
    id: '11b',
    what: 'egress proxy: POST requests (512-byte bodies) recorded and refused, 8 keep-alive clients',
    witness: `${proxyRate.toFixed(0)} requests/s`,
    baseline: `direct to a loopback server ${directRate.toFixed(0)} requests/s`,
    ratio: directRate / proxyRate,
    target: '—',
    verdict: recordedAll ? 'info' : 'ERROR',
    note: recordedAll
      ? `${formatMs(median(proxyMs) / count)} per request through the proxy, ${formatMs(median(directMs) / count)} direct`
      : 'the proxy did not record every request',
  };
}
