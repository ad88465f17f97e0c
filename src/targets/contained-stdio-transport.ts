import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ContainedProcess } from '../sandbox/contained-process.js';

/**
 * The MCP stdio transport over a contained process (the SDK's own stdio transport spawns the server
 * itself, unsandboxed, and its `close()` kills only the direct child — a background child of the server
 * kept writing to the workspace after the session). Newline-delimited JSON-RPC on stdin/stdout, as the
 * MCP stdio transport specifies; `close()` ends the sandbox, so every process of the server is gone when
 * it resolves.
 */
export class ContainedStdioTransport implements Transport {
  readonly #process: ContainedProcess;
  readonly #buffer = new ReadBuffer();
  #closed = false;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  constructor(process: ContainedProcess) {
    this.#process = process;
  }

  async start(): Promise<void> {
    this.#process.stdout.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    this.#process.stdout.on('error', (error: Error) => this.onerror?.(error));
    void this.#process.ended.then(() => this.#finish());
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new Error('the MCP server has ended'));
        return;
      }
      const json = serializeMessage(message);
      if (this.#process.stdin.write(json)) resolve();
      else this.#process.stdin.once('drain', () => resolve());
    });
  }

  async close(): Promise<void> {
    this.#process.stdin.end();
    await this.#process.stop();
    this.#finish();
  }

  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.clear();
    this.onclose?.();
  }
}
