import type { AgentApi } from '../targets/presets/agent-preset.js';
import type { Conversation, ModelTurn } from './conversation.js';

/**
 * The seam between `witness model serve` and the wire APIs it speaks. Each API format says which request
 * paths are its own and, for each, what to do: parse a request into the one {@link Conversation} the
 * scripted model reads, and render the model's {@link ModelTurn} back as that API's reply (one JSON
 * object or a stream of server-sent events). The server (model-server.ts) knows nothing of any format's
 * shapes; a new API is one more module in the registry (api-formats.ts).
 *
 * ```ts
 * const endpoint = openAiChatFormat.endpointFor('/v1/chat/completions');
 * // endpoint.kind === 'generate': endpoint.parse(body).conversation feeds the model
 * ```
 */

export interface ApiFormat {
  /** The API's id, as agent presets name the API they speak. */
  readonly id: AgentApi;
  /** The API's name as people know it ("OpenAI Chat Completions"), shown in `witness model serve --help`. */
  readonly name: string;
  /** The paths it serves, as documentation (`/v1/chat/completions`). */
  readonly paths: readonly string[];
  /** What this format does at `path` (a prefix before `/v1` allowed), or undefined when it is not its own. */
  endpointFor(path: string): Endpoint | undefined;
  /** The API's error body for an HTTP status, a message and an error type (`invalid_request_error`). */
  renderError(status: number, message: string, type: string): unknown;
}

/** One endpoint of a format: a model turn, a token count, or the model list. */
export type Endpoint =
  | { kind: 'generate'; method: 'POST'; parse(body: unknown): GenerateRequest }
  | { kind: 'count_tokens'; method: 'POST'; count(body: unknown): unknown }
  | { kind: 'models'; method: 'GET'; list(models: readonly string[]): unknown };

/** A parsed request for a model turn, holding how its reply must be rendered. */
export interface GenerateRequest {
  /** The model the client asked for (for Gemini, the one its path names). */
  model: string;
  stream: boolean;
  conversation: Conversation;
  /** The reply as one JSON object. */
  render(turn: ModelTurn, meta: ReplyMeta): unknown;
  /** The reply as server-sent events, in order. */
  renderStream(turn: ModelTurn, meta: ReplyMeta): ServerSentEvent[];
}

export interface ReplyMeta {
  /** Requests served so far by this server, this one included: ids are built from it. */
  serial: number;
  /** Seconds since the epoch, for `created` fields. */
  createdSeconds: number;
  /** A rough count of the request's tokens. */
  inputTokens: number;
}

/** One SSE frame: an optional event name and its data line; `lineEnd` is `\n` unless the API uses `\r\n`. */
export interface ServerSentEvent {
  event?: string | undefined;
  data: string;
  lineEnd?: '\n' | '\r\n' | undefined;
}

/** The SSE text of one frame. */
export function frameEvent({ event, data, lineEnd = '\n' }: ServerSentEvent): string {
  return `${event === undefined ? '' : `event: ${event}${lineEnd}`}data: ${data}${lineEnd}${lineEnd}`;
}

/** A malformed request body: answered 400 in the API's own error shape. */
export class WireFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireFormatError';
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!isObject(value)) throw new WireFormatError(`${what} must be a JSON object`);
  return value;
}

/** A rough token count (four characters a token): enough for clients that budget their context. */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

export function turnTokens(turn: ModelTurn): number {
  return estimateTokens(turn.kind === 'text' ? turn.text : JSON.stringify(turn.call.arguments));
}

/** Splits streamed text into pieces of at most 24 characters, so clients must reassemble deltas. */
export function pieces(text: string): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += 24) out.push(text.slice(index, index + 24));
  return out.length === 0 ? [''] : out;
}

/** A path's last segments match `tail` (`chat/completions`), whatever prefix came before `/v1`. */
export function pathEndsWith(path: string, tail: string): boolean {
  return path === tail || path.endsWith(`/${tail}`);
}
