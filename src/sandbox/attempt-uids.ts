import { fstatSync } from 'node:fs';
import { leaseUid, type UidLease, type UidPool } from './agent-uid-pool.js';
import type { AgentUser } from './agent-user.js';
import type { HeldDirectory } from './contained-process.js';

/**
 * Which uid each attempt's agent runs as under `sandbox: none` (Witness root): one lease per attempt, taken
 * when the attempt is handed over (before its baseline) and kept by every process the attempt starts (the
 * rounds of a chain, an MCP server and its planner), so they share its files.
 *
 * The lease is held until the attempt's workspace is gone (judged and removed), never less: the agent's
 * files are its uid's, and a later attempt given the same uid while they are still being judged could
 * change them. An attempt is known by its workspace's handle (device and inode): the runner closes that
 * handle when it removes the workspace, so a lease whose handle no longer names its workspace is released
 * at the next lease (its uid's processes killed first), and {@link releaseAttemptUser} frees it at once.
 */

interface Held {
  lease: UidLease;
  fd: number;
}

const leases = new Map<string, Held>();

/** The attempt's agent user: its lease's, taken from `pool` on first use. */
export function attemptUser(pool: UidPool, workspace: HeldDirectory): AgentUser {
  const key = identityOf(workspace.fd);
  const held = leases.get(key);
  // Its handle still names this directory (an inode number freed by a removed workspace may come again).
  if (held !== undefined && tryIdentity(held.fd) === key) return held.lease.user;
  releaseStale();
  const lease = leaseUid(pool);
  leases.set(key, { lease, fd: workspace.fd });
  return lease.user;
}

/** The user an attempt's lease gives, or undefined when it has none. */
export function leasedUser(workspace: HeldDirectory): AgentUser | undefined {
  return leases.get(tryIdentity(workspace.fd) ?? '')?.lease.user;
}

/** Ends the attempt's lease: its uid's processes are killed and the uid is free again. */
export function releaseAttemptUser(workspace: HeldDirectory): void {
  const key = tryIdentity(workspace.fd);
  const held = key === undefined ? undefined : leases.get(key);
  if (key === undefined || held === undefined) return;
  leases.delete(key);
  held.lease.release();
}

function releaseStale(): void {
  for (const [key, held] of leases) {
    if (tryIdentity(held.fd) === key) continue;
    leases.delete(key);
    held.lease.release();
  }
}

function identityOf(fd: number): string {
  const { dev, ino } = fstatSync(fd);
  return `${dev}:${ino}`;
}

function tryIdentity(fd: number): string | undefined {
  try {
    return identityOf(fd);
  } catch {
    return undefined;
  }
}
