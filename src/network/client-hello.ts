/**
 * The server name a TLS client asked for (SNI), read from the first bytes of a connection that was
 * redirected to Witness without going through the proxy (SPEC §14): the name is the destination the program
 * meant, where the connection itself only names an address. Only the ClientHello's outer structure is
 * walked, every length checked against the bytes there are; anything else is "not a ClientHello" or
 * "incomplete", never an exception.
 */

/** Bytes of a ClientHello read at most (a larger one is taken as incomplete). */
export const MAX_CLIENT_HELLO_BYTES = 16_384;

export type ClientHelloResult =
  | { kind: 'client_hello'; serverName: string | null }
  | { kind: 'incomplete' }
  | { kind: 'not_tls' };

/** True when the bytes begin like a TLS handshake record (content type 22, version 3.x). */
export function looksLikeTls(bytes: Buffer): boolean {
  return bytes.length >= 2 && bytes[0] === 0x16 && bytes[1] === 0x03;
}

export function readClientHello(bytes: Buffer): ClientHelloResult {
  if (bytes.length < 5)
    return looksLikeTls(bytes) || bytes.length < 2 ? { kind: 'incomplete' } : { kind: 'not_tls' };
  if (!looksLikeTls(bytes)) return { kind: 'not_tls' };
  // The handshake may span several records; join their payloads (all of content type 22).
  const payload: Buffer[] = [];
  let offset = 0;
  let have = 0;
  let needed = Number.POSITIVE_INFINITY;
  while (have < needed) {
    if (offset + 5 > bytes.length) return { kind: 'incomplete' };
    if (bytes[offset] !== 0x16) return { kind: 'not_tls' };
    const length = bytes.readUInt16BE(offset + 3);
    if (offset + 5 + length > bytes.length) return { kind: 'incomplete' };
    payload.push(bytes.subarray(offset + 5, offset + 5 + length));
    have += length;
    offset += 5 + length;
    if (needed === Number.POSITIVE_INFINITY && have >= 4) {
      const head = Buffer.concat(payload);
      if (head[0] !== 0x01) return { kind: 'not_tls' };
      needed = 4 + head.readUIntBE(1, 3);
    }
    if (length === 0) return { kind: 'not_tls' };
  }
  const hello = Buffer.concat(payload).subarray(4, needed);
  return { kind: 'client_hello', serverName: serverNameOf(hello) };
}

/** The host_name of the server_name extension of a ClientHello body, or null when there is none. */
function serverNameOf(hello: Buffer): string | null {
  let at = 2 + 32; // legacy_version, random
  if (at + 1 > hello.length) return null;
  at += 1 + (hello[at] as number); // session id
  if (at + 2 > hello.length) return null;
  at += 2 + hello.readUInt16BE(at); // cipher suites
  if (at + 1 > hello.length) return null;
  at += 1 + (hello[at] as number); // compression methods
  if (at + 2 > hello.length) return null;
  const end = Math.min(hello.length, at + 2 + hello.readUInt16BE(at));
  at += 2;
  while (at + 4 <= end) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    const body = hello.subarray(at + 4, Math.min(end, at + 4 + length));
    at += 4 + length;
    if (type !== 0 || body.length < 2) continue;
    // server_name_list: entries of (type, length, name); type 0 is host_name.
    let entry = 2;
    while (entry + 3 <= body.length) {
      const nameType = body[entry] as number;
      const nameLength = body.readUInt16BE(entry + 1);
      const name = body.subarray(entry + 3, entry + 3 + nameLength);
      entry += 3 + nameLength;
      if (nameType === 0 && name.length === nameLength && nameLength > 0) {
        return name.toString('latin1').toLowerCase();
      }
    }
  }
  return null;
}
