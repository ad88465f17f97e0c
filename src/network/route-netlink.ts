import { createRequire } from 'node:module';

/**
 * A default route through `lo`, added over rtnetlink from the calling thread's network namespace — what
 * `ip route add default dev lo src 127.0.0.1` does, without starting a process. The netlink socket is made
 * and closed within the call, so the route lands in the namespace the thread is in.
 */

const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCK_RAW = 3;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_ROUTE = 0;
const RTM_NEWROUTE = 24;
const NLMSG_ERROR = 2;
const NLM_F_REQUEST = 0x1;
const NLM_F_ACK = 0x4;
const NLM_F_EXCL = 0x200;
const NLM_F_CREATE = 0x400;
const RT_TABLE_MAIN = 254;
const RTPROT_BOOT = 3;
const RT_SCOPE_LINK = 253;
const RTN_UNICAST = 1;
const RTA_OIF = 4;
const RTA_PREFSRC = 7;
const MSG_DONTWAIT = 0x40;

interface Libc {
  socket(domain: number, type: number, protocol: number): number;
  send(fd: number, buffer: Buffer, length: number, flags: number): number;
  recv(fd: number, buffer: Buffer, length: number, flags: number): number;
  close(fd: number): number;
  ifNameToIndex(name: string): number;
  errno(): number;
}

let libc: Libc | undefined;

function load(): Libc {
  if (libc !== undefined) return libc;
  const koffi = createRequire(import.meta.url)('koffi') as {
    load(path: null): { func(signature: string): (...args: unknown[]) => unknown };
    errno(): number;
  };
  const lib = koffi.load(null);
  const socket = lib.func('int socket(int domain, int type, int protocol)');
  const send = lib.func('intptr_t send(int fd, const void *buf, size_t len, int flags)');
  const recv = lib.func('intptr_t recv(int fd, _Out_ void *buf, size_t len, int flags)');
  const close = lib.func('int close(int fd)');
  const ifNameToIndex = lib.func('unsigned int if_nametoindex(const char *name)');
  libc = {
    socket: (domain, type, protocol) => socket(domain, type, protocol) as number,
    send: (fd, buffer, length, flags) => Number(send(fd, buffer, length, flags)),
    recv: (fd, buffer, length, flags) => Number(recv(fd, buffer, length, flags)),
    close: (fd) => close(fd) as number,
    ifNameToIndex: (name) => ifNameToIndex(name) as number,
    errno: () => koffi.errno(),
  };
  return libc;
}

function attribute(type: number, data: Buffer): Buffer {
  const length = 4 + data.length;
  const out = Buffer.alloc((length + 3) & ~3);
  out.writeUInt16LE(length, 0);
  out.writeUInt16LE(type, 2);
  data.copy(out, 4);
  return out;
}

function addressBytes(family: 4 | 6, source: string): Buffer {
  if (family === 4) return Buffer.from(source.split('.').map(Number));
  // Internal: the one IPv6 source used is the loopback.
  if (source !== '::1') throw new Error(`unsupported IPv6 source ${source}`);
  const bytes = Buffer.alloc(16);
  bytes[15] = 1;
  return bytes;
}

/** The RTM_NEWROUTE request for a default route out of interface `index` with source `source`. */
export function defaultRouteRequest(family: 4 | 6, index: number, source: string): Buffer {
  const oif = Buffer.alloc(4);
  oif.writeUInt32LE(index, 0);
  const body = Buffer.concat([
    // struct rtmsg: family, dst_len 0 (default), src_len, tos, table, protocol, scope, type, flags.
    Buffer.from([
      family === 4 ? AF_INET : AF_INET6,
      0,
      0,
      0,
      RT_TABLE_MAIN,
      RTPROT_BOOT,
      RT_SCOPE_LINK,
      RTN_UNICAST,
      0,
      0,
      0,
      0,
    ]),
    attribute(RTA_OIF, oif),
    attribute(RTA_PREFSRC, addressBytes(family, source)),
  ]);
  const header = Buffer.alloc(16);
  header.writeUInt32LE(16 + body.length, 0);
  header.writeUInt16LE(RTM_NEWROUTE, 4);
  header.writeUInt16LE(NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 6);
  header.writeUInt32LE(1, 8);
  return Buffer.concat([header, body]);
}

/** The kernel's answer when `lo` is not up yet (ENETDOWN). */
const ENETDOWN = 100;

/**
 * Adds a default route via `lo` (source the loopback address) in the calling thread's network namespace.
 * Returns false, adding nothing, while `lo` is still down (bubblewrap brings it up just after it reports
 * its child); throws with the kernel's errno when it refuses otherwise (no IPv6 in this kernel).
 */
export function addLoopbackDefaultRoute(family: 4 | 6): boolean {
  const c = load();
  const index = c.ifNameToIndex('lo');
  // Internal: every network namespace has its loopback.
  if (index === 0) throw new Error(`the namespace has no lo (errno ${c.errno()})`);
  const fd = c.socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  // Internal: a netlink socket is refused only when the process is out of descriptors or memory.
  if (fd < 0) throw new Error(`a netlink socket could not be made (errno ${c.errno()})`);
  try {
    const request = defaultRouteRequest(family, index, family === 4 ? '127.0.0.1' : '::1');
    // Internal (see above): a netlink request this small is sent whole or not at all.
    if (c.send(fd, request, request.length, 0) !== request.length) {
      throw new Error(`the route request could not be sent (errno ${c.errno()})`);
    }
    // The kernel answers a request with NLM_F_ACK before send() returns: the ack is already queued.
    const answer = Buffer.alloc(4096);
    const length = c.recv(fd, answer, answer.length, MSG_DONTWAIT);
    // Internal (see above).
    if (length < 20 || answer.readUInt16LE(4) !== NLMSG_ERROR) {
      throw new Error(`no acknowledgement for the route request (errno ${c.errno()})`);
    }
    const error = answer.readInt32LE(16);
    if (error === -ENETDOWN) return false;
    // Internal: the sandbox's namespace is new and Witness is root in it; what is left is a kernel
    // without this address family, which the caller handles.
    if (error !== 0) throw new Error(`the kernel refused the IPv${family} default route (errno ${-error})`);
    return true;
  } finally {
    c.close(fd);
  }
}
