import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { boundJsonDepth, TOO_DEEP } from '../../src/models/bounded-json.js';

describe('boundJsonDepth', () => {
  it('copies a value within the bound as it is, keys in their order', () => {
    const value = { b: [1, { c: null, a: 'x' }], a: true, n: 2.5 };
    const copy = boundJsonDepth(value, 3);
    assert.deepEqual(copy, value);
    assert.notEqual(copy, value);
    assert.deepEqual(Object.keys(copy), ['b', 'a', 'n']);
    assert.deepEqual(Object.keys(copy.b[1] as object), ['c', 'a']);
    assert.equal(JSON.stringify(copy), JSON.stringify(value));
  });

  it('replaces each container below the bound with the marker, arrays and objects alike', () => {
    assert.deepEqual(boundJsonDepth({ a: { b: { c: 1 } }, d: [[2]] }, 2), {
      a: { b: TOO_DEEP },
      d: [TOO_DEEP],
    });
    assert.equal(boundJsonDepth([[]], 1)[0], TOO_DEEP);
    assert.equal(boundJsonDepth('text', 0), 'text');
  });

  it('walks a value nested far deeper than the call stack allows', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) value = i % 2 === 0 ? [value] : { a: value };
    assert.deepEqual(boundJsonDepth(value, 5), { a: [{ a: [{ a: TOO_DEEP }] }] });
  });

  it('keeps a `__proto__` key from JSON.parse as a plain key, never as the prototype', () => {
    const copy = boundJsonDepth(JSON.parse('{"__proto__": {"polluted": true}, "k": 1}') as object);
    assert.equal(Object.getPrototypeOf(copy), Object.prototype);
    assert.equal((copy as { polluted?: boolean }).polluted, undefined);
    assert.deepEqual(Object.keys(copy), ['__proto__', 'k']);
    assert.equal(JSON.stringify(copy), '{"__proto__":{"polluted":true},"k":1}');
  });
});
