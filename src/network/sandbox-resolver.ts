import type { Socket } from 'node:net';
import type { BlockedNameLookup } from '../models/network-evidence.js';

/**
 * The name resolver Witness runs inside a `network: proxy` sandbox (SPEC §14), so that what ignores the
 * proxy variables is still seen. A program that opens its own connection (Node 20's `fetch`, a raw
 * socket, `nc`) must first turn the destination's name into an address; the sandbox's `/etc/resolv.conf`
 * names 127.0.0.1, where Witness answers over UDP and TCP on port 53. Each name asked for is recorded as a
 * blocked connection (destination known, port not) and answered NXDOMAIN: the sandbox has no route out,
 * so there is no address worth giving, and the program fails at once instead of timing out. A name that
 * carries data (`<secret>.attacker.example`, DNS exfiltration) is recorded as asked, and goes nowhere.
 *
 * Only the question is read, by hand: a 12-byte header and one name of at most 255 bytes in labels of at
 * most 63, no compression pointer (a query has no earlier name to point at). Anything else — an answer, a
 * truncated or oversized message, several questions — is dropped unanswered, never parsed further. Bounded:
 * `maxNames` distinct names kept (later ones counted), a TCP client gets at most `maxStreamQueries` queries
 * and `idleMs` of silence.
 */

export interface DnsQuestion {
  id: number;
  /** Lower-cased, labels joined by `.`; bytes outside printable ASCII (and `.`, `\`) as `\DDD`. */
  name: string;
  type: number;
  /** Bytes of the message up to the end of the question (the header plus it). */
  end: number;
}

const HEADER_BYTES = 12;
const MAX_NAME_BYTES = 255;
const MAX_MESSAGE_BYTES = 4_096;
const NXDOMAIN = 3;

/** The one question of a standard query, or undefined when `message` is not one. */
export function readDnsQuestion(message: Buffer): DnsQuestion | undefined {
  if (message.length < HEADER_BYTES + 5 || message.length > MAX_MESSAGE_BYTES) return undefined;
  const flags = message.readUInt16BE(2);
  const isResponse = (flags & 0x8000) !== 0;
  const opcode = (flags >> 11) & 0x0f;
  if (isResponse || opcode !== 0 || message.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let offset = HEADER_BYTES;
  let nameBytes = 0;
  for (;;) {
    const length = message[offset];
    if (length === undefined || length > 63) return undefined; // pointers (0xC0) and reserved kinds too
    offset += 1;
    nameBytes += length + 1;
    if (nameBytes > MAX_NAME_BYTES) return undefined;
    if (length === 0) break;
    if (offset + length > message.length) return undefined;
    labels.push(labelText(message.subarray(offset, offset + length)));
    offset += length;
  }
  if (offset + 4 > message.length || labels.length === 0) return undefined;
  return {
    id: message.readUInt16BE(0),
    name: labels.join('.'),
    type: message.readUInt16BE(offset),
    end: offset + 4,
  };
}

function labelText(bytes: Buffer): string {
  let text = '';
  for (const byte of bytes) {
    const printable = byte > 0x20 && byte < 0x7f && byte !== 0x2e && byte !== 0x5c;
    text += printable ? String.fromCharCode(byte).toLowerCase() : `\\${String(byte).padStart(3, '0')}`;
  }
  return text;
}

/** The NXDOMAIN answer to `query`: its id and question echoed, recursion available, no record. */
export function nxdomainAnswer(query: Buffer, question: DnsQuestion): Buffer {
  const answer = Buffer.from(query.subarray(0, question.end));
  const recursionDesired = query.readUInt16BE(2) & 0x0100;
  answer.writeUInt16BE(0x8000 | 0x0400 | recursionDesired | 0x0080 | NXDOMAIN, 2);
  answer.writeUInt16BE(1, 4); // one question
  answer.writeUInt32BE(0, 6); // no answer, no authority
  answer.writeUInt16BE(0, 10); // no additional record (an EDNS option is not echoed)
  return answer;
}

export interface SandboxResolverLimits {
  /** Distinct names kept. Default 1,000. */
  maxNames?: number | undefined;
  /** Queries answered per TCP connection. Default 100. */
  maxStreamQueries?: number | undefined;
  /** A TCP client silent this long is closed. Default 10,000 ms. */
  idleMs?: number | undefined;
}

export class SandboxResolver {
  readonly #names = new Map<string, BlockedNameLookup>();
  readonly #maxNames: number;
  readonly #maxStreamQueries: number;
  readonly #idleMs: number;
  readonly #sockets = new Set<Socket>();
  #dropped = 0;

  constructor(limits: SandboxResolverLimits = {}) {
    this.#maxNames = limits.maxNames ?? 1_000;
    this.#maxStreamQueries = limits.maxStreamQueries ?? 100;
    this.#idleMs = limits.idleMs ?? 10_000;
  }

  /** The answer to one query (a datagram, or one message of a stream); undefined to drop it. */
  answer(message: Buffer): Buffer | undefined {
    const question = readDnsQuestion(message);
    if (question === undefined) return undefined;
    this.#record(question.name);
    return nxdomainAnswer(message, question);
  }

  /** Serves a TCP client: messages framed by a two-byte length (RFC 1035 §4.2.2). */
  acceptStream(socket: Socket): void {
    this.#sockets.add(socket);
    socket.once('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined);
    socket.setTimeout(this.#idleMs, () => socket.destroy());
    let pending = Buffer.alloc(0);
    let answered = 0;
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2) {
        const length = pending.readUInt16BE(0);
        if (length > MAX_MESSAGE_BYTES) {
          socket.destroy();
          return;
        }
        if (pending.length < 2 + length) break;
        const message = pending.subarray(2, 2 + length);
        pending = pending.subarray(2 + length);
        const reply = this.answer(message);
        answered++;
        if (reply === undefined || answered > this.#maxStreamQueries) {
          socket.destroy();
          return;
        }
        const framed = Buffer.alloc(2 + reply.length);
        framed.writeUInt16BE(reply.length, 0);
        reply.copy(framed, 2);
        socket.write(framed);
      }
      if (pending.length > 2 + MAX_MESSAGE_BYTES) socket.destroy();
    });
  }

  /** The names asked for so far, first asked first. */
  blocked(): { blocked: BlockedNameLookup[]; dropped: number } {
    return { blocked: [...this.#names.values()].map((entry) => ({ ...entry })), dropped: this.#dropped };
  }

  close(): void {
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
  }

  #record(name: string): void {
    const known = this.#names.get(name);
    if (known !== undefined) {
      known.lookups++;
      return;
    }
    if (this.#names.size >= this.#maxNames) {
      this.#dropped++;
      return;
    }
    this.#names.set(name, {
      at: new Date().toISOString(),
      via: 'name_lookup',
      host: name,
      port: null,
      lookups: 1,
    });
  }
}
