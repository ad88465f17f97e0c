import {
  type ApiFormat,
  asObject,
  isObject,
  pathEndsWith,
  pieces,
  type ReplyMeta,
  turnTokens,
  WireFormatError,
} from './api-format.js';
import type {
  Conversation,
  ConversationItem,
  ModelTurn,
  OfferedTool,
  ToolCallRequest,
} from './conversation.js';

/**
 * The OpenAI Responses wire format (`POST /v1/responses`), which Codex speaks: input items in, output
 * items out, as one JSON `response` object or as the typed SSE events (`response.created` …
 * `response.completed`). Function tools only; built-in tools (web search, local shell) are not offered
 * to the scripted model.
 */

export const openAiResponsesFormat: ApiFormat = {
  id: 'openai-responses',
  name: 'OpenAI Responses',
  paths: ['/v1/responses'],
  endpointFor(path) {
    if (!pathEndsWith(path, 'responses')) return undefined;
    return {
      kind: 'generate',
      method: 'POST',
      parse(body) {
        const request = parseResponsesRequest(body);
        const meta = (reply: ReplyMeta): ResponsesMeta => ({
          id: `resp_witness_${reply.serial}`,
          model: request.model,
          createdSeconds: reply.createdSeconds,
          inputTokens: reply.inputTokens,
        });
        return {
          ...request,
          render: (turn, reply) => renderResponse(turn, meta(reply)),
          renderStream: (turn, reply) => renderResponseEvents(turn, meta(reply)),
        };
      },
    };
  },
  renderError: (_status, message, type) => ({ error: { message, type, param: null, code: null } }),
};

interface ParsedResponsesRequest {
  model: string;
  stream: boolean;
  conversation: Conversation;
}

function parseResponsesRequest(body: unknown): ParsedResponsesRequest {
  const request = asObject(body, 'the request body');
  const system: string[] = typeof request.instructions === 'string' ? [request.instructions] : [];
  const items: ConversationItem[] = [];
  const input =
    typeof request.input === 'string'
      ? [{ type: 'message', role: 'user', content: request.input }]
      : request.input;
  if (!Array.isArray(input)) throw new WireFormatError('input must be a string or an array of items');
  for (const raw of input) {
    const item = asObject(raw, 'an input item');
    const type = item.type ?? (item.role !== undefined ? 'message' : undefined);
    if (type === 'message') {
      const text = partsText(item.content);
      if (item.role === 'user') items.push({ kind: 'user', text });
      else if (item.role === 'assistant') items.push({ kind: 'assistant', text, calls: [] });
      else system.push(text);
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const call: ToolCallRequest = {
        id: String(item.call_id ?? ''),
        name: String(item.name ?? ''),
        arguments:
          type === 'function_call' ? parseArguments(item.arguments) : { input: String(item.input ?? '') },
      };
      const last = items.at(-1);
      if (last?.kind === 'assistant') last.calls.push(call);
      else items.push({ kind: 'assistant', text: '', calls: [call] });
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      items.push({ kind: 'tool_result', callId: String(item.call_id ?? ''), text: outputText(item.output) });
    }
  }
  const tools: OfferedTool[] = Array.isArray(request.tools)
    ? request.tools.flatMap((raw) => {
        if (!isObject(raw) || raw.type !== 'function' || typeof raw.name !== 'string') return [];
        return [
          {
            name: raw.name,
            description: typeof raw.description === 'string' ? raw.description : '',
            parameters: isObject(raw.parameters) ? raw.parameters : {},
          },
        ];
      })
    : [];
  return {
    model: typeof request.model === 'string' ? request.model : 'witness-scripted',
    stream: request.stream === true,
    conversation: { system: system.join('\n'), items, tools },
  };
}

interface ResponsesMeta {
  id: string;
  model: string;
  createdSeconds: number;
  inputTokens: number;
}

function outputItem(turn: ModelTurn, meta: ResponsesMeta, status: string): Record<string, unknown> {
  return turn.kind === 'text'
    ? {
        type: 'message',
        id: `${meta.id}_msg`,
        status,
        role: 'assistant',
        content: status === 'completed' ? [{ type: 'output_text', text: turn.text, annotations: [] }] : [],
      }
    : {
        type: 'function_call',
        id: `${meta.id}_fc`,
        status,
        call_id: turn.call.id,
        name: turn.call.name,
        arguments: status === 'completed' ? JSON.stringify(turn.call.arguments) : '',
      };
}

function renderResponse(turn: ModelTurn, meta: ResponsesMeta, status = 'completed'): Record<string, unknown> {
  const outputTokens = turnTokens(turn);
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdSeconds,
    status,
    model: meta.model,
    output: status === 'completed' ? [outputItem(turn, meta, 'completed')] : [],
    parallel_tool_calls: false,
    tool_choice: 'auto',
    tools: [],
    usage:
      status === 'completed'
        ? {
            input_tokens: meta.inputTokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: outputTokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: meta.inputTokens + outputTokens,
          }
        : null,
  };
}

/** The typed SSE events of a streamed response, in order. */
function renderResponseEvents(turn: ModelTurn, meta: ResponsesMeta): Array<{ event: string; data: string }> {
  const events: Array<{ event: string; data: string }> = [];
  const emit = (type: string, data: Record<string, unknown>) =>
    events.push({ event: type, data: JSON.stringify({ type, sequence_number: events.length, ...data }) });
  emit('response.created', { response: renderResponse(turn, meta, 'in_progress') });
  emit('response.in_progress', { response: renderResponse(turn, meta, 'in_progress') });
  const itemId = outputItem(turn, meta, 'in_progress').id;
  emit('response.output_item.added', { output_index: 0, item: outputItem(turn, meta, 'in_progress') });
  if (turn.kind === 'text') {
    const part = { type: 'output_text', text: '', annotations: [] };
    emit('response.content_part.added', { item_id: itemId, output_index: 0, content_index: 0, part });
    for (const delta of pieces(turn.text)) {
      emit('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta });
    }
    emit('response.output_text.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      text: turn.text,
    });
    emit('response.content_part.done', {
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { ...part, text: turn.text },
    });
  } else {
    const args = JSON.stringify(turn.call.arguments);
    for (const delta of pieces(args))
      emit('response.function_call_arguments.delta', { item_id: itemId, output_index: 0, delta });
    emit('response.function_call_arguments.done', { item_id: itemId, output_index: 0, arguments: args });
  }
  emit('response.output_item.done', { output_index: 0, item: outputItem(turn, meta, 'completed') });
  emit('response.completed', { response: renderResponse(turn, meta) });
  return events;
}

function partsText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .flatMap((part) => (isObject(part) && typeof part.text === 'string' ? [part.text] : []))
    .join('\n');
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return partsText(output);
  if (isObject(output) && typeof output.content === 'string') return output.content;
  return output === undefined ? '' : JSON.stringify(output);
}

function parseArguments(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'string' || raw === '') return {};
  try {
    const value: unknown = JSON.parse(raw);
    return isObject(value) ? value : {};
  } catch {
    return {};
  }
}
