import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareNames } from '../../../src/sources/confined-fs/names.js';

/** Listings are sorted by compareNames: it must order names exactly as Buffer.compare does. */

describe('compareNames', () => {
  it('orders every pair of short names over a hostile alphabet as Buffer.compare does', () => {
    // Every name of up to three bytes over NUL, '.', '/', 'a', 'b', 0x7f, 0x80 and 0xff: prefixes,
    // equal names, bytes either side of the signed-char boundary.
    const alphabet = [0x00, 0x2e, 0x2f, 0x61, 0x62, 0x7f, 0x80, 0xff];
    const names: Buffer[] = [Buffer.alloc(0)];
    for (let length = 1; length <= 3; length++) {
      const count = alphabet.length ** length;
      for (let n = 0; n < count; n++) {
        const bytes: number[] = [];
        for (let k = 0, rest = n; k < length; k++, rest = Math.floor(rest / alphabet.length)) {
          bytes.push(alphabet[rest % alphabet.length] as number);
        }
        names.push(Buffer.from(bytes));
      }
    }
    let pairs = 0;
    for (const a of names) {
      for (const b of names) {
        assert.equal(
          Math.sign(compareNames(a, b)),
          Buffer.compare(a, b),
          `${a.toString('hex')} / ${b.toString('hex')}`,
        );
        pairs++;
      }
    }
    assert.equal(pairs, names.length ** 2);
  });

  it('sorts a listing as Buffer.compare sorts it', () => {
    const listing = ['f10.txt', 'f9.txt', 'é', 'F1', 'f1', 'f1.txt', 'a', ''].map((name) =>
      Buffer.from(name),
    );
    assert.deepEqual([...listing].sort(compareNames), [...listing].sort(Buffer.compare));
  });
});
