import type { JsonValue } from '../models/record.js';
import type { HttpExchangeEvent, TranscriptEvent } from './transcript.js';

/**
 * The tool calls a model asked for, read back from recorded model exchanges (recording-proxy.ts), for
 * agents whose own output says nothing about them. Understands the responses of the OpenAI Chat
 * Completions, OpenAI Responses, Anthropic Messages and Gemini APIs, as JSON or as SSE streams. A body
 * cut short by the storage bound yields the calls that were complete before the cut.
 */
export function toolCallsFromExchanges(exchanges: readonly HttpExchangeEvent[]): TranscriptEvent[] {
  const events: TranscriptEvent[] = [];
  for (const exchange of exchanges) {
    const body = exchange.response?.body;
    if (body === undefined || body === null) continue;
    const payloads = typeof body === 'string' ? ssePayloads(body) : [body];
    events.push(...callsIn(payloads));
  }
  return events;
}

type Call = { callId: string; name: string; args: string };

/** The calls read so far, in order, and the streamed ones still open by their key (format and index). */
class CallLog {
  readonly calls: Call[] = [];
  readonly byIndex = new Map<string, Call>();

  open(key: string, callId: string, name: string): Call {
    const call = { callId, name, args: '' };
    this.byIndex.set(key, call);
    this.calls.push(call);
    return call;
  }
}

function callsIn(payloads: readonly unknown[]): TranscriptEvent[] {
  const log = new CallLog();
  for (const payload of payloads) {
    if (!isRecord(payload)) continue;
    chatCompletionCalls(payload, log);
    anthropicMessageCalls(payload, log);
    responsesCalls(payload, log);
    geminiCalls(payload, log);
  }
  return log.calls.map((call) => ({
    kind: 'tool_call',
    callId: call.callId,
    name: call.name,
    arguments: parseArguments(call.args),
  }));
}

/** OpenAI Chat Completions: whole message, or streamed deltas keyed by index. */
function chatCompletionCalls(payload: Record<string, unknown>, log: CallLog): void {
  for (const choice of arrayOf(payload.choices)) {
    const message = isRecord(choice.message)
      ? choice.message
      : isRecord(choice.delta)
        ? choice.delta
        : undefined;
    for (const toolCall of arrayOf(message?.tool_calls)) {
      const fn = isRecord(toolCall.function) ? toolCall.function : {};
      const key = `chat:${String(toolCall.index ?? log.calls.length)}`;
      const existing =
        isRecord(choice.delta) && typeof toolCall.id !== 'string' ? log.byIndex.get(key) : undefined;
      const call = existing ?? log.open(key, String(toolCall.id ?? ''), String(fn.name ?? ''));
      if (typeof fn.arguments === 'string') call.args += fn.arguments;
    }
  }
}

/** Anthropic Messages: a whole message, or content_block_start + input_json_delta events. */
function anthropicMessageCalls(payload: Record<string, unknown>, log: CallLog): void {
  if (payload.type === 'message') {
    for (const block of arrayOf(payload.content)) {
      if (block.type === 'tool_use')
        log.open(`whole:${log.calls.length}`, String(block.id ?? ''), String(block.name ?? '')).args =
          JSON.stringify(block.input ?? {});
    }
  }
  if (
    payload.type === 'content_block_start' &&
    isRecord(payload.content_block) &&
    payload.content_block.type === 'tool_use'
  ) {
    const block = payload.content_block;
    log.open(`anthropic:${String(payload.index)}`, String(block.id ?? ''), String(block.name ?? ''));
  }
  if (
    payload.type === 'content_block_delta' &&
    isRecord(payload.delta) &&
    payload.delta.type === 'input_json_delta'
  ) {
    const call = log.byIndex.get(`anthropic:${String(payload.index)}`);
    if (call !== undefined && typeof payload.delta.partial_json === 'string')
      call.args += payload.delta.partial_json;
  }
}

/** OpenAI Responses: function_call output items (whole response, or output_item.done events). */
function responsesCalls(payload: Record<string, unknown>, log: CallLog): void {
  const items =
    payload.object === 'response'
      ? arrayOf(payload.output)
      : payload.type === 'response.output_item.done' && isRecord(payload.item)
        ? [payload.item]
        : [];
  for (const item of items) {
    if (item.type === 'function_call') {
      log.open(`responses:${log.calls.length}`, String(item.call_id ?? ''), String(item.name ?? '')).args =
        String(item.arguments ?? '');
    }
  }
}

/** Gemini: functionCall parts of each candidate. */
function geminiCalls(payload: Record<string, unknown>, log: CallLog): void {
  for (const candidate of arrayOf(payload.candidates)) {
    const content = isRecord(candidate.content) ? candidate.content : {};
    for (const part of arrayOf(content.parts)) {
      if (isRecord(part.functionCall)) {
        const fn = part.functionCall;
        log.open(`gemini:${log.calls.length}`, String(fn.id ?? ''), String(fn.name ?? '')).args =
          JSON.stringify(fn.args ?? {});
      }
    }
  }
}

function parseArguments(text: string): JsonValue {
  if (text === '') return {};
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

/** The JSON `data:` payloads of an SSE text; `[DONE]` and unparsable (cut) payloads are skipped. */
function ssePayloads(text: string): unknown[] {
  const out: unknown[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    const data = line.slice(5).trim();
    if (data === '' || data === '[DONE]') continue;
    try {
      out.push(JSON.parse(data));
    } catch {
      // The storage bound cut this payload; the calls before it stand.
    }
  }
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}
