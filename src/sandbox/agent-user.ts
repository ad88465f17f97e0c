import { userInfo } from 'node:os';
import * as z from 'zod';

/**
 * The host user an agent runs as in its sandbox when Witness runs as root (SPEC §13): a real unprivileged
 * uid — 65534 (`nobody`) unless the campaign names another with `runAs:` — never uid 0. Without it the
 * agent ran as uid 0 with no capabilities, which is still the owner of every root-owned file: it read
 * `/etc/shadow`, wrote root's files in what it was shown writable, and connected to root-only unix
 * sockets (a read-only mount does not stop `connect`: with a real `docker.sock` that is host root). uid 0
 * mapped into a user namespace would keep that same access, so the agent becomes the user for real,
 * outside any user namespace (`bwrap-arguments.ts`: `setpriv`).
 *
 * Under `sandbox: none` (no namespaces keep concurrent attempts apart) each attempt takes a uid of its own
 * from a pool instead (`agent-uid-pool.ts`): the `runAs:` range, or a default block of unused uids.
 *
 * When Witness is not root, the agent runs as Witness's own user, as any program it starts would.
 *
 * A module of its own, without the sandbox, so the campaign schema can name `runAs:`.
 */

export interface AgentUser {
  uid: number;
  gid: number;
}

/** `nobody`/`nogroup` on Debian, Ubuntu, Fedora, Alpine: the default agent user. */
export const DEFAULT_AGENT_USER: AgentUser = Object.freeze({ uid: 65534, gid: 65534 });

const ID_MAX = 2 ** 31 - 2;
const Id = z.number().int().min(1, 'uid 0 is root: the agent must not run as root').max(ID_MAX);

/**
 * `runAs:` in a campaign: a uid (its group is the same number), `"uid:gid"`, or a range `"FIRST-LAST"` of
 * uids (each its own group) from which each attempt under `sandbox: none` takes one; never 0. Used only
 * when Witness runs as root. In the sandbox a range's first uid is the agent's (namespaces keep attempts
 * apart there).
 */
export const RunAsSchema = z.union([
  Id,
  z
    .string()
    .regex(
      /^\d+[:-]\d+$/,
      'runAs is a uid (65534), "uid:gid" ("1001:1001") or a range of uids ("2000000-2000063")',
    )
    .refine((value) => value.split(/[:-]/).every((part) => Id.safeParse(Number(part)).success), {
      message: 'runAs: uids and gids are 1 … 2147483646 (never 0: root)',
    })
    .refine((value) => !value.includes('-') || rangeOf(value).first <= rangeOf(value).last, {
      message: 'runAs: a range is FIRST-LAST with FIRST ≤ LAST',
    }),
]);
export type RunAs = z.infer<typeof RunAsSchema>;

function rangeOf(value: string): { first: number; last: number } {
  const [first, last] = value.split('-').map(Number) as [number, number];
  return { first, last };
}

/** The user a `runAs:` names (a range's first uid), or the default. */
export function agentUserOf(runAs: RunAs | undefined): AgentUser {
  if (runAs === undefined) return DEFAULT_AGENT_USER;
  if (typeof runAs === 'number') return { uid: runAs, gid: runAs };
  if (runAs.includes('-')) {
    const { first } = rangeOf(runAs);
    return { uid: first, gid: first };
  }
  const [uid, gid] = runAs.split(':').map(Number) as [number, number];
  return { uid, gid };
}

/**
 * The uids a `runAs:` gives attempts under `sandbox: none`: its range, its one uid (attempts then take it
 * in turn), or undefined for the default pool. A `uid:gid` gives its uid (each attempt's group is its uid).
 */
export function runAsUids(runAs: RunAs | undefined): { first: number; last: number } | undefined {
  if (runAs === undefined) return undefined;
  if (typeof runAs === 'string' && runAs.includes('-')) return rangeOf(runAs);
  const { uid } = agentUserOf(runAs);
  return { first: uid, last: uid };
}

/** Whether this process runs as root (uid 0); false where the user cannot be told (Windows, no entry). */
export function runningAsRoot(): boolean {
  try {
    return userInfo().uid === 0;
  } catch {
    return false;
  }
}
