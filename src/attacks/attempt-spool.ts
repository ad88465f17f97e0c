import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { InvalidOptionError, InvalidRecordError, oneLineError } from '../errors.js';
import { childPath } from '../sources/confined-fs.js';
import type { AttemptRecord } from './attempt-record.js';
import { createRunDirectory, type RunDirectory } from './workspace.js';

/**
 * The finished attempt records of one campaign run, held on disk instead of in the heap until the run is
 * reported. A record is about 10 KiB of objects (its transcript, observations and change set), so a
 * campaign that kept every record until its end grew by ~17 MiB per 1,600 attempts; with the
 * spool, what the process keeps per attempt is two numbers.
 *
 * Each record is stored as its JSON text, appended when it finishes (concurrent attempts reserve their
 * byte range before writing, so writes never overlap). Reading back gives the texts in job order, byte for
 * byte what `JSON.stringify` gave when it was stored. Records carry workspace contents (redacted, but an
 * attacker's payload all the same): the file lives in a fresh private run directory (0700, the file 0600)
 * and {@link AttemptSpool.dispose} removes both. The directory carries the run marker naming this process, so
 * a run killed before its cleanup leaves nothing `witness clean` does not find and remove. The memory holds
 * every record too; the spool only saves the run's reporting from holding them all at once.
 *
 * A record the spool cannot take (a full disk, an I/O error) does not end the run (SPEC §13): a stand-in
 * is kept in memory instead — the record without its transcript, observations and changes, saying why
 * (`storeError`) — and it is read back in its place. Records already spooled stay as they were: each has
 * its own byte range, and a failed write registers nothing.
 */
const SPOOL_FILE = 'records.jsonl';

export class AttemptSpool {
  readonly #directory: RunDirectory;
  readonly #handle: FileHandle;
  /** Byte offset and length of the record at each job index; -1 where no record was stored. */
  #offsets: number[] = [];
  #lengths: number[] = [];
  #end = 0;
  #disposed = false;
  /** The JSON text of each stand-in, by job index (records the file could not take). */
  readonly #standIns = new Map<number, string>();

  private constructor(directory: RunDirectory, handle: FileHandle) {
    this.#directory = directory;
    this.#handle = handle;
  }

  /**
   * A new, empty spool in a private run directory under `parent` (the system temp directory by default,
   * where `witness clean` looks).
   */
  static async create(parent?: string): Promise<AttemptSpool> {
    const directory = await createRunDirectory(parent);
    try {
      // Created through the directory's handle, exclusive and without following a link: nothing another
      // process put at that name in the meantime is opened.
      const handle = await open(
        childPath(directory.fd, Buffer.from(SPOOL_FILE)),
        constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
      return new AttemptSpool(directory, handle);
    } catch (error) {
      directory.dispose();
      throw error;
    }
  }

  /** The real path of the spool's run directory. */
  get directory(): string {
    return this.#directory.path;
  }

  /** How many records are held (stand-ins included). */
  get size(): number {
    return this.#offsets.reduce((count, offset) => (offset >= 0 ? count + 1 : count), this.#standIns.size);
  }

  /**
   * Stores the record of job `index` (each index once) and returns the record as it is held: itself, or
   * the stand-in kept when the file could not take it.
   */
  async put(index: number, record: AttemptRecord): Promise<AttemptRecord> {
    if (this.#disposed) throw new InvalidOptionError('the attempt spool was disposed');
    if (this.#holds(index)) {
      throw new InvalidOptionError(`the attempt spool already holds the record of job ${index}`);
    }
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    // Reserved before the first await: a concurrent put gets the bytes after these.
    const offset = this.#end;
    this.#end += bytes.length;
    while (this.#offsets.length <= index) {
      this.#offsets.push(-1);
      this.#lengths.push(0);
    }
    try {
      let written = 0;
      while (written < bytes.length) {
        const { bytesWritten } = await this.#handle.write(
          bytes,
          written,
          bytes.length - written,
          offset + written,
        );
        written += bytesWritten;
      }
    } catch (error) {
      const standIn = standInOf(record, `this run's spool could not take its record: ${oneLineError(error)}`);
      this.#standIns.set(index, JSON.stringify(standIn));
      return standIn;
    }
    this.#offsets[index] = offset;
    this.#lengths[index] = bytes.length - 1;
    return record;
  }

  #holds(index: number): boolean {
    return ((this.#offsets[index] ?? -1) as number) >= 0 || this.#standIns.has(index);
  }

  /** The stored records' JSON texts in job order (jobs without a record are skipped), one at a time. */
  async *texts(): AsyncGenerator<string> {
    // One read buffer for the whole pass (grown for a larger record): no buffer per record to collect.
    let buffer = Buffer.allocUnsafe(64 * 1024);
    for (let index = 0; index < this.#offsets.length; index++) {
      const standIn = this.#standIns.get(index);
      if (standIn !== undefined) {
        yield standIn;
        continue;
      }
      const offset = this.#offsets[index] as number;
      if (offset < 0) continue;
      const length = this.#lengths[index] as number;
      if (length > buffer.length) buffer = Buffer.allocUnsafe(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await this.#handle.read(buffer, read, length - read, offset + read);
        if (bytesRead === 0)
          throw new InvalidRecordError(`the attempt spool ended inside the record of job ${index}`);
        read += bytesRead;
      }
      yield buffer.toString('utf8', 0, length);
    }
  }

  /** Every stored record, parsed, in job order (for a report that needs them all at once). */
  async records(): Promise<AttemptRecord[]> {
    const out: AttemptRecord[] = [];
    for await (const text of this.texts()) out.push(JSON.parse(text) as AttemptRecord);
    return out;
  }

  /** Closes and removes the spool; safe to call twice. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      await this.#handle.close();
    } finally {
      // Removed through the held directory's identity: a directory swapped in at its path is left alone.
      this.#directory.dispose();
    }
  }
}

/**
 * What the run keeps of a record its spool could not take: everything but the transcript, observations and
 * changes (the bulk), with the reason. The memory may still hold it whole (`witness report --run`).
 */
function standInOf(record: AttemptRecord, reason: string): AttemptRecord {
  const storeError = record.storeError === undefined ? reason : `${record.storeError}; ${reason}`;
  return { ...record, transcript: [], observations: [], changes: [], storeError };
}
