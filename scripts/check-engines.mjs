#!/usr/bin/env node
// Checks that every installed production and development dependency supports every Node.js version line
// Witness is tested on (package.json `engines.node`), by the dependency's own `engines.node`: a package that
// needs a newer Node.js than we test must be caught here, at install time, not by a user's crash.
//
//   node scripts/check-engines.mjs
//
// Exit 0 when all agree; 1 with one line per disagreement. A dependency without `engines.node` makes no
// claim and is accepted (the test runs under each tested version are what prove it works).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const semver = require('semver');
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const ours = pkg.engines?.node;
if (typeof ours !== 'string' || semver.validRange(ours) === null) {
  console.error(`check-engines: package.json engines.node is missing or not a semver range: ${ours}`);
  process.exit(1);
}
const problems = [];
for (const name of Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).sort()) {
  let manifest;
  try {
    manifest = JSON.parse(
      readFileSync(require.resolve(`${name}/package.json`, { paths: [process.cwd()] }), 'utf8'),
    );
  } catch {
    // Packages whose exports hide package.json: read it from node_modules directly.
    manifest = JSON.parse(
      readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), 'utf8'),
    );
  }
  const theirs = manifest.engines?.node;
  if (theirs === undefined) continue;
  if (semver.validRange(theirs) === null) {
    problems.push(`${name}@${manifest.version}: engines.node ${JSON.stringify(theirs)} is not a valid range`);
  } else if (!semver.subset(ours, theirs)) {
    problems.push(`${name}@${manifest.version} needs node ${theirs}; Witness supports ${ours}`);
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`check-engines: ${problem}`);
  console.error(
    'check-engines: pin a version that supports every tested Node.js line, or change what is tested.',
  );
  process.exit(1);
}
console.error(`check-engines: every dependency supports node ${ours}`);
