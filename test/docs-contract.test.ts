import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { LIMIT_NAMES, LIMIT_SPECS, limitFlag } from '../src/models/evidence-limits.js';

/** The documents a new user reads agree with the code (tests run from the repository root). */

describe('README and docs/contract.md', () => {
  const readme = readFileSync('README.md', 'utf8');
  const contract = readFileSync('docs/contract.md', 'utf8');
  const packageJson = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };

  it('the README cites no file outside the repository (SPEC.md) and links the contract', () => {
    assert.doesNotMatch(readme, /SPEC\.md/);
    assert.match(readme, /docs\/contract\.md/);
  });

  it('the README states the Node versions package.json supports, and what compiling better-sqlite3 needs', () => {
    // engines: `^20.11.0 || ^24.0.0`, the two lines CI tests; the README names each.
    assert.equal(packageJson.engines.node, '^20.11.0 || ^24.0.0');
    assert.match(readme, /Node\.js 20 \(20\.11 or later\) or 24/);
    assert.match(readme, /better-sqlite3/);
    assert.match(readme, /`python3`, `make` and `g\+\+`/);
  });

  it('the limits table matches the one schema: flag, default and maximum', () => {
    for (const name of LIMIT_NAMES) {
      const { defaultValue, maximum, bounds } = LIMIT_SPECS[name];
      assert.match(
        contract,
        new RegExp(
          `\\| \`${name}\` \\| \`evidence\\.${name}\` \\| \`${limitFlag(name)}\` \\| ${bounds} \\| ${defaultValue} \\| ${maximum} \\|`,
        ),
        name,
      );
    }
  });
});

/** Inline links and images (`[text](target)`, `![alt](target)`) outside code, with their line numbers. */
function relativeLinks(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*(```|~~~)/.test(text)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^()\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not ours to check
      links.push({ target, line: index + 1 });
    }
  });
  return links;
}

/** The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped, spaces to dashes. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const text of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (heading === null) continue;
    const slug = (heading[1] as string)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

describe('links in README.md and docs/*.md', () => {
  const documents = [
    'README.md',
    ...readdirSync('docs')
      .filter((name) => name.endsWith('.md'))
      .map((name) => path.join('docs', name)),
  ];

  it('finds the links it checks (a parser that finds none would pass anything)', () => {
    const found = relativeLinks('See [a](docs/a.md#b), ![i](x.png), [web](https://e.org), `[c](no.md)`.');
    assert.deepEqual(
      found.map((link) => link.target),
      ['docs/a.md#b', 'x.png'],
    );
    assert.deepEqual(
      [...headingAnchors('# The `fast` twins!\n## Seams\n## Seams\n')],
      ['the-fast-twins', 'seams', 'seams-1'],
    );
    assert.ok(relativeLinks(readFileSync('README.md', 'utf8')).length > 5);
  });

  it('every relative link names a file (and heading) that exists', () => {
    const broken: string[] = [];
    for (const document of documents) {
      for (const { target, line } of relativeLinks(readFileSync(document, 'utf8'))) {
        const [file = '', anchor] = target.split('#');
        const resolved = file === '' ? document : path.join(path.dirname(document), decodeURI(file));
        if (!existsSync(resolved)) {
          broken.push(`${document}:${line}: ${target} (no ${resolved})`);
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md')) {
          if (!headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
            broken.push(`${document}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
          }
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
