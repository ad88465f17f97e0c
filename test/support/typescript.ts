import { createRequire } from 'node:module';

/**
 * TypeScript's compiler API, loaded by `require`. TypeScript is one 9 MB CommonJS file in a package without
 * a "type" field: imported from an ES module, Node first compiles it to detect its module syntax, then
 * parses it again for its named exports, then compiles it as CommonJS, about 1.2 s of CPU against 0.4 s by
 * `require`, paid by every test process that loads it.
 */
const ts: typeof import('typescript') = createRequire(import.meta.url)('typescript');

export default ts;
