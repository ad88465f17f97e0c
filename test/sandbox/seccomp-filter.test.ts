import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keyringFilter, keyringFilterSupported } from '../../src/sandbox/seccomp-filter.js';

/**
 * The keyring filter's program, run here by a small classic-BPF interpreter over `struct seccomp_data`
 * (nr at 0, arch at 4): what the kernel would decide for each call. The heavy test
 * (keyring.heavy.test.ts) loads it into a real sandbox; this one checks every entry point of each
 * architecture, which a sandbox on one machine cannot.
 */

const ALLOW = 0x7fff_0000;
const EPERM = 0x0005_0001;
const KILL_PROCESS = 0x8000_0000;

function decide(program: Buffer, arch: number, nr: number): number {
  let accumulator = 0;
  for (let pc = 0; pc * 8 < program.length; ) {
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    pc++;
    if (code === 0x20) accumulator = k === 0 ? nr >>> 0 : k === 4 ? arch >>> 0 : Number.NaN;
    else if (code === 0x54) accumulator = (accumulator & k) >>> 0;
    else if (code === 0x15) pc += accumulator === k ? jt : jf;
    else if (code === 0x06) return k;
    else throw new Error(`unexpected instruction ${code.toString(16)}`);
  }
  throw new Error('the program fell off its end');
}

const X86_64 = 0xc000_003e;
const I386 = 0x4000_0003;
const AARCH64 = 0xc000_00b7;
const ARM = 0x4000_0028;
const X32_BIT = 0x4000_0000;

describe('the keyring seccomp filter', () => {
  it('denies add_key, request_key and keyctl at every x86-64 entry point (64-bit, x32, int 0x80)', () => {
    const program = keyringFilter('x64');
    for (const nr of [248, 249, 250]) {
      assert.equal(decide(program, X86_64, nr), EPERM, `x86-64 ${nr}`);
      assert.equal(decide(program, X86_64, nr | X32_BIT), EPERM, `x32 ${nr}`);
    }
    for (const nr of [286, 287, 288]) assert.equal(decide(program, I386, nr), EPERM, `i386 ${nr}`);
    // Every other call passes: read, openat, clone, execve, and the i386 numbers on the 64-bit table.
    for (const nr of [0, 257, 56, 59, 286, 287, 288, 435]) assert.equal(decide(program, X86_64, nr), ALLOW);
    for (const nr of [3, 5, 11, 248, 249, 250]) assert.equal(decide(program, I386, nr), ALLOW);
  });

  it('denies them on arm64 (and its 32-bit entry point)', () => {
    const program = keyringFilter('arm64');
    for (const nr of [217, 218, 219]) assert.equal(decide(program, AARCH64, nr), EPERM);
    for (const nr of [309, 310, 311]) assert.equal(decide(program, ARM, nr), EPERM);
    for (const nr of [56, 63, 220, 221]) assert.equal(decide(program, AARCH64, nr), ALLOW);
  });

  it('kills a process calling from an architecture it does not know', () => {
    assert.equal(decide(keyringFilter('x64'), AARCH64, 219), KILL_PROCESS);
    assert.equal(decide(keyringFilter('arm64'), X86_64, 250), KILL_PROCESS);
  });

  it('is refused for an architecture it has no table for', () => {
    assert.equal(keyringFilterSupported('mips'), false);
    assert.throws(() => keyringFilter('mips'), /no keyring filter is built for the mips architecture/);
  });
});
