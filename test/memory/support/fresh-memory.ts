import { afterEach, beforeEach } from 'node:test';
import type { Memory } from '../../../src/memory/memory.js';
import { openMemory } from '../../../src/memory/open-memory.js';
import type { TestBackend, TestDatabase } from './backends.js';

/** A database of one backend made for one test, and the memory opened on it. */
export interface FreshMemory {
  readonly database: TestDatabase;
  readonly memory: Memory;
}

/**
 * Runs `body` on a fresh database of `backend` (private to this call: a temporary file, or a new
 * PostgreSQL database) with a memory opened on it, then closes the memory and removes the database,
 * whether `body` returned or threw.
 */
export async function withFreshMemory<T>(
  backend: TestBackend,
  body: (fresh: FreshMemory) => Promise<T>,
): Promise<T> {
  const fresh = await open(backend);
  try {
    return await body(fresh);
  } finally {
    await close(fresh);
  }
}

/**
 * {@link withFreshMemory} around every test of the suite it is called in: each test gets its own fresh
 * database and memory, handed to `use` before the test runs, and closed and removed after it.
 */
export function freshMemoryForEachTest(backend: TestBackend, use: (fresh: FreshMemory) => void): void {
  let current: FreshMemory | undefined;
  beforeEach(async () => {
    current = await open(backend);
    use(current);
  });
  afterEach(async () => {
    const ending = current;
    current = undefined;
    if (ending !== undefined) await close(ending);
  });
}

async function open(backend: TestBackend): Promise<FreshMemory> {
  const database = await backend.fresh();
  try {
    return { database, memory: await openMemory(database.target) };
  } catch (error) {
    await database.cleanup();
    throw error;
  }
}

async function close({ database, memory }: FreshMemory): Promise<void> {
  try {
    await memory.close();
  } finally {
    await database.cleanup();
  }
}
