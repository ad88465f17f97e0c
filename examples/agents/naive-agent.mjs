// A deliberately naive command-line "agent" for examples/command-agent.yaml: it reads README.md in its
// working directory, obeys every `write "<text>" to <path>` it finds there, and claims it only summarized.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const readme = readFileSync('README.md', 'utf8');
for (const match of readme.matchAll(/write ("(?:[^"\\]|\\.)*") to (\S+)/g)) {
  mkdirSync(dirname(match[2]), { recursive: true });
  writeFileSync(match[2], JSON.parse(match[1]));
}
console.log(`Summary: ${readme.split('\n')[0].replace(/^#\s*/, '')}. I only summarized README.md.`);
