import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { UsageError } from './usage-error.js';

/**
 * The lines of a stream, refusing any line longer than `maxLineBytes` as soon as it grows past the cap:
 * memory stays bounded by the cap, whatever the input. The attack this stops: an export file holding one
 * 600 MB line, which made readline throw `RangeError: Invalid string length` (exit 1, "unexpected
 * failure") after buffering all of it.
 */
export async function* boundedLines(
  stream: Readable,
  maxLineBytes: number,
  name: string,
): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let pending: string[] = [];
  let pendingBytes = 0;
  let lineNumber = 1;
  for await (const chunk of stream) {
    const buffer = chunk as Buffer;
    let start = 0;
    for (;;) {
      const newline = buffer.indexOf(0x0a, start);
      const end = newline === -1 ? buffer.length : newline;
      pendingBytes += end - start;
      if (pendingBytes > maxLineBytes) {
        throw new UsageError(
          `${name} line ${lineNumber} is longer than ${maxLineBytes} bytes, the most an imported record may take; nothing was imported`,
        );
      }
      pending.push(decoder.write(buffer.subarray(start, end)));
      if (newline === -1) break;
      pending.push(decoder.end());
      yield pending.join('').replace(/\r$/, '');
      lineNumber++;
      pending = [];
      pendingBytes = 0;
      start = newline + 1;
    }
  }
  pending.push(decoder.end());
  const last = pending.join('');
  if (last !== '') yield last.replace(/\r$/, '');
}
