import { createSocket } from 'node:dgram';
import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type { NamespaceListener } from '../network/attempt-network.js';

/**
 * Listeners on a sandbox's own loopback, opened by Witness itself from outside (SPEC §14, `network:
 * proxy`). The sandbox has its own network namespace (bubblewrap `--unshare-net`) with nothing in it but
 * `lo`; Witness's main thread enters that namespace (setns(2), through koffi), creates each listening
 * socket — which then belongs to the namespace for good — and returns to its own, all in one synchronous
 * step in which nothing else runs. Node's `listen()` without a host creates and binds the socket before
 * it returns, which is what makes this sound; the connections are then accepted by Witness's event loop
 * like any other.
 *
 * What this gives, and why it was chosen over a relay process (socat, or a Node script started inside the
 * sandbox as Claude Code's sandbox runtime does):
 * - the agent cannot kill the relay: it is Witness, a process outside the sandbox's PID namespace (and,
 *   once agents run as an unprivileged uid, another user's);
 * - any uid inside can connect (a TCP port on loopback needs no file permission, unlike a bound unix
 *   socket), and nothing else is reachable: no route leaves the namespace, and the host's loopback
 *   services are in another namespace;
 * - it costs a setns pair and a bind per listener (well under a millisecond), not a process per attempt.
 *
 * Entering a network namespace needs CAP_SYS_ADMIN over it: Witness running as root (CI, containers, the
 * machine bubblewrap namespaces are refused to otherwise) has it; an unprivileged Witness does not, and
 * {@link namespaceListenersAvailable} says so before any attempt runs.
 */

const CLONE_NEWNET = 0x40000000;

interface Setns {
  setns(fd: number, nstype: number): number;
  errno(): number;
}

let binding: Setns | undefined;
let loadError: string | undefined;

function load(): Setns | undefined {
  if (binding !== undefined || loadError !== undefined) return binding;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as {
      load(path: null): { func(signature: string): (...args: number[]) => number };
      errno(): number;
    };
    const setns = koffi.load(null).func('int setns(int fd, int nstype)');
    binding = { setns: (fd, nstype) => setns(fd, nstype), errno: () => koffi.errno() };
  } catch (error) {
    loadError = `setns could not be loaded (${(error as Error).message})`;
  }
  return binding;
}

/** Undefined when listeners can be opened in a sandbox's namespace; otherwise why not. */
export function namespaceListenersAvailable(): string | undefined {
  if (process.platform !== 'linux') return 'network namespaces are Linux only';
  if (load() === undefined) return loadError;
  if (typeof process.getuid === 'function' && process.getuid() !== 0) {
    return 'entering the sandbox network namespace needs root (CAP_SYS_ADMIN); run Witness as root or use network: none or host';
  }
  return undefined;
}

/** A TCP listener (the default) on the sandbox's loopback, or a UDP socket (the name resolver). */
export type NamespaceListenerSpec = NamespaceListener;

/** What {@link listenInNamespace} opened: closed when the attempt ends. */
export interface NamespaceEndpoint {
  close(): void;
}

/**
 * Runs `action` with this thread inside the network namespace of process `pid` (the sandbox's init) and
 * returns to Witness's own namespace before anything else can run on the thread: every socket `action`
 * creates (a listener, a netlink socket) belongs to that namespace for good. Throws when the namespace
 * cannot be entered or left; what `action` throws is thrown after returning.
 */
export function inNetworkNamespace<T>(pid: number, action: () => T): T {
  const setns = load();
  // Internal, like every plain error below: namespaceListenersAvailable() refused, before any attempt, each
  // case a user can cause (not Linux, no koffi, not root); what is left is the kernel refusing now what it
  // allowed then, and it becomes that attempt's error.
  if (setns === undefined) throw new Error(loadError ?? 'setns is unavailable');
  const own = openSync('/proc/self/ns/net', 'r');
  let theirs: number | undefined;
  try {
    theirs = openSync(`/proc/${pid}/ns/net`, 'r');
    // Internal (see above).
    if (setns.setns(theirs, CLONE_NEWNET) !== 0) {
      throw new Error(`setns into the sandbox's network namespace failed (errno ${setns.errno()})`);
    }
    let outcome: { value: T } | { error: unknown };
    try {
      outcome = { value: action() };
    } catch (error) {
      outcome = { error };
    }
    // Back to Witness's own namespace before anything else can run on this thread. Internal (see above);
    // failing here matters more than what `action` threw.
    if (setns.setns(own, CLONE_NEWNET) !== 0) {
      throw new Error(`setns back into Witness's network namespace failed (errno ${setns.errno()})`);
    }
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  } finally {
    closeSync(own);
    if (theirs !== undefined) closeSync(theirs);
  }
}

/**
 * Opens each listener on the loopback of the network namespace of process `pid` (the sandbox's init).
 * Throws when the namespace cannot be entered or a port cannot be bound; opens nothing then.
 */
export function listenInNamespace(pid: number, specs: readonly NamespaceListenerSpec[]): NamespaceEndpoint[] {
  const servers: NamespaceEndpoint[] = [];
  const bound: Array<() => boolean> = [];
  try {
    inNetworkNamespace(pid, () => {
      for (const spec of specs) {
        if (spec.protocol === 'udp') {
          // A lookup that answers at once makes bind() create and bind the socket before it returns;
          // Node's own would answer on the next tick, after we had left the namespace.
          const socket = createSocket({
            type: 'udp4',
            lookup: (address, _family, callback) => callback(null, address, 4),
          });
          socket.on('error', () => undefined);
          socket.on('message', (message, sender) => {
            const answer = spec.onDatagram(message);
            if (answer !== undefined) socket.send(answer, sender.port, sender.address);
          });
          socket.bind({ port: spec.port, address: '127.0.0.1', exclusive: true });
          servers.push({
            close: () => {
              try {
                socket.close();
              } catch {
                // already closed
              }
            },
          });
          bound.push(() => {
            try {
              return socket.address().port === spec.port;
            } catch {
              return false;
            }
          });
        } else {
          const server = createServer({ pauseOnConnect: false }, spec.onConnection);
          server.on('error', () => undefined);
          // No host: Node binds synchronously (a host would be looked up first, after we had left).
          server.listen({ port: spec.port, exclusive: true });
          servers.push(server);
          bound.push(() => server.address() !== null);
        }
      }
    });
    // Internal (see above): the namespace is new, so nothing else holds its ports.
    if (!bound.every((check) => check())) throw new Error('a listener in the sandbox could not be bound');
    return servers;
  } catch (error) {
    for (const server of servers) server.close();
    throw error;
  }
}
