import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { splitPath, WorkspaceFiles } from '../../src/targets/workspace-files.js';

describe('WorkspaceFiles', () => {
  let base: string;
  let ws: string;
  let outside: string;

  before(() => {
    base = mkdtempSync(join(tmpdir(), 'witness-wsf-'));
    ws = join(base, 'ws');
    outside = join(base, 'ws2');
    mkdirSync(ws);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'outside secret');
    writeFileSync(join(ws, 'README.md'), 'hello');
    mkdirSync(join(ws, 'docs'));
    writeFileSync(join(ws, 'docs', 'a.txt'), 'A');
    symlinkSync(outside, join(ws, 'escape-dir'));
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'escape-file'));
    symlinkSync('../ws2/secret.txt', join(ws, 'relative-escape'));
    symlinkSync('README.md', join(ws, 'inside-link'));
    linkSync(join(outside, 'secret.txt'), join(ws, 'hardlink.txt'));
    execFileSync('mkfifo', [join(ws, 'pipe')]);
  });
  after(() => rmSync(base, { recursive: true, force: true }));

  it('reads and writes files inside the workspace, creating parent directories', () => {
    const files = new WorkspaceFiles(ws);
    assert.deepEqual(files.readFile('README.md'), { ok: true, text: 'hello' });
    assert.deepEqual(files.readFile('/docs/./a.txt'), { ok: true, text: 'A' });
    assert.deepEqual(files.writeFile('.git/hooks/pre-commit', 'echo hi\n'), {
      ok: true,
      text: 'wrote 8 bytes to ".git/hooks/pre-commit"',
    });
    assert.equal(readFileSync(join(ws, '.git/hooks/pre-commit'), 'utf8'), 'echo hi\n');
    assert.deepEqual(files.writeFile('README.md', 'new'), { ok: true, text: 'wrote 3 bytes to "README.md"' });
    assert.equal(readFileSync(join(ws, 'README.md'), 'utf8'), 'new');
    writeFileSync(join(ws, 'README.md'), 'hello');
  });

  it('refuses ".." before any I/O, so traversal never leaves the workspace', () => {
    const files = new WorkspaceFiles(ws);
    const result = files.writeFile('../ws2/planted.txt', 'x');
    assert.equal(result.ok, false);
    assert.match(result.text, /"\.\." segment/);
    assert.equal(existsSync(join(outside, 'planted.txt')), false);
  });

  it('refuses a symlinked parent directory for reads, writes and listings', () => {
    const files = new WorkspaceFiles(ws);
    assert.equal(files.readFile('escape-dir/secret.txt').ok, false);
    assert.equal(files.writeFile('escape-dir/planted.txt', 'x').ok, false);
    assert.equal(files.listDir('escape-dir').ok, false);
    assert.equal(existsSync(join(outside, 'planted.txt')), false);
  });

  it('refuses symlinked files, absolute or relative, even ones pointing inside', () => {
    const files = new WorkspaceFiles(ws);
    for (const name of ['escape-file', 'relative-escape', 'inside-link']) {
      const read = files.readFile(name);
      assert.deepEqual(read, {
        ok: false,
        text: `refused "${name}": is a symbolic link; links are not followed`,
      });
      assert.equal(files.writeFile(name, 'overwritten').ok, false);
    }
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'outside secret');
  });

  it('refuses a file with a second hard link, which may be shared with a file outside', () => {
    const files = new WorkspaceFiles(ws);
    assert.match(files.readFile('hardlink.txt').text, /hard link/);
    assert.equal(files.writeFile('hardlink.txt', 'overwritten').ok, false);
    assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'outside secret');
  });

  it('refuses a FIFO without stalling on it', () => {
    const files = new WorkspaceFiles(ws);
    assert.match(files.readFile('pipe').text, /not a regular file/);
    assert.equal(files.writeFile('pipe', 'x').ok, false);
  });

  it('lists a directory sorted, marking directories and links', () => {
    const files = new WorkspaceFiles(ws);
    const listing = files.listDir('.');
    assert.equal(listing.ok, true);
    assert.deepEqual(listing.text.split('\n').slice(0, 4), ['.git/', 'README.md', 'docs/', 'escape-dir@']);
  });

  it('bounds reads and writes', () => {
    const files = new WorkspaceFiles(ws, { maxReadBytes: 3, maxWriteBytes: 4 });
    assert.deepEqual(files.readFile('README.md'), {
      ok: true,
      text: 'hel\n(truncated: file is larger than 3 bytes)',
    });
    assert.match(files.writeFile('big.txt', '12345').text, /limit is 4/);
  });

  it('splits paths, dropping "." and treating a leading "/" as the workspace root', () => {
    assert.deepEqual(splitPath('/a/./b'), ['a', 'b']);
    assert.deepEqual(splitPath('.'), []);
    assert.equal(typeof splitPath('a/../b'), 'string');
    assert.equal(typeof splitPath('a\\b'), 'string');
  });
});
